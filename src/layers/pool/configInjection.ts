/**
 * The `config` hook's part of the engine (SPEC §4): the pool's agents and slot variants injected into
 * opencode's config object, and injected again when the pool file is reloaded; the price advisory
 * follows each (US-23).
 */
import { Effect } from "effect"
import { slotsOf, type EngineState } from "../../core/engine/state.js"
import { injectConfig } from "../../core/inject.js"
import type { JsonRecord } from "../../core/json.js"
import { describeSlots, type Slot } from "../../core/pool/pool.js"
import type { ResolvedPool } from "../../core/source.js"
import { PoolConfig } from "../../services/pool/PoolConfig.js"
import { spanned, traced } from "../hotPath.js"

interface InjectionDeps {
  readonly stateNow: Effect.Effect<EngineState>
  readonly applyPool: (pool: ResolvedPool) => Effect.Effect<void>
  readonly advise: (slots: ReadonlyArray<Slot>) => Effect.Effect<void>
  readonly delegate: boolean
  readonly contextMap: boolean
}

export const makeConfigInjection = (deps: InjectionDeps) =>
  Effect.gen(function* () {
    const poolConfig = yield* PoolConfig
    let lastConfig: JsonRecord | undefined

    const bindVariants = (cfg: JsonRecord, state: EngineState) => {
      const { info, warnings, config: injected } = injectConfig(cfg, slotsOf(state), state.origin, { delegate: deps.delegate, contextMap: deps.contextMap })
      cfg.agent = injected.agent
      if (injected.provider !== undefined) cfg.provider = injected.provider
      if (injected.command !== undefined) cfg.command = injected.command
      return { info, warnings }
    }

    const configure = traced("PoolEngine.configure")(function* (cfg: JsonRecord) {
      lastConfig = cfg
      const { info, warnings } = bindVariants(cfg, yield* deps.stateNow)
      for (const w of warnings) yield* Effect.logWarning(w)
      yield* Effect.logInfo(info)
      yield* deps.advise(slotsOf(yield* deps.stateNow))
    })

    const reload = Effect.gen(function* () {
      const pool = yield* poolConfig.load
      yield* deps.applyPool(pool)
      if (lastConfig !== undefined) for (const w of bindVariants(lastConfig, yield* deps.stateNow).warnings) yield* Effect.logWarning(w)
      yield* Effect.logInfo(`pool reloaded from ${pool.origin}: ${describeSlots(pool.slots)}`)
      yield* deps.advise(pool.slots)
    }).pipe(spanned("PoolEngine.reload"))

    return { configure, reload }
  })
