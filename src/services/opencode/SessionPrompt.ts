/**
 * Continuing a root session on another model (issue 12, US-50): waiting until opencode no longer runs
 * it, then sending it a user message on a given model; and creating a session of the plugin's own (a
 * context map refresh, issue 23). Each fails with the reason, never throws.
 */
import { Context, type Effect, Schema } from "effect"
import { wholeSeconds } from "../../core/time.js"
import { callFields, sharedCallText } from "./callFailure.js"

/** A continuation or a create that failed, with what failed as fields; `reason` is the text its log lines show. */
export class PromptFailed extends Schema.TaggedError<PromptFailed>()("PromptFailed", {
  problem: Schema.Literal("no-client", "threw", "timeout", "http", "still-running", "no-session-id", "other"),
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
        return `${this.call ?? ""}: HTTP ${this.status ?? "error"}`
      case "still-running":
        return `session still running after ${wholeSeconds(this.ms ?? 0)}`
      case "no-session-id":
        return "create: the answer names no session id"
    }
  }
  override get message(): string {
    return this.reason
  }
}

export interface PromptTarget {
  readonly providerID: string
  readonly modelID: string
}

export interface SessionPromptService {
  /** Succeeds once the session is neither busy nor retrying (absent from the status map, or idle). */
  readonly whenIdle: (sessionId: string) => Effect.Effect<void, PromptFailed>
  /** Creates a root session titled `title` (issue 23: a context map refresh run) and gives its id. */
  readonly create: (title: string) => Effect.Effect<string, PromptFailed>
  /** Sends `text` as a user message of the session on `model` (and `agent`, when known), without waiting for the reply. */
  readonly prompt: (sessionId: string, model: PromptTarget, agent: string | undefined, text: string) => Effect.Effect<void, PromptFailed>
}

export class SessionPrompt extends Context.Tag("opencode-pool/SessionPrompt")<SessionPrompt, SessionPromptService>() {}

/** `provider/model` → the SDK's model reference (the model id may itself contain `/`). */
export const promptTarget = (model: string): PromptTarget => {
  const slash = model.indexOf("/")
  return { providerID: model.slice(0, slash), modelID: model.slice(slash + 1) }
}
