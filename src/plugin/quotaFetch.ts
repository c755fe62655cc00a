/**
 * The quota-sensing fetch wrapper (issue 12, US-48): set as `provider.<id>.options.fetch` in the config
 * hook, it sees every response of that provider (each retry included) and reports the rate-limit
 * headers, the request's model and its session (`x-session-affinity`) to the engine. It never changes
 * a request or a response, never waits for the report, and swallows its own failures.
 */
import { isRecord, type JsonRecord } from "../core/json.js"
import type { Slot } from "../core/pool.js"
import { planWrap, rateLimitHeaders, requestModel } from "../core/quota/wrap.js"

export interface ResponseReport {
  readonly headers: Readonly<Record<string, string>>
  readonly model?: string | undefined
  readonly session?: string | undefined
}

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>

const AFFINITY = "x-session-affinity"

const sessionOf = (input: string | URL | Request, init: RequestInit | undefined): string | undefined => {
  const h = init?.headers ?? (input instanceof Request ? input.headers : undefined)
  if (h === undefined) return undefined
  if (h instanceof Headers) return h.get(AFFINITY) ?? undefined
  if (Array.isArray(h)) return h.find((pair) => pair[0]?.toLowerCase() === AFFINITY)?.[1]
  for (const [k, v] of Object.entries(h)) if (k.toLowerCase() === AFFINITY && typeof v === "string") return v
  return undefined
}

const urlOf = (input: string | URL | Request): string => (typeof input === "string" ? input : input instanceof URL ? input.href : input.url)

/**
 * `provider`'s wrapper: the response of `inner` (the global `fetch` at call time, unless given),
 * returned as it came; `report` is called synchronously with what its headers say, when they say
 * anything about rate limits.
 */
export const quotaFetch = (provider: string, report: (r: ResponseReport) => void, inner?: Fetch): Fetch =>
  async (input, init) => {
    const response = await (inner ?? globalThis.fetch)(input, init)
    try {
      const headers = rateLimitHeaders(response.headers)
      if (headers !== undefined) report({ headers, model: requestModel(provider, urlOf(input), init?.body), session: sessionOf(input, init) })
    } catch {
      // sensing is best effort: the response goes back untouched whatever happened here
    }
    return response
  }

/**
 * Puts the wrapper on every provider `planWrap` picks (creating `provider.<id>.options` when absent);
 * returns the providers that keep their own `fetch`. Run on every config hook: a wrapper already in
 * place is this plugin's (it is replaced, never stacked).
 */
export const installQuotaFetch = (config: JsonRecord, slots: ReadonlyArray<Slot>, report: (r: ResponseReport) => void, mine: WeakSet<object>): ReadonlyArray<string> => {
  const providers: JsonRecord = isRecord(config.provider) ? config.provider : {}
  // our own wrappers from an earlier hook run are not "the provider's own fetch"
  for (const block of Object.values(providers)) {
    if (isRecord(block) && isRecord(block.options) && typeof block.options.fetch === "function" && mine.has(block.options.fetch)) delete block.options.fetch
  }
  const plan = planWrap(config, slots)
  if (plan.wrap.length === 0) return plan.ownFetch
  config.provider = providers
  for (const name of plan.wrap) {
    const block = isRecord(providers[name]) ? (providers[name] as JsonRecord) : (providers[name] = {})
    const options = isRecord(block.options) ? block.options : (block.options = {})
    const f = quotaFetch(name, report)
    mine.add(f)
    options.fetch = f
  }
  return plan.ownFetch
}
