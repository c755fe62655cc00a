/** The live layers the plugin runs on inside opencode. */
import { Layer } from "effect"
import type { Settings } from "../core/options.js"
import { AbortClientSdk, type SessionClient } from "../layers/opencode/AbortClientSdk.js"
import { AppLogSdk, type LogClient } from "../layers/opencode/AppLogSdk.js"
import { PoolConfigFile } from "../layers/pool/PoolConfigFile.js"
import { PriceSnapshotFile } from "../layers/cost/PriceSnapshotFile.js"
import { backendOptions, sharedStateLayer } from "../layers/state/sharedStateLayer.js"
import { StateDirFile } from "../layers/state/StateDirFile.js"
import { TraceRecorderFile } from "../layers/pool/TraceRecorderFile.js"
import { NotifierSelect } from "../layers/notify/NotifierSelect.js"
import { NotifierNone } from "../layers/notify/NotifierNone.js"
import { SessionLookupSdk, type SessionGetClient } from "../layers/opencode/SessionLookupSdk.js"
import { SessionPromptSdk, type PromptClient } from "../layers/opencode/SessionPromptSdk.js"
import type { SessionPrompt } from "../services/opencode/SessionPrompt.js"
import { homeDir } from "../layers/fs/xdg.js"
import { ContextStoreShared } from "../layers/context/ContextStoreShared.js"
import { KeyEndpointHttp } from "../layers/quota/KeyEndpointHttp.js"
import type { KeyEndpoint } from "../services/quota/KeyEndpoint.js"
import type { AbortClient } from "../services/opencode/AbortClient.js"
import type { Notifier } from "../services/notify/Notifier.js"
import type { SessionLookup } from "../services/opencode/SessionLookup.js"
import type { PriceSnapshot } from "../services/cost/PriceSnapshot.js"
import type { AppLog } from "../services/opencode/AppLog.js"
import type { SharedStateService } from "../services/state/SharedState.js"

export interface LiveContext {
  readonly client: unknown
  readonly directory: string
}

/** Replacements for tests: a collecting log, a scripted abort client. */
export interface LayerOverrides {
  readonly log?: Layer.Layer<AppLog>
  readonly abort?: Layer.Layer<AbortClient>
  /** Wraps the shared state (the stress test checks global loads inside each transaction, under the lock). */
  readonly wrapState?: (inner: SharedStateService) => SharedStateService
  /** A recording notifier (tests never raise a real popup unless they ask for it). */
  readonly notifier?: Layer.Layer<Notifier>
  readonly lookup?: Layer.Layer<SessionLookup>
  /** A fixed price snapshot instead of the bundled presets/prices.json. */
  readonly prices?: Layer.Layer<PriceSnapshot>
  /** A recording prompter for fallback switches (US-50). */
  readonly prompt?: Layer.Layer<SessionPrompt>
  /** A scripted budget endpoint (issue 35): tests never reach a provider's real one. */
  readonly keyEndpoint?: Layer.Layer<KeyEndpoint>
}

/** The notifier of the settings (SPEC §10.5); with notifications off, one that is never called. */
const notifierOf = (settings: Settings) =>
  settings.notify
    ? NotifierSelect({ via: settings.notifyVia, notifyHost: settings.notifyHost, fade: settings.fade, env: process.env, platform: process.platform, home: homeDir() })
    : NotifierNone("notifications are off (option notify:false)")

export const liveLayer = (ctx: LiveContext, settings: Settings, overrides: LayerOverrides = {}) => {
  const log = overrides.log ?? AppLogSdk(ctx.client as LogClient | undefined, settings.logLevel)
  const stateDir = StateDirFile(settings.stateDir).pipe(Layer.provide(log))
  const store = sharedStateLayer({ ...backendOptions(settings.state, settings.lockWaitMs), wrap: overrides.wrapState, metrics: settings.metrics }).pipe(Layer.provideMerge(stateDir), Layer.provide(log))
  return Layer.mergeAll(
    store,
    log,
    overrides.abort ?? AbortClientSdk(ctx.client as SessionClient | undefined, ctx.directory),
    TraceRecorderFile(settings.trace).pipe(Layer.provide(log)),
    PoolConfigFile({ models: settings.models, modelsFile: settings.modelsFile, maxSlots: settings.maxSlots, directory: ctx.directory }),
    overrides.notifier ?? notifierOf(settings),
    overrides.lookup ?? SessionLookupSdk(ctx.client as SessionGetClient | undefined, ctx.directory),
    overrides.prices ?? PriceSnapshotFile(),
    overrides.prompt ?? SessionPromptSdk(ctx.client as PromptClient | undefined, ctx.directory),
    // budgets a provider will tell when asked (issue 35): OpenRouter's key endpoint
    overrides.keyEndpoint ?? KeyEndpointHttp(),
    // the context map's record and marker (issue 23), on the shared-state port (issue 32)
    ContextStoreShared.pipe(Layer.provide(store))
  )
}
