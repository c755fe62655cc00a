/** The plugin's notification decisions (SPEC §10.1): opencode events in, notifications out. */
import { Context, type Effect } from "effect"
import type { NotifyInput } from "../../core/notify/machine.js"

export interface NotifyEngineService {
  /**
   * Applies one input. The decision is taken synchronously when the effect starts (opencode does not
   * await event hooks, so concurrent events keep their arrival order); sends, closes and lookups run
   * in the background and never fail.
   */
  readonly apply: (input: NotifyInput) => Effect.Effect<void>
  /** Waits until every send, close and lookup started so far has finished (tests, shutdown). */
  readonly settle: Effect.Effect<void>
}

export class NotifyEngine extends Context.Tag("opencode-pool/NotifyEngine")<NotifyEngine, NotifyEngineService>() {}
