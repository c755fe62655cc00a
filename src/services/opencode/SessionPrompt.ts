/**
 * Continuing a root session on another model (issue 12, US-50): waiting until opencode no longer runs
 * it, then sending it a user message on a given model; and creating a session of the plugin's own (a
 * context map refresh, issue 23). Each fails with the reason, never throws.
 */
import { Context, Data, type Effect } from "effect"

export class PromptFailed extends Data.TaggedError("PromptFailed")<{ readonly reason: string }> {}

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
