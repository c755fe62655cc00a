/**
 * A budget endpoint for tests (issue 35, US-48): each read takes the next scripted outcome (the last one
 * repeats) and is recorded with the endpoint and the key it was given; no network.
 */
import { Effect, Layer } from "effect"
import type { KeyEndpoint as Endpoint, KeyReading } from "../../core/quota/keyEndpoints.js"
import { KeyEndpoint, type KeyReadError } from "../../services/quota/KeyEndpoint.js"
import { traced } from "../hotPath.js"

export type KeyOutcome = Exclude<KeyReading, { readonly _tag: "Malformed" }> | KeyReadError

export interface KeyCall {
  readonly provider: string
  readonly url: string
  readonly apiKey: string
}

export const KeyEndpointMemory = (outcomes: ReadonlyArray<KeyOutcome>, calls: Array<KeyCall> = []): Layer.Layer<KeyEndpoint> =>
  Layer.sync(KeyEndpoint, () => {
    let next = 0
    return {
      read: traced("KeyEndpoint.read")((endpoint: Endpoint, apiKey: string) =>
        Effect.suspend(() => {
          calls.push({ provider: endpoint.provider, url: endpoint.url, apiKey })
          const o = outcomes[Math.min(next++, outcomes.length - 1)]
          if (o === undefined) return Effect.succeed({ _tag: "NoBudget" } as const)
          return o._tag === "Budget" || o._tag === "NoBudget" ? Effect.succeed(o) : Effect.fail(o)
        })
      )
    }
  })
