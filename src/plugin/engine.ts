/**
 * The plugin's programs: each hook maps to one of these. They read shared state through the services,
 * ask the pure core for a decision, and write the result back (SPEC §5–§8). Assembled here from the
 * modules beside this one.
 */
import { Clock, Effect } from "effect"
import type { ResolvedPool } from "../core/source.js"
import { renderStatus, statusView } from "../core/status.js"
import { makeContext, type EngineConfig } from "./context.js"
import { makeReaper } from "./reaper.js"
import { makeSessions } from "./sessions.js"
import { makeSignals } from "./signals.js"
import { makeSpawns } from "./spawns.js"
import type { PoolState } from "./state.js"

export type { EngineConfig } from "./context.js"
export { reaperLoop } from "./reaper.js"
export { VariantRefused } from "./spawns.js"

export const makeEngine = (state: PoolState, config: EngineConfig) =>
  Effect.gen(function* () {
    const ctx = yield* makeContext(state, config)
    const { log, claims, lock, trace, self, readTable } = ctx
    const reaper = makeReaper(ctx)
    const spawns = makeSpawns(ctx, reaper)
    const signals = makeSignals(ctx, spawns.release)
    const sessions = makeSessions(ctx, spawns)

    const applyPool = (pool: ResolvedPool) =>
      Effect.gen(function* () {
        state.slots = pool.slots
        state.origin = pool.origin
        state.poolWarnings = pool.warnings
        for (const w of pool.warnings) yield* log.log("warn", w)
        const now = yield* Clock.currentTimeMillis
        yield* trace.input({ at: now, type: "pool", slots: pool.slots.map((s) => ({ model: s.model, weight: s.weight })) })
      })

    const statusText = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const peers = yield* claims.readPeers(now).pipe(Effect.orElseSucceed(() => []))
      const table = yield* readTable(now)
      const processes = [{ pid: self.pid, host: self.host, reaped: state.reaped, claims: state.claims, self: true }, ...peers]
      const view = statusView({ origin: state.origin, slots: state.slots, processes, cooldowns: table, now, warnings: state.poolWarnings })
      yield* trace.input({ at: now, type: "status" })
      const failOpens = yield* lock.failOpens
      return `${renderStatus(view, { now, processes, reaper: { intervalMs: config.reapMs, lastSweepAt: state.lastSweepAt } })}${failOpens > 0 ? `\nlock fail-opens: ${failOpens}` : ""}`
    })

    const dispose = Effect.gen(function* () {
      state.claims = []
      yield* claims.removeOwn
    })

    return {
      beforeTask: spawns.beforeTask,
      release: spawns.release,
      sweep: reaper.sweep,
      timerSweep: reaper.timerSweep,
      onError: signals.onError,
      onRetry: signals.onRetry,
      ...sessions,
      applyPool,
      statusText,
      dispose
    }
  })

export type Engine = Effect.Effect.Success<ReturnType<typeof makeEngine>>
