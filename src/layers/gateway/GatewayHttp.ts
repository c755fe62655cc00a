/**
 * The OmniRoute gateway over HTTP: `GET <baseURL>/models` with the key as a bearer token, bounded by
 * `timeoutMs`; healthy when it answers 200 with at least one model (core/gateway/health.ts). Probed
 * once per process (the config hook runs again on reloads), so its warning is logged once; building
 * the layer probes nothing: the first `register` (the config hook) does.
 */
import { Effect, Layer } from "effect"
import { isRecord } from "../../core/json.js"
import { healthLine, healthOfBody, healthOfFailure, healthOfStatus, healthRequest, type GatewayHealth } from "../../core/gateway/health.js"
import { OMNIROUTE_PROVIDER, omnirouteProviderBlock, readOmniroute } from "../../core/omniroute.js"
import { Gateway } from "../../services/gateway/Gateway.js"
import { effectLevelOf } from "../opencode/LoggerAppLog.js"
import { spanned, traced } from "../hotPath.js"

const probe = (baseURL: string, apiKey: string, timeoutMs: number): Effect.Effect<GatewayHealth> =>
  Effect.tryPromise({
    try: async (signal) => {
      const { url, headers } = healthRequest(baseURL, apiKey)
      const r = await fetch(url, { headers, signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) })
      return healthOfStatus(baseURL, r.status) ?? healthOfBody(baseURL, await r.json())
    },
    catch: (e) => e
  }).pipe(Effect.catchAll((e) => Effect.succeed(healthOfFailure(baseURL, timeoutMs, e))))

export const GatewayHttp = (option: unknown) =>
  Layer.effect(
    Gateway,
    Effect.gen(function* () {
      const o = readOmniroute(option)
      if (o._tag === "Off") return { register: () => spanned(Effect.void, "Gateway.register") }
      // one answer per process, and one warning with it
      const outcome = yield* Effect.cached(
        o._tag === "Invalid"
          ? Effect.as(Effect.logWarning(`omniroute not registered: ${o.reason}`), undefined)
          : Effect.tap(probe(o.baseURL, o.apiKey, o.timeoutMs), (p) => {
              const line = healthLine(o.baseURL, p)
              return Effect.logWithLevel(effectLevelOf(line.level), line.message)
            })
      )
      return {
        register: traced("Gateway.register")(function* (config) {
          const p = yield* outcome
          if (p === undefined || p._tag !== "Healthy" || o._tag !== "On") return
          const providers = isRecord(config.provider) ? config.provider : {}
          // a provider the user named omniroute is theirs: left as it is
          if (Object.hasOwn(providers, OMNIROUTE_PROVIDER)) return
          config.provider = { ...providers, [OMNIROUTE_PROVIDER]: omnirouteProviderBlock(o, p.models) }
        })
      }
    })
  )
