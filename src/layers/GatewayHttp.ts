/**
 * The OmniRoute gateway over HTTP: `GET <baseURL>/models` with the key as a bearer token, bounded by
 * `timeoutMs`; healthy when it answers 200 with at least one model. Probed once per process (the
 * config hook runs again on reloads), so its warning is logged once.
 */
import { Effect, Layer } from "effect"
import { isRecord } from "../core/json.js"
import { OMNIROUTE_PROVIDER, modelIds, omnirouteProviderBlock, readOmniroute } from "../core/omniroute.js"
import { AppLog } from "../services/AppLog.js"
import { Gateway } from "../services/Gateway.js"

type Probe = { readonly _tag: "Healthy"; readonly models: ReadonlyArray<string> } | { readonly _tag: "Unhealthy"; readonly reason: string }

const probe = (baseURL: string, apiKey: string, timeoutMs: number): Effect.Effect<Probe> =>
  Effect.tryPromise({
    try: async (signal) => {
      const r = await fetch(`${baseURL}/models`, { headers: { authorization: `Bearer ${apiKey}`, accept: "application/json" }, signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) })
      if (r.status !== 200) return { _tag: "Unhealthy", reason: `GET ${baseURL}/models answered HTTP ${r.status}` } as Probe
      const models = modelIds(await r.json())
      return (models.length === 0 ? { _tag: "Unhealthy", reason: `GET ${baseURL}/models lists no models` } : { _tag: "Healthy", models }) as Probe
    },
    catch: (e) => e
  }).pipe(
    Effect.catchAll((e) =>
      Effect.succeed<Probe>({
        _tag: "Unhealthy",
        reason: e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError") ? `no answer from ${baseURL} within ${timeoutMs} ms` : `${baseURL} unreachable: ${e instanceof Error ? e.message : String(e)}`
      })
    )
  )

export const GatewayHttp = (option: unknown) =>
  Layer.effect(
    Gateway,
    Effect.gen(function* () {
      const log = yield* AppLog
      const o = readOmniroute(option)
      if (o._tag === "Off") return { register: () => Effect.void }
      // one answer per process, and one warning with it
      const outcome = yield* Effect.cached(
        o._tag === "Invalid"
          ? Effect.as(log.log("warn", `omniroute not registered: ${o.reason}`), undefined)
          : Effect.tap(probe(o.baseURL, o.apiKey, o.timeoutMs), (p) =>
              p._tag === "Healthy" ? log.log("info", `omniroute registered: ${p.models.length} model(s) at ${o.baseURL}`) : log.log("warn", `omniroute not registered: ${p.reason}`)
            )
      )
      return {
        register: (config) =>
          Effect.gen(function* () {
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
