/**
 * Which providers the quota-sensing fetch wrapper goes on (issue 12, US-48), and the cheap reads it
 * makes of a request and a response. Pure.
 */
import { isRecord, type JsonRecord } from "../json.js"
import type { Slot } from "../pool/pool.js"

export interface WrapPlan {
  /** Providers to wrap, sorted. */
  readonly wrap: ReadonlyArray<string>
  /** Providers with a `fetch` of their own: never wrapped (one log line says so). */
  readonly ownFetch: ReadonlyArray<string>
}

/**
 * Providers whose sign-in plugins (built into opencode) hand the SDK a `fetch` of their own after the
 * config is read: a `fetch` in the config could displace it and break the sign-in, so they are never
 * wrapped.
 */
export const SIGN_IN_FETCH: ReadonlySet<string> = new Set(["anthropic", "openai", "github-copilot", "github-copilot-enterprise"])

/**
 * Every slot's provider and every provider block the user configured: the ones whose quota decides
 * where pooled work goes. A block with its own `options.fetch` (another plugin's, the user's) and the
 * sign-in providers are left alone (`ownFetch`).
 */
export const planWrap = (config: JsonRecord, slots: ReadonlyArray<Slot>): WrapPlan => {
  const providers = isRecord(config.provider) ? config.provider : {}
  const names = new Set<string>(Object.keys(providers))
  for (const s of slots) names.add(s.provider)
  const wrap: Array<string> = []
  const ownFetch: Array<string> = []
  for (const name of [...names].sort()) {
    const block = providers[name]
    if (block !== undefined && !isRecord(block)) continue
    const options = isRecord(block) && block.options !== undefined ? block.options : undefined
    if (options !== undefined && !isRecord(options)) continue
    if (SIGN_IN_FETCH.has(name) || (options !== undefined && options.fetch !== undefined)) ownFetch.push(name)
    else wrap.push(name)
  }
  return { wrap, ownFetch }
}

const RATE_LIMIT_HEADER = /ratelimit|retry-after/i

/** A response's rate-limit headers (lower-cased names), or undefined when it has none. */
export const rateLimitHeaders = (entries: Iterable<readonly [string, string]>): Record<string, string> | undefined => {
  let out: Record<string, string> | undefined
  for (const [name, value] of entries) {
    if (!RATE_LIMIT_HEADER.test(name)) continue
    out ??= {}
    out[name.toLowerCase()] = value
  }
  return out
}

const MODEL_IN_BODY = /"model"\s*:\s*"([^"\\]{1,200})"/
const MODEL_IN_URL = /\/models\/([^/:?]{1,200})[:?]/
/** How much of a request body is searched for its `"model"`: SDKs write it first. */
export const BODY_SCAN_CHARS = 4096

/** `provider/model` of a request: the body's `"model"` (OpenAI, Anthropic and compatible), else a `/models/<id>:` URL (Google). */
export const requestModel = (provider: string, url: string, body: unknown): string | undefined => {
  const id = (typeof body === "string" ? MODEL_IN_BODY.exec(body.slice(0, BODY_SCAN_CHARS))?.[1] : undefined) ?? MODEL_IN_URL.exec(url)?.[1]
  return id === undefined ? undefined : `${provider}/${id}`
}
