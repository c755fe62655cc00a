/**
 * What "healthy" means for the OmniRoute gateway (SPEC §13, US-28): its OpenAI-compatible
 * `GET <baseURL>/models` answers 200 with at least one model, within `timeoutMs`. Anything else (another
 * status, an empty or unreadable list, no answer in time, no connection) is unhealthy, with a reason for
 * the one warning. Pure: the shell sends the request and reads the body, only of a 200.
 */
import { modelIds } from "../omniroute.js"

export type GatewayHealth = { readonly _tag: "Healthy"; readonly models: ReadonlyArray<string> } | { readonly _tag: "Unhealthy"; readonly reason: string }

/** The probe's request: the model list, the key as a bearer token. */
export const healthRequest = (baseURL: string, apiKey: string): { readonly url: string; readonly headers: Readonly<Record<string, string>> } => ({
  url: `${baseURL}/models`,
  headers: { authorization: `Bearer ${apiKey}`, accept: "application/json" }
})

/** The verdict of an answer's status: unhealthy for any but 200, `undefined` when the body decides. */
export const healthOfStatus = (baseURL: string, status: number): GatewayHealth | undefined =>
  status === 200 ? undefined : { _tag: "Unhealthy", reason: `GET ${baseURL}/models answered HTTP ${status}` }

/** The verdict of a 200's body (parsed JSON): healthy with its models when it lists at least one. */
export const healthOfBody = (baseURL: string, body: unknown): GatewayHealth => {
  const models = modelIds(body)
  return models.length === 0 ? { _tag: "Unhealthy", reason: `GET ${baseURL}/models lists no models` } : { _tag: "Healthy", models }
}

/** The verdict when the probe failed: no answer in time (a timeout or an abort), or unreachable with the error's message. */
export const healthOfFailure = (baseURL: string, timeoutMs: number, e: unknown): GatewayHealth => ({
  _tag: "Unhealthy",
  reason:
    e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError")
      ? `no answer from ${baseURL} within ${timeoutMs} ms`
      : `${baseURL} unreachable: ${e instanceof Error ? e.message : String(e)}`
})

/** The one log line of the probe's verdict. */
export const healthLine = (baseURL: string, h: GatewayHealth): { readonly level: "info" | "warn"; readonly message: string } =>
  h._tag === "Healthy" ? { level: "info", message: `omniroute registered: ${h.models.length} model(s) at ${baseURL}` } : { level: "warn", message: `omniroute not registered: ${h.reason}` }
