/**
 * opencode hooks → engine programs. Every hook catches everything, except `tool.execute.before`
 * refusing a hand-named slot variant, which must fail the task call (SPEC §6.3).
 */
import type { Hooks } from "@opencode-ai/plugin"
import { Effect, Fiber, type Layer, ManagedRuntime } from "effect"
import { mkdirSync } from "node:fs"
import { describeSlots } from "../core/pool.js"
import { injectConfig } from "../core/inject.js"
import { asString, isRecord, type JsonRecord } from "../core/json.js"
import type { Settings } from "../core/options.js"
import { AppLog } from "../services/AppLog.js"
import { PoolConfig } from "../services/PoolConfig.js"
import { makeEngine, reaperLoop, VariantRefused, type Engine } from "./engine.js"
import { onEvent } from "./events.js"
import type { PoolServices } from "./services.js"
import { emptyState } from "./state.js"
import { RELOAD_DEBOUNCE_MS, watchPaths } from "./watch.js"

export type { PoolServices } from "./services.js"

const minutes = (ms: number): string => (ms % 60_000 === 0 ? `${ms / 60_000}m` : `${Math.round(ms / 1000)}s`)

export interface HookOptions {
  readonly settings: Settings
  readonly warnings: ReadonlyArray<string>
  /** Created empty at start (SPEC §2.1); failures are silent. */
  readonly configDir?: string
}

/** Builds the hooks over the given layer (live in opencode, memory layers in tests). */
export const makeHooks = async (layer: Layer.Layer<PoolServices>, o: HookOptions): Promise<Hooks & { readonly engine: Engine }> => {
  const runtime = ManagedRuntime.make(layer)
  const state = emptyState()
  const engine = await runtime.runPromise(makeEngine(state, { timing: { hangMinAgeMs: o.settings.hangMinAgeMs, hangSilenceMs: o.settings.hangSilenceMs }, reapMs: o.settings.reapMs }))
  const run = <A>(eff: Effect.Effect<A, never, PoolServices>, what: string): Promise<A | undefined> =>
    runtime.runPromise(eff.pipe(Effect.catchAllCause((cause) => Effect.as(Effect.flatMap(AppLog, (l) => l.log("error", `${what} failed: ${cause.toString().split("\n")[0]}`)), undefined)))).catch(() => undefined)

  if (o.configDir !== undefined) {
    try {
      mkdirSync(o.configDir, { recursive: true })
    } catch {
      // silent by design
    }
  }
  await run(
    Effect.gen(function* () {
      const log = yield* AppLog
      for (const w of o.warnings) yield* log.log("warn", w)
      const pool = yield* (yield* PoolConfig).load
      yield* engine.applyPool(pool)
      yield* log.log("info", `reaper armed: every ${Math.round(o.settings.reapMs / 1000)}s; hung = older than ${minutes(o.settings.hangMinAgeMs)} and silent ${minutes(o.settings.hangSilenceMs)}`)
    }),
    "start"
  )
  const reaper = runtime.runFork(reaperLoop(engine, o.settings.reapMs))

  /** The config object of the last `config` call: a reload binds the variants again against it (SPEC §3.4). */
  let lastConfig: JsonRecord | undefined
  const bindVariants = (cfg: JsonRecord) => {
    const { info, warnings, config } = injectConfig(cfg, state.slots, state.origin)
    cfg.agent = config.agent
    if (config.provider !== undefined) cfg.provider = config.provider
    return { info, warnings }
  }
  const reload = () =>
    run(
      Effect.gen(function* () {
        const log = yield* AppLog
        const pool = yield* (yield* PoolConfig).load
        yield* engine.applyPool(pool)
        if (lastConfig !== undefined) for (const w of bindVariants(lastConfig).warnings) yield* log.log("warn", w)
        yield* log.log("info", `pool reloaded from ${pool.origin}: ${describeSlots(pool.slots)}`)
      }),
      "pool reload"
    )
  const watched = await run(Effect.map(PoolConfig, (c) => c.watched), "watch")
  const watchers = watchPaths(watched ?? [], RELOAD_DEBOUNCE_MS, () => void reload())

  return {
    engine,
    config: async (input) => {
      if (!isRecord(input)) return
      try {
        const cfg = input as unknown as JsonRecord
        lastConfig = cfg
        const { info, warnings } = bindVariants(cfg)
        await run(
          Effect.gen(function* () {
            const log = yield* AppLog
            for (const w of warnings) yield* log.log("warn", w)
            yield* log.log("info", info)
          }),
          "config"
        )
      } catch (e) {
        await run(Effect.flatMap(AppLog, (l) => l.log("error", `config injection failed: ${String(e)}`)), "config")
      }
    },
    "tool.execute.before": async (input, output) => {
      if (input?.tool !== "task" || !isRecord(output?.args) || typeof input.sessionID !== "string" || typeof input.callID !== "string") return
      const refused = await runtime
        .runPromise(engine.beforeTask(input.sessionID, input.callID, output.args).pipe(Effect.catchAllDefect(() => Effect.void), Effect.either))
        .catch(() => undefined)
      if (refused !== undefined && refused._tag === "Left" && refused.left instanceof VariantRefused) throw refused.left
    },
    "tool.execute.after": async (input) => {
      if (input?.tool !== "task") return
      await run(engine.release(`${input.sessionID}:${input.callID}`, true), "release")
    },
    "chat.params": async (input) => {
      const session = asString((input as { sessionID?: unknown } | undefined)?.sessionID)
      if (session !== undefined) await run(engine.modelRequest(session), "chat.params")
    },
    event: async (input) => {
      try {
        await run(onEvent(engine, (input as { event?: unknown } | undefined)?.event), "event")
      } catch {
        // never escapes
      }
    },
    tool: {
      pool_status: {
        description: "Show opencode-pool's live state: slots with load and cooldowns, the next pick, claims per process, the reaper.",
        args: {},
        execute: async () => (await run(engine.statusText, "pool_status")) ?? "opencode-pool: status unavailable"
      }
    },
    dispose: async () => {
      await runtime.runPromise(Fiber.interrupt(reaper)).catch(() => undefined)
      for (const w of watchers) w.close()
      await run(engine.dispose, "dispose")
      await runtime.dispose().catch(() => undefined)
    }
  } as Hooks & { readonly engine: Engine }
}
