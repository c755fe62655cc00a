/** Aborting a session and confirming it stopped (SPEC §8.3). */
import { Context, type Effect, Schema } from "effect"
import { callFields, sharedCallText } from "./callFailure.js"

/**
 * An abort that failed or was not confirmed, with what failed as fields; `reason` is the text its log
 * lines show. Made on the reaper's path: its makers skip the constructor's validation (`new AbortFailed(fields, true)`).
 */
export class AbortFailed extends Schema.TaggedError<AbortFailed>()("AbortFailed", {
  problem: Schema.Literal("no-client", "threw", "timeout", "http", "not-aborted", "still-running", "other"),
  ...callFields
}) {
  get reason(): string {
    switch (this.problem) {
      case "no-client":
      case "threw":
      case "timeout":
      case "other":
        return sharedCallText(this.problem, this)
      case "http":
        return `HTTP ${this.status ?? "error"}`
      case "not-aborted":
        return "server says session was not aborted"
      case "still-running":
        return "session still running after abort"
    }
  }
  override get message(): string {
    return this.reason
  }
}

export interface AbortClientService {
  /** Succeeds only once the session is verified stopped (absent from the status map, or idle). */
  readonly abort: (sessionId: string) => Effect.Effect<void, AbortFailed>
}

export class AbortClient extends Context.Tag("opencode-pool/AbortClient")<AbortClient, AbortClientService>() {}
