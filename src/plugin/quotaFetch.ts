/**
 * The quota-sensing fetch wrapper (issue 12, US-48): set as `provider.<id>.options.fetch` in the config
 * hook, it sees every response of that provider (each retry included) and reports the rate-limit
 * headers, the request's model and its session (`x-session-affinity`) to the engine; an error answer's
 * status, headers and body go to the engine too (issue 19: opencode's retry status carries only a
 * message). It never changes a request or a response, never waits for a report, and swallows its own
 * failures.
 */
import { isRecord, type JsonRecord } from "../core/json.js"
import type { Slot } from "../core/pool/pool.js"
import { planWrap, rateLimitHeaders, requestModel } from "../core/quota/wrap.js"

export interface ResponseReport {
  /** The rate-limit headers; empty when the response had none. */
  readonly headers: Readonly<Record<string, string>>
  readonly model?: string | undefined
  readonly session?: string | undefined
  /** The provider answered without an error (a status below 400): the request counts in its group's learned budget (issue 35). */
  readonly ok?: boolean | undefined
}

/** A provider's error answer to a request of `session` (issue 19): its status, headers and, read apart, its body. */
export interface FailureReport {
  readonly session: string
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  /** The first FAILURE_BODY_MAX_BYTES of the body, read from a clone (never delaying opencode's own read). */
  readonly body: Promise<string>
}

/** How much of an error body is read: real ones are under 2 KiB. */
export const FAILURE_BODY_MAX_BYTES = 16_384
/** How many headers of an error answer are kept, each value cut to 1 KiB. */
const FAILURE_HEADERS_MAX = 100

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

/** An error body still arriving after this long is read as far as it came (a server that never ends it). */
export const FAILURE_READ_MS = 5_000

/**
 * The first `max` bytes of a body, decoded as UTF-8, as far as it arrived within `ms`; "" when it cannot
 * be read. Never rejects.
 */
export const readBounded = async (response: Response, max: number = FAILURE_BODY_MAX_BYTES, ms: number = FAILURE_READ_MS): Promise<string> => {
  let timer: ReturnType<typeof setTimeout> | undefined
  try {
    const reader = response.body?.getReader()
    if (reader === undefined) return ""
    const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), ms)))
    const chunks: Array<Uint8Array> = []
    let size = 0
    let ended = false
    while (size < max) {
      const next = await Promise.race([reader.read(), late])
      if (next === "late") break
      if (next.done) {
        ended = true
        break
      }
      chunks.push(next.value)
      size += next.value.byteLength
    }
    if (!ended) void reader.cancel().catch(() => undefined)
    const all = new Uint8Array(Math.min(size, max))
    let at = 0
    for (const c of chunks) {
      const part = c.subarray(0, Math.min(c.byteLength, all.byteLength - at))
      all.set(part, at)
      at += part.byteLength
      if (at >= all.byteLength) break
    }
    return new TextDecoder("utf-8", { fatal: false }).decode(all)
  } catch {
    return ""
  } finally {
    clearTimeout(timer)
  }
}

const allHeaders = (headers: Headers): Record<string, string> => {
  const out: Record<string, string> = {}
  let n = 0
  for (const [name, value] of headers) {
    if (++n > FAILURE_HEADERS_MAX) break
    out[name.toLowerCase()] = value.length > 1_024 ? value.slice(0, 1_024) : value
  }
  return out
}

const urlOf = (input: string | URL | Request): string => (typeof input === "string" ? input : input instanceof URL ? input.href : input.url)

/**
 * `provider`'s wrapper: the response of `inner` (the global `fetch` at call time, unless given),
 * returned as it came; `report` is called synchronously with what its headers say, when they say
 * anything about rate limits, and for every answer without an error (`ok`).
 */
export const quotaFetch = (provider: string, report: (r: ResponseReport) => void, inner?: Fetch, fail?: (f: FailureReport) => void): Fetch =>
  async (input, init) => {
    const response = await (inner ?? globalThis.fetch)(input, init)
    try {
      const session = sessionOf(input, init)
      const headers = rateLimitHeaders(response.headers)
      const ok = response.status < 400
      // every answer without an error counts (issue 35: budgets no header states are learned from the counts)
      if (headers !== undefined || ok) report({ headers: headers ?? {}, model: requestModel(provider, urlOf(input), init?.body), session, ok })
      // an error answer's body says why (issue 19); read from a clone so opencode's own read is untouched
      if (fail !== undefined && session !== undefined && response.status >= 400) {
        fail({ session, status: response.status, headers: allHeaders(response.headers), body: readBounded(response.clone()) })
      }
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
export const installQuotaFetch = (
  config: JsonRecord,
  slots: ReadonlyArray<Slot>,
  report: (r: ResponseReport) => void,
  mine: WeakSet<object>,
  fail?: (f: FailureReport) => void
): ReadonlyArray<string> => {
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
    const f = quotaFetch(name, report, undefined, fail)
    mine.add(f)
    options.fetch = f
  }
  return plan.ownFetch
}
