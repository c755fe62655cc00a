/**
 * How every hook runs its effects on the plugin's runtime: caught whole (a failure or defect is one
 * `<what> failed: …` line of the app log, never an exception into opencode), and nothing at all once
 * the hooks are disposed.
 */
import { Effect, type Either } from "effect"
import { causeLine } from "../../core/causeLine.js"
import type { AppLogService, LogLevel } from "../../services/opencode/AppLog.js"
import type { HookRuntime, HookServices } from "../compose.js"

export interface Runner {
  /** Whether `dispose` was called: the hooks then do nothing. */
  readonly disposed: () => boolean
  /** `eff` on the runtime, its failure logged as `<what> failed: …`; `undefined` when it failed or after dispose. */
  readonly run: <A>(eff: Effect.Effect<A, never, HookServices>, what: string) => Promise<A | undefined>
  /** `eff` on the runtime, synchronously, for the callers that cannot wait; `undefined` when it failed or after dispose. */
  readonly runNow: <A>(eff: Effect.Effect<A, never, HookServices>, what: string) => A | undefined
  /** `eff` as `run` runs it, as an effect: for a fiber that must check `disposed` when it gets there. */
  readonly guarded: <A, R>(eff: Effect.Effect<A, never, R>, what: string) => Effect.Effect<A | undefined, never, R>
  /** `eff`'s failure as a value (a refusal the hook throws), its defects dropped; `undefined` when the run itself failed. */
  readonly attempt: <A, E>(eff: Effect.Effect<A, E, HookServices>) => Promise<Either.Either<A | void, E> | undefined>
  readonly log: (level: LogLevel, message: string) => Promise<unknown>
  /** Ends the runtime once. */
  readonly dispose: () => Promise<void>
}

/** The runner of `runtime`, logging to `appLog` (the runtime's). */
export const makeRunner = (runtime: HookRuntime, appLog: AppLogService): Runner => {
  let disposed = false
  const caught = <A, R>(eff: Effect.Effect<A, never, R>, what: string): Effect.Effect<A | undefined, never, R> =>
    eff.pipe(Effect.catchAllCause((cause) => Effect.as(appLog.log("error", `${what} failed: ${causeLine(cause)}`), undefined)))
  const run = async <A>(eff: Effect.Effect<A, never, HookServices>, what: string): Promise<A | undefined> => {
    if (disposed) return undefined
    return runtime.runPromise(caught(eff, what)).catch(() => undefined)
  }
  return {
    disposed: () => disposed,
    run,
    runNow: (eff, what) => {
      if (disposed) return undefined
      try {
        return runtime.runSync(caught(eff, what))
      } catch {
        return undefined
      }
    },
    guarded: (eff, what) => Effect.suspend(() => (disposed ? Effect.succeed(undefined) : caught(eff, what))),
    attempt: (eff) => runtime.runPromise(eff.pipe(Effect.catchAllDefect(() => Effect.void), Effect.either)).catch(() => undefined),
    log: (level, message) => run(appLog.log(level, message), "log"),
    dispose: async () => {
      if (disposed) return
      disposed = true
      await runtime.dispose().catch(() => undefined)
    }
  }
}
