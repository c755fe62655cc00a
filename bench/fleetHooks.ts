/**
 * What bench:fleet's main process and its workers share: the plugin's hooks built as opencode builds
 * them (`makeHooks(liveLayer(...))`) over the file backend or PostgreSQL, one timed pick through the
 * route path (`tool.execute.before` of a `task` for `explore`) with the release untimed, and the shared
 * state's fallback count.
 */
import { Effect } from "effect"
import { parseSettings } from "../src/core/options.js"
import { AbortClientMemory } from "../src/layers/opencode/AbortClientMemory.js"
import { AppLogMemory } from "../src/layers/opencode/AppLogMemory.js"
import { NotifierNone } from "../src/layers/notify/NotifierNone.js"
import { makeHooks } from "../src/plugin/hooks.js"
import { liveLayer } from "../src/plugin/live.js"
import type { LogLevel } from "../src/services/opencode/AppLog.js"
import type { SharedStateService } from "../src/services/state/SharedState.js"
import { MODELS } from "./common.js"

export type Backend = { readonly backend: "sqlite" } | { readonly backend: "postgres"; readonly url: string; readonly schema: string }

export interface BenchHooks {
  /** One pick: `tool.execute.before` of a task for explore; ms, and whether the call was routed to a variant. */
  readonly pick: () => Promise<{ readonly ms: number; readonly routed: boolean }>
  /** Releases the oldest claims until at most `keep` are held (untimed). */
  readonly trim: (keep: number) => Promise<void>
  readonly config: () => Promise<void>
  /** Picks made on the files because PostgreSQL did not answer (0 on the file backend). */
  readonly fallbacks: () => Promise<number>
  readonly logs: ReadonlyArray<{ readonly level: LogLevel; readonly message: string }>
  readonly dispose: () => Promise<void>
}

/** The plugin's options for the bench: 4 models with caps that never bind, the reaper out of the way. */
export const benchOptions = (stateDir: string, backend: Backend, lockWaitMs: number): Record<string, unknown> => ({
  stateDir,
  reapMs: 3_600_000,
  lockWaitMs,
  models: { slots: MODELS.map((model) => ({ model, weight: 100 })) },
  ...(backend.backend === "postgres" ? { state: { backend: "postgres", url: backend.url, schema: backend.schema } } : {})
})

const nowMs = () => Number(process.hrtime.bigint()) / 1e6

export const buildHooks = async (stateDir: string, backend: Backend, lockWaitMs: number, tag: string): Promise<BenchHooks> => {
  // the environment's OCPOOL_STATE_URL must not choose the backend for the bench
  const { settings, warnings } = parseSettings(benchOptions(stateDir, backend, lockWaitMs), {})
  if (warnings.length > 0) throw new Error(`bench settings: ${warnings.join("; ")}`)
  if (settings.state.backend !== backend.backend) throw new Error(`bench settings chose the ${settings.state.backend} backend, not ${backend.backend}`)
  const logs: Array<{ level: LogLevel; message: string }> = []
  let state: SharedStateService | undefined
  const hooks = await makeHooks(
    liveLayer({ client: undefined, directory: stateDir }, settings, {
      log: AppLogMemory(logs),
      abort: AbortClientMemory(["ok"], []),
      notifier: NotifierNone("not in this run"),
      wrapState: (inner) => {
        state = inner
        return inner
      }
    }),
    { settings, warnings: [] }
  )
  const session = `ses_bench_${tag}`
  const held: Array<string> = []
  let n = 0
  return {
    pick: async () => {
      const call = `call_${tag}_${n++}`
      const output = { args: { subagent_type: "explore" } as Record<string, unknown> }
      const t0 = nowMs()
      await hooks["tool.execute.before"]!({ tool: "task", sessionID: session, callID: call }, output)
      const ms = nowMs() - t0
      held.push(call)
      const routed = typeof output.args.subagent_type === "string" && output.args.subagent_type.startsWith("explore-")
      return { ms, routed }
    },
    trim: async (keep) => {
      while (held.length > keep) {
        const call = held.shift()!
        await hooks["tool.execute.after"]!({ tool: "task", sessionID: session, callID: call, args: {} }, { title: "", output: "", metadata: {} })
      }
    },
    config: async () => {
      await hooks.config!({} as never)
    },
    fallbacks: async () => (state === undefined ? 0 : ((await Effect.runPromise(state.stats)).fallbacks ?? 0)),
    logs,
    dispose: async () => {
      await hooks.dispose!()
    }
  }
}
