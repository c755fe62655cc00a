/**
 * opencode hooks → engine events. A `ManagedRuntime` owns the engine (its reaper, watcher and claim
 * file); each hook is a thin handler. Every hook catches everything, except `tool.execute.before`
 * refusing a hand-named slot variant, which must fail the task call (SPEC §6.3). After `dispose` the
 * hooks do nothing.
 */
import type { Hooks } from "@opencode-ai/plugin"
import { Effect, Layer, ManagedRuntime } from "effect"
import { mkdirSync } from "node:fs"
import { asString, isRecord, type JsonRecord } from "../core/json.js"
import type { Settings } from "../core/options.js"
import { PoolEngineLive } from "../layers/PoolEngineLive.js"
import { AppLog } from "../services/AppLog.js"
import { PoolEngine, VariantRefused, type PoolEngineService } from "../services/PoolEngine.js"
import { engineEvents } from "./events.js"
import type { PoolServices } from "./services.js"

export type { PoolServices } from "./services.js"

export interface HookOptions {
  readonly settings: Settings
  readonly warnings: ReadonlyArray<string>
  /** Created empty at start (SPEC §2.1); failures are silent. */
  readonly configDir?: string
}

/** Builds the hooks over the given layer (live in opencode, memory layers in tests). */
export const makeHooks = async (layer: Layer.Layer<PoolServices>, o: HookOptions): Promise<Hooks & { readonly engine: PoolEngineService }> => {
  if (o.configDir !== undefined) {
    try {
      mkdirSync(o.configDir, { recursive: true })
    } catch {
      // silent by design
    }
  }
  const runtime = ManagedRuntime.make(Layer.provideMerge(PoolEngineLive(o.settings, o.warnings), layer))
  const engine = await runtime.runPromise(PoolEngine)
  let disposed = false
  const run = async <A>(eff: Effect.Effect<A, never, PoolServices>, what: string): Promise<A | undefined> => {
    if (disposed) return undefined
    return runtime
      .runPromise(eff.pipe(Effect.catchAllCause((cause) => Effect.as(Effect.flatMap(AppLog, (l) => l.log("error", `${what} failed: ${cause.toString().split("\n")[0]}`)), undefined))))
      .catch(() => undefined)
  }

  return {
    engine,
    config: async (input) => {
      if (!isRecord(input)) return
      await run(engine.configure(input as unknown as JsonRecord), "config injection")
    },
    "tool.execute.before": async (input, output) => {
      if (disposed || input?.tool !== "task" || !isRecord(output?.args) || typeof input.sessionID !== "string" || typeof input.callID !== "string") return
      const refused = await runtime
        .runPromise(engine.beforeTask(input.sessionID, input.callID, output.args).pipe(Effect.catchAllDefect(() => Effect.void), Effect.either))
        .catch(() => undefined)
      if (refused !== undefined && refused._tag === "Left" && refused.left instanceof VariantRefused) throw refused.left
    },
    "tool.execute.after": async (input) => {
      if (input?.tool !== "task") return
      await run(engine.apply({ type: "taskEnd", claim: `${input.sessionID}:${input.callID}`, ok: true }), "release")
    },
    "chat.params": async (input) => {
      const session = asString((input as { sessionID?: unknown } | undefined)?.sessionID)
      if (session !== undefined) await run(engine.apply({ type: "request", session }), "chat.params")
    },
    event: async (input) => {
      try {
        const events = engineEvents((input as { event?: unknown } | undefined)?.event)
        if (events.length > 0) await run(Effect.forEach(events, engine.apply, { discard: true }), "event")
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
      if (disposed) return
      disposed = true
      await runtime.dispose().catch(() => undefined)
    }
  } as Hooks & { readonly engine: PoolEngineService }
}
