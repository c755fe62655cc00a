/** Reading one session's place in its tree from opencode (SPEC §10.1: `session.get` when the root is not known). */
import { Context, type Effect, Schema } from "effect"
import type { SessionFacts } from "../../core/session/facts.js"

export type { SessionFacts } from "../../core/session/facts.js"

/**
 * A lookup that failed, with what failed as fields; `reason` is the text the notification machine and
 * its log show. Made per event that misses: its makers skip the constructor's validation (`new LookupFailed(fields, true)`).
 */
export class LookupFailed extends Schema.TaggedError<LookupFailed>()("LookupFailed", {
  problem: Schema.Literal("no-client", "threw", "timeout", "unreadable", "not-found"),
  /** The session looked up. */
  sessionId: Schema.optional(Schema.String),
  /** The wait that ran out, in ms (timeout). */
  ms: Schema.optional(Schema.Number),
  /** The cause's text (threw). */
  detail: Schema.optional(Schema.String)
}) {
  get reason(): string {
    switch (this.problem) {
      case "no-client":
        return "no opencode client"
      case "threw":
        return this.detail ?? ""
      case "timeout":
        return `timed out after ${this.ms ?? 0} ms`
      case "unreadable":
        return "unreadable answer"
      case "not-found":
        return "session not found"
    }
  }
  override get message(): string {
    return this.reason
  }
}

export interface SessionLookupService {
  readonly lookup: (id: string) => Effect.Effect<SessionFacts, LookupFailed>
}

export class SessionLookup extends Context.Tag("opencode-pool/SessionLookup")<SessionLookup, SessionLookupService>() {}
