/**
 * The plugin's composition root: the managed runtime of one opencode instance, every engine over the
 * base layer (`live.ts`'s layers in opencode, memory or file layers in tests, benches and the fleet
 * driver): the pool engine, the notification machine, the OmniRoute gateway, the heavy-work permits
 * (issue 21) and their gate on the same shared state, quota sensing's failure reads (issue 19) and the
 * budgets providers tell when asked (issue 35).
 * The runtime owns them all (the reaper, the watcher, the claim rows, the notifier); `dispose` ends it.
 */
import { Layer, ManagedRuntime } from "effect"
import type { Settings } from "../core/options.js"
import { soundsOn } from "../core/notify/sound.js"
import { PoolEngineShell } from "../layers/pool/PoolEngineShell.js"
import { NotifyEngineShell } from "../layers/notify/NotifyEngineShell.js"
import { GatewayHttp } from "../layers/gateway/GatewayHttp.js"
import { PermitGateShell } from "../layers/permits/PermitGateShell.js"
import { permitsLayer } from "../layers/permits/permitsLayer.js"
import { FailureReadsShell } from "../layers/quota/FailureReadsShell.js"
import { KeyBudgetsShell } from "../layers/quota/KeyBudgetsShell.js"
import type { PoolServices } from "./services.js"

export interface ComposeOptions {
  readonly settings: Settings
  readonly warnings: ReadonlyArray<string>
  /** Where `OCPOOL_SOUND` and the providers' API keys (issue 35) are read (process.env by default). */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** The project directory: the context map's root (issue 23). */
  readonly directory?: string | undefined
}

/** The runtime of the hooks over `layer`: built at its first use. */
export const composeRuntime = (layer: Layer.Layer<PoolServices>, o: ComposeOptions) => {
  const env = o.env ?? process.env
  const notifyConfig = { sounds: soundsOn(o.settings.sound, env.OCPOOL_SOUND), fade: o.settings.fade }
  // the pool engine announces through the notification machine (its `Announce` runner)
  const engines = Layer.mergeAll(
    PoolEngineShell(o.settings, o.warnings, o.directory).pipe(
      Layer.provideMerge(NotifyEngineShell(o.settings.notify, notifyConfig)),
      // the budget reads feed the engine; their loop ends before it (a layer's finalizers run before those of what it was built on)
      (engine) => Layer.provideMerge(KeyBudgetsShell({ reserve: o.settings.quotaReserve, env, enabled: o.settings.keyBudgets }), engine)
    ),
    GatewayHttp(o.settings.omniroute),
    FailureReadsShell()
  )
  const withEngines = Layer.provideMerge(engines, layer)
  // heavy-work permits (issue 21): the gate over the permits port, on the same shared state
  const gateLayer = PermitGateShell.pipe(Layer.provideMerge(permitsLayer(o.settings.permits, { metrics: o.settings.metrics })))
  return ManagedRuntime.make(Layer.provideMerge(gateLayer, withEngines))
}

export type HookRuntime = ReturnType<typeof composeRuntime>
/** Every service the hooks' runtime provides. */
export type HookServices = ManagedRuntime.ManagedRuntime.Context<HookRuntime>
