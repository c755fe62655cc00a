/** The live layers the plugin runs on inside opencode. */
import { Effect, Layer } from "effect"
import type { Settings } from "../core/options.js"
import { AbortClientSdk, type SessionClient } from "../layers/AbortClientSdk.js"
import { AppLogClient, type LogClient } from "../layers/AppLogClient.js"
import { ClaimStoreFile } from "../layers/ClaimStoreFile.js"
import { CooldownStoreFile } from "../layers/CooldownStoreFile.js"
import { PoolConfigFile } from "../layers/PoolConfigFile.js"
import { PoolLockFile } from "../layers/PoolLockFile.js"
import { PoolStoreLive } from "../layers/PoolStoreLive.js"
import { StateDirLive } from "../layers/StateDirLive.js"
import { TraceRecorderFile } from "../layers/TraceRecorderFile.js"
import type { AbortClient } from "../services/AbortClient.js"
import type { AppLog } from "../services/AppLog.js"
import { ClaimStore, type ClaimStoreService } from "../services/ClaimStore.js"

export interface LiveContext {
  readonly client: unknown
  readonly directory: string
}

/** Replacements for tests: a collecting log, a scripted abort client. */
export interface LayerOverrides {
  readonly log?: Layer.Layer<AppLog>
  readonly abort?: Layer.Layer<AbortClient>
  /** Wraps the file claim store (the stress test checks global loads right after each publish, still under the lock). */
  readonly wrapClaims?: (inner: ClaimStoreService) => ClaimStoreService
}

export const liveLayer = (ctx: LiveContext, settings: Settings, overrides: LayerOverrides = {}) => {
  const log = overrides.log ?? AppLogClient(ctx.client as LogClient | undefined, settings.logLevel)
  const stateDir = StateDirLive(settings.stateDir).pipe(Layer.provide(log))
  const wrap = overrides.wrapClaims
  const claims = wrap === undefined ? ClaimStoreFile : Layer.effect(ClaimStore, Effect.map(ClaimStore, wrap)).pipe(Layer.provide(ClaimStoreFile))
  const files = Layer.mergeAll(claims, CooldownStoreFile, PoolLockFile(settings.lockWaitMs)).pipe(Layer.provideMerge(stateDir), Layer.provide(log))
  const store = PoolStoreLive.pipe(Layer.provideMerge(files), Layer.provide(log))
  return Layer.mergeAll(
    store,
    log,
    overrides.abort ?? AbortClientSdk(ctx.client as SessionClient | undefined, ctx.directory),
    TraceRecorderFile(settings.trace).pipe(Layer.provide(log)),
    PoolConfigFile({ models: settings.models, modelsFile: settings.modelsFile, maxSlots: settings.maxSlots, directory: ctx.directory })
  )
}
