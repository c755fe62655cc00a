/** Aborting a session and confirming it stopped (SPEC §8.3). */
import { Context, Data, type Effect } from "effect"

export class AbortFailed extends Data.TaggedError("AbortFailed")<{ readonly reason: string }> {}

export interface AbortClientService {
  /** Succeeds only once the session is verified stopped (absent from the status map, or idle). */
  readonly abort: (sessionId: string) => Effect.Effect<void, AbortFailed>
}

export class AbortClient extends Context.Tag("opencode-pool/AbortClient")<AbortClient, AbortClientService>() {}
