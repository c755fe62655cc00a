/**
 * A provider's budget endpoint read once (issue 35, US-48; core/quota/keyEndpoints.ts): `GET` with the
 * provider's API key, the answer read by the endpoint's entry. Its failures are typed; none carries the
 * key. Every method is the span `KeyEndpoint.<method>`.
 */
import { Context, type Effect, Schema } from "effect"
import type { KeyEndpoint as Endpoint, KeyReading } from "../../core/quota/keyEndpoints.js"
import type { KeyFailure } from "../../core/quota/keySchedule.js"

/** The endpoint did not answer within the layer's timeout. */
export class KeyReadTimeout extends Schema.TaggedError<KeyReadTimeout>()("KeyReadTimeout", {
  provider: Schema.String,
  ms: Schema.Number
}) {}

/** The endpoint answered with a status other than 2xx (401: a wrong key; 403, 429, 5xx…). */
export class KeyReadRefused extends Schema.TaggedError<KeyReadRefused>()("KeyReadRefused", {
  provider: Schema.String,
  status: Schema.Number
}) {}

/** The request did not complete (DNS, connection, TLS): the cause's first line. */
export class KeyReadUnreachable extends Schema.TaggedError<KeyReadUnreachable>()("KeyReadUnreachable", {
  provider: Schema.String,
  detail: Schema.String
}) {}

/** A 2xx answer that is not JSON, or whose budget fields cannot be read. */
export class KeyAnswerMalformed extends Schema.TaggedError<KeyAnswerMalformed>()("KeyAnswerMalformed", {
  provider: Schema.String,
  detail: Schema.String
}) {}

export type KeyReadError = KeyReadTimeout | KeyReadRefused | KeyReadUnreachable | KeyAnswerMalformed

/** What a failure is for the log fold (core/quota/keySchedule.ts): logged once per kind. */
export const failureOf = (e: KeyReadError): KeyFailure => {
  switch (e._tag) {
    case "KeyReadTimeout":
      return { kind: "timeout", reason: `no answer within ${e.ms} ms` }
    case "KeyReadRefused":
      return { kind: `status ${e.status}`, reason: e.status === 401 || e.status === 403 ? `HTTP ${e.status}: the key was refused` : `HTTP ${e.status}` }
    case "KeyReadUnreachable":
      return { kind: "unreachable", reason: `unreachable: ${e.detail}` }
    case "KeyAnswerMalformed":
      return { kind: "malformed", reason: `answer not understood: ${e.detail}` }
  }
}

export interface KeyEndpointService {
  /** One `GET` of `endpoint.url` with `apiKey` as a bearer token: the budget it states, or none. */
  readonly read: (endpoint: Endpoint, apiKey: string) => Effect.Effect<Exclude<KeyReading, { readonly _tag: "Malformed" }>, KeyReadError>
}

export class KeyEndpoint extends Context.Tag("opencode-pool/KeyEndpoint")<KeyEndpoint, KeyEndpointService>() {}
