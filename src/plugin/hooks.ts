/**
 * opencode hooks → engine events. The runtime (compose.ts) owns the engines; each feature of
 * `hooks/` is a thin handler over the services it needs that reads its input through
 * `extract.ts` as untrusted data and hands the engines plain values only; `hooks/runner.ts`
 * puts them together, in the order listed here where two take the same hook. Every hook catches
 * everything, except `tool.execute.before` refusing a hand-named slot variant (`VariantRefused`, SPEC
 * §6.3) or a heavy command whose session ended while it waited (`PermitWaitEnded`, US-51), which must
 * fail the call and which no hostile input can suppress. After `dispose` the hooks do nothing.
 */
import type { Hooks } from "@opencode-ai/plugin"
import { Effect, type Layer } from "effect"
import type { Settings } from "../core/options.js"
import { makeDir } from "../layers/fs/dirs.js"
import { pinLogs, pinned } from "../layers/opencode/LoggerAppLog.js"
import { Gateway } from "../services/gateway/Gateway.js"
import { NotifyEngine, type NotifyEngineService } from "../services/notify/NotifyEngine.js"
import { PermitGate } from "../services/permits/PermitGate.js"
import { Permits } from "../services/permits/Permits.js"
import { PoolEngine, type PoolEngineService } from "../services/pool/PoolEngine.js"
import { FailureReads } from "../services/quota/FailureReads.js"
import { KeyBudgets } from "../services/quota/KeyBudgets.js"
import { composeRuntime } from "./compose.js"
import type { Handoff, Sensing } from "./handoff.js"
import { bashHooks } from "./hooks/bash.js"
import { busHooks } from "./hooks/bus.js"
import { coachHooks } from "./hooks/coach.js"
import { bindHandoff, configHooks } from "./hooks/config.js"
import { contextHooks } from "./hooks/context.js"
import { fallbackHooks } from "./hooks/fallback.js"
import { keyBudgetHooks } from "./hooks/keyBudget.js"
import { quotaHooks, quotaSensing } from "./hooks/quota.js"
import { makeRunner, mergeParts } from "./hooks/runner.js"
import { statusHooks } from "./hooks/status.js"
import { taskHooks } from "./hooks/task.js"
import type { PoolServices } from "./services.js"

export type { PoolServices } from "./services.js"

export interface HookOptions {
  readonly settings: Settings
  readonly warnings: ReadonlyArray<string>
  /** Created empty at start (SPEC §2.1); failures are silent. */
  readonly configDir?: string | undefined
  /** Where `OCPOOL_SOUND` is read (process.env by default). */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** The boot entry's first config hook, done before the engine ran (src/plugin/boot.ts): bound again here. */
  readonly handoff?: Handoff | undefined
  /** The project directory (opencode's `directory`): the context map's root (issue 23); without it no refresh runs. */
  readonly directory?: string | undefined
}

export type EngineHooks = Hooks & { readonly engine: PoolEngineService; readonly notifications: NotifyEngineService; readonly sensing: Sensing }

const services = Effect.all({ engine: PoolEngine, notifications: NotifyEngine, gateway: Gateway, permitGate: PermitGate, permits: Permits, failures: FailureReads, keyBudgets: KeyBudgets, pin: pinLogs })

/** Builds the hooks over the given layer (live in opencode, memory layers in tests). */
export const makeHooks = async (layer: Layer.Layer<PoolServices>, o: HookOptions): Promise<EngineHooks> => {
  if (o.configDir !== undefined) {
    makeDir(o.configDir, 0o777) // silent by design; never loops (Node's recursive mkdir does under /proc)
  }
  const runtime = composeRuntime(layer, o)
  const { engine, notifications, gateway, permitGate, permits, failures, keyBudgets, pin } = await runtime.runPromise(services)
  const r = makeRunner(runtime)
  const sensing = quotaSensing(r, engine, failures, o.settings, o.handoff)
  if (o.handoff !== undefined) {
    await bindHandoff(r, engine, o.handoff)
    await r.run(keyBudgets.configure(o.handoff.config), "budget reads")
  }

  // where two features take the same hook, in this order: config before quota sensing, and after a
  // call (bash's and task's parts see only their tool's calls): the permit, the claim, the context map's edits
  const hooks = mergeParts([
    configHooks(r, engine, gateway),
    quotaHooks(sensing),
    keyBudgetHooks(r, keyBudgets),
    bashHooks(r, permitGate, o.settings.heavy),
    taskHooks(r, engine),
    contextHooks(r, engine, o.settings.contextMap.enabled, o.directory),
    coachHooks(r, engine, o.settings.coach),
    fallbackHooks(r, engine),
    busHooks(r, { engine, notifications, permitGate, failures }),
    statusHooks(r, engine, permits)
  ])
  // the hooks call the engine on the runtime; a caller outside it (a test, a driver) gets it logging there too
  return { ...hooks, engine: pinned(pin, engine), notifications, sensing: { report: sensing.report, fail: sensing.fail }, dispose: r.dispose }
}
