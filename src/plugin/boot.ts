/**
 * The plugin as opencode starts it: every hook registered, and the first config hook answered from the
 * pure core (the options the boot needs, the pool files, `injectConfig`, the quota wrappers), without
 * Effect. The engine (engine.ts: the managed runtime with every layer, the reaper, the watcher, the
 * notifier) is loaded apart, `ENGINE_START_MS` after that config hook, or sooner when a hook needs it;
 * each hook then waits for it and hands its call on, in the order the calls came. It gets the config
 * object the boot injected and binds it again (the same agents), so its reloads re-bind it; what the
 * boot's hook found is logged then. opencode awaits each plugin's import, call and config hook before
 * it answers its first request: this keeps all three small (docs/PERFORMANCE.md, "opencode start").
 */
import type { Hooks } from "@opencode-ai/plugin"
import { engineSlots, bootInjection } from "../core/boot/config.js"
import { bootOptions, isDisabled } from "../core/boot/options.js"
import { describe, field, isPlainObject, pluginOptions, text, TEXT_MAX } from "../core/extract.js"
import type { JsonRecord } from "../core/json.js"
import { readOmniroute } from "../core/omniroute.js"
import { makeDir } from "../layers/fs/dirs.js"
import { configDir, loadPool } from "../layers/pool/PoolSourceFiles.js"
import { workable } from "./configObject.js"
import type { EngineHooks } from "./hooks.js"
import { ownFetchLine, POOL_STATUS_DESCRIPTION, type BootLine, type Handoff } from "./handoff.js"
import { installQuotaFetch, type FailureReport, type ResponseReport } from "./quotaFetch.js"

/** The engine module as the boot entry loads it (dist/opencode-plugin-engine.js in the package). */
export type EngineModule = { readonly startEngine: (ctx: unknown, options: Record<string, unknown> | undefined, handoff?: Handoff) => Promise<EngineHooks> }

/**
 * How long after the first config hook the engine is started when no hook asks for it sooner: opencode
 * answers its first request after the config hooks, and loading the engine meanwhile (Bun parses
 * Effect) would delay that answer by as much as it saves.
 */
export const ENGINE_START_MS = 1_000

export interface BootConfig {
  readonly env?: Readonly<Record<string, string | undefined>>
  /** ENGINE_START_MS unless given (tests). */
  readonly startMs?: number
}

type Forwarded = (...args: ReadonlyArray<unknown>) => Promise<unknown>

const say = (line: string): void => {
  try {
    process.stderr.write(`opencode-pool: ${line}\n`)
  } catch {
    // nowhere to say it
  }
}

/** The hooks of one opencode instance over an engine `load` gives when first needed. Never throws for what `ctx` and `raw` hold. */
export const bootHooks = (ctx: unknown, raw: unknown, load: () => Promise<EngineModule>, b: BootConfig = {}): Hooks => {
  const env = b.env ?? process.env
  const options = pluginOptions(raw)
  if (isDisabled(options, env)) return {}
  const boot = bootOptions(options)
  const directory = text(field(ctx, "directory"), TEXT_MAX) ?? process.cwd()
  const dir = configDir(env as NodeJS.ProcessEnv)
  if (dir !== undefined) makeDir(dir, 0o777) // created empty at start (SPEC §2.1); silent by design
  let started: Promise<EngineHooks | undefined> | undefined
  let handoff: Handoff | undefined
  let timer: ReturnType<typeof setTimeout> | undefined
  let disposed = false

  const engine = (): Promise<EngineHooks | undefined> => {
    if (started === undefined) {
      clearTimeout(timer)
      started = load()
        .then((m) => m.startEngine(ctx, options, handoff))
        .catch((e: unknown) => {
          say(`could not start, continuing without it: ${describe(e)}`)
          return undefined
        })
    }
    return started
  }

  /** A hook that waits for the engine and hands the call on (a refusal it throws included). */
  const forward =
    (name: "tool.execute.before" | "tool.execute.after" | "experimental.chat.system.transform" | "chat.params" | "chat.message" | "event"): Forwarded =>
    async (...args) => {
      if (disposed) return
      const hook = (await engine())?.[name] as Forwarded | undefined
      return hook?.(...args)
    }

  // what the boot's quota wrappers sense goes to the engine, which it starts when not running yet
  const report = (r: ResponseReport): void => void engine().then((h) => h?.sensing.report(r))
  const fail = (f: FailureReport): void => void engine().then((h) => h?.sensing.fail(f))

  /** The first config hook without the engine; false when it must be the engine's (nothing written then). */
  const configure = (input: JsonRecord): boolean => {
    let injected: ReturnType<typeof bootInjection>
    try {
      const pool = loadPool({ models: boot.models, modelsFile: boot.modelsFile, maxSlots: boot.maxSlots, directory }, env as NodeJS.ProcessEnv)
      const slots = engineSlots(pool.slots)
      injected = bootInjection(input, slots, pool.origin, { delegate: boot.delegate, contextMap: boot.contextMap })
      input.agent = injected.agent
      if (injected.provider !== undefined) input.provider = injected.provider
      if (injected.command !== undefined) input.command = injected.command
      const wrappers = new WeakSet<object>()
      const lines: Array<BootLine> = []
      let own: ReadonlyArray<string> = []
      try {
        own = installQuotaFetch(input, slots, report, wrappers, fail)
      } catch (e) {
        lines.push({ level: "error", message: `quota sensing failed: ${e instanceof Error ? e.message : String(e)}` })
      }
      const ownFetch = [...new Set(own)]
      for (const p of ownFetch) lines.push({ level: "info", message: ownFetchLine(p) })
      handoff = { config: input, once: injected.once, lines, ownFetch, wrappers }
      return true
    } catch {
      return false
    }
  }

  return {
    config: async (input) => {
      if (disposed || !isPlainObject(input)) return
      // the first hook only (a later one is the engine's, like every reload); OmniRoute's registration
      // probes the gateway from the engine; a config object that cannot be worked on is the engine's to report
      if (started === undefined && handoff === undefined && readOmniroute(boot.omniroute)._tag === "Off" && workable(input) && configure(input)) {
        timer = setTimeout(() => void engine(), b.startMs ?? ENGINE_START_MS)
        timer.unref?.()
        return
      }
      await (await engine())?.config?.(input)
    },
    "tool.execute.before": forward("tool.execute.before"),
    "tool.execute.after": forward("tool.execute.after"),
    "experimental.chat.system.transform": forward("experimental.chat.system.transform"),
    "chat.params": forward("chat.params"),
    "chat.message": forward("chat.message"),
    event: forward("event"),
    tool: {
      pool_status: {
        description: POOL_STATUS_DESCRIPTION,
        args: {},
        execute: async (args, context) => {
          const tool = disposed ? undefined : (await engine())?.tool?.pool_status
          return tool === undefined ? "opencode-pool: status unavailable" : tool.execute(args, context)
        }
      }
    },
    dispose: async () => {
      if (disposed) return
      disposed = true
      clearTimeout(timer)
      if (started !== undefined) await (await started)?.dispose?.()
    }
  } as Hooks
}
