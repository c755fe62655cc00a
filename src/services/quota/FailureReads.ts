/**
 * The error bodies of provider answers still being read (issue 19). The quota-sensing fetch wrapper
 * reads a failed answer's body from a clone and hands it to the engine; opencode's retry status for the
 * same session follows at once and carries only a message, so the event hook waits for that body to
 * reach the engine first, FAILURE_WAIT_MS at most (on the Clock: a test drives it with the TestClock).
 * Every method is the span `FailureReads.<method>`.
 */
import { Context, type Effect } from "effect"

/** How long a retry status waits for the error body of its session that is still being read. */
export const FAILURE_WAIT_MS = 500

export interface FailureReadsService {
  /**
   * `read` (the body read and handed to the engine) runs in the background as `session`'s read; a later
   * read of the same session is the one waited for (the earlier still runs to its end). Returns at once.
   */
  readonly started: (session: string, read: Effect.Effect<void>) => Effect.Effect<void>
  /** Until `session`'s read has ended, FAILURE_WAIT_MS at most; at once when none runs. */
  readonly awaited: (session: string) => Effect.Effect<void>
}

export class FailureReads extends Context.Tag("opencode-pool/FailureReads")<FailureReads, FailureReadsService>() {}
