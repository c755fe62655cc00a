/**
 * The OmniRoute gateway option (SPEC §13, US-28): `{enabled, baseURL, apiKey, timeoutMs}` registers the
 * provider `omniroute` when the gateway's health probe (its OpenAI-compatible model list) answers in
 * time with at least one model. It never adds slots. Pure: the option's reading, the model list's
 * reading and the provider block; the probe itself is the shell's.
 */
import { isRecord } from "./json.js"

export const OMNIROUTE_PROVIDER = "omniroute"
export const OMNIROUTE_TIMEOUT_MS = 2_000
export const OMNIROUTE_TIMEOUT_RANGE = [100, 60_000] as const

export type OmnirouteOption =
  | { readonly _tag: "Off" }
  | { readonly _tag: "Invalid"; readonly reason: string }
  | { readonly _tag: "On"; readonly baseURL: string; readonly apiKey: string; readonly timeoutMs: number }

/** The option as given (absent or `enabled:false`: off, silently). */
export const readOmniroute = (v: unknown): OmnirouteOption => {
  if (v === undefined || v === null) return { _tag: "Off" }
  if (!isRecord(v)) return { _tag: "Invalid", reason: "option omniroute must be an object {enabled, baseURL, apiKey, timeoutMs}" }
  if (v.enabled === false) return { _tag: "Off" }
  if (v.enabled !== undefined && v.enabled !== true) return { _tag: "Invalid", reason: "omniroute.enabled must be a boolean" }
  const base = typeof v.baseURL === "string" ? v.baseURL.trim() : ""
  let url: URL | undefined
  try {
    url = new URL(base)
  } catch {
    url = undefined
  }
  if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) return { _tag: "Invalid", reason: "omniroute.baseURL must be an http or https URL" }
  if (typeof v.apiKey !== "string" || v.apiKey.trim() === "") return { _tag: "Invalid", reason: "omniroute has no apiKey" }
  const t = v.timeoutMs ?? OMNIROUTE_TIMEOUT_MS
  const [min, max] = OMNIROUTE_TIMEOUT_RANGE
  if (typeof t !== "number" || !Number.isInteger(t) || t < min || t > max) return { _tag: "Invalid", reason: `omniroute.timeoutMs must be an integer ${min}-${max}` }
  return { _tag: "On", baseURL: base.replace(/\/+$/, ""), apiKey: v.apiKey.trim(), timeoutMs: t }
}

/** The model ids of an OpenAI-compatible `GET /models` answer (`{data:[{id}]}`); empty when it is not one. */
export const modelIds = (body: unknown): ReadonlyArray<string> => {
  const data = isRecord(body) ? body.data : undefined
  if (!Array.isArray(data)) return []
  const ids = data.flatMap((m) => (isRecord(m) && typeof m.id === "string" && m.id.trim() !== "" ? [m.id] : []))
  return [...new Set(ids)].slice(0, 1_000)
}

/** The provider block opencode gets for a healthy gateway. */
export const omnirouteProviderBlock = (o: Extract<OmnirouteOption, { _tag: "On" }>, models: ReadonlyArray<string>) => ({
  npm: "@ai-sdk/openai-compatible",
  name: "OmniRoute",
  options: { baseURL: o.baseURL, apiKey: o.apiKey },
  models: Object.fromEntries(models.map((id) => [id, { name: id }]))
})
