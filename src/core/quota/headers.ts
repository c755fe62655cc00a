/**
 * Quota sensing (issue 12): the rate-limit headers of one provider response as a quota observation.
 * Pure: `now` (epoch ms) is passed in. Reset values are read as SPEC §7.6 reads them (src/core/limits/reset.ts),
 * plus epoch milliseconds and HTTP dates; a reset that is zero, negative, unreadable, not a representable
 * time or further away than STATED_RESET_MAX_MS is absent (issue 18: never capped). A count (remaining,
 * limit) above 2^53 − 1 is unreadable too. Every header value is read from its first
 * RESET_VALUE_MAX_CHARS (1,024) characters, so a huge value costs no more than a short one.
 */
import { boundedValue, parseHttpDate, plainNumber, rateLimitResetValue, resetWindow, retryAfterValue } from "../limits/reset.js"

export interface QuotaDimension {
  readonly remaining: number
  readonly limit: number | undefined
  readonly resetAt: number | undefined
}

export interface QuotaObservation {
  readonly requests: QuotaDimension | undefined
  /** The tightest of tokens, input tokens and output tokens. */
  readonly tokens: QuotaDimension | undefined
  /** From `retry-after-ms`, else `retry-after`: absolute epoch ms. */
  readonly retryAt: number | undefined
}

export type HeaderInput =
  | Iterable<readonly [string, string]>
  | Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

type Field = "remaining" | "limit" | "reset"
/** Where one header family keeps each field: the values found for it. */
type Family = (field: Field) => ReadonlyArray<string>
type Get = (name: string) => ReadonlyArray<string>

/** A plain number at or above this is epoch milliseconds (OpenRouter); below it, reset.ts's reading applies. */
const EPOCH_MS_FROM = 1e12

/** A duration from now as an instant, rounded up to a whole ms; absent unless within (0, 7 days] (`resetWindow`). */
const instant = (ms: number, now: number): number | undefined => {
  const window = resetWindow(ms)
  return window === undefined ? undefined : now + window
}

/**
 * One reset value as epoch ms: a duration (`6m0s`, `20ms`, `1h2m3.5s`), seconds from now (`30`), epoch seconds
 * (≥ 10^9), epoch milliseconds (≥ 10^12), an RFC 3339 time (no zone means UTC) or an HTTP date; read from the
 * value's first 1,024 characters; `undefined` unless within (now, now + 7 days].
 */
export const parseResetValue = (whole: string, now: number): number | undefined => {
  const value = boundedValue(whole)
  const n = plainNumber(value)
  const ms = n >= EPOCH_MS_FROM ? n - now : rateLimitResetValue(value, now)
  return instant(Number.isNaN(ms) ? parseHttpDate(value) - now : ms, now)
}

/** A count: a plain number up to 2^53 − 1 (a larger one is garbage, and would print as `1e+300`). */
const count = (value: string): number | undefined => {
  const n = plainNumber(value)
  return Number.isFinite(n) && n <= Number.MAX_SAFE_INTEGER ? n : undefined
}

const positive = (value: string): number | undefined => {
  const n = count(value)
  return n !== undefined && n > 0 ? n : undefined
}

/** The first usable reading: each value in turn, then the parts of one a Headers object joined with ", ". */
const first = <A>(values: ReadonlyArray<string>, read: (value: string) => A | undefined): A | undefined => {
  for (const value of values) {
    for (const part of value.includes(",") ? [value, ...value.split(",")] : [value]) {
      const a = read(part)
      if (a !== undefined) return a
    }
  }
  return undefined
}

const isIterable = (headers: HeaderInput): headers is Iterable<readonly [string, string]> =>
  typeof (headers as { [Symbol.iterator]?: unknown })[Symbol.iterator] === "function"

/** Lower-cased name → its string values in order, each cut to its first RESET_VALUE_MAX_CHARS characters. */
const collect = (headers: HeaderInput): Map<string, Array<string>> => {
  const table = new Map<string, Array<string>>()
  const pairs: Iterable<readonly [string, unknown]> = isIterable(headers) ? headers : Object.entries(headers)
  for (const [name, value] of pairs) {
    if (typeof name !== "string") continue
    const key = name.toLowerCase()
    for (const v of Array.isArray(value) ? value : [value]) {
      if (typeof v !== "string") continue
      const values = table.get(key)
      if (values === undefined) table.set(key, [boundedValue(v)])
      else values.push(boundedValue(v))
    }
  }
  return table
}

const named = (get: Get, name: (field: Field) => string): Family => (field) => get(name(field))

/** `ratelimit: limit=100, remaining=50, reset=30`, or the later draft's `"default";r=50;t=30`. */
const STRUCTURED_KEYS: Readonly<Record<string, Field>> = { limit: "limit", remaining: "remaining", r: "remaining", reset: "reset", t: "reset" }
const structured = (values: ReadonlyArray<string>): Family => (field) =>
  values.flatMap((value) =>
    value.split(/[,;]/).flatMap((param) => {
      const m = /^\s*([a-z]+)\s*=\s*(\S+)\s*$/i.exec(param)
      return m !== null && STRUCTURED_KEYS[m[1]!.toLowerCase()] === field ? [m[2]!] : []
    })
  )

const dimension = (family: Family, now: number): QuotaDimension | undefined => {
  const remaining = first(family("remaining"), count)
  if (remaining === undefined) return undefined
  return { remaining, limit: first(family("limit"), positive), resetAt: first(family("reset"), (v) => parseResetValue(v, now)) }
}

/** The smallest remaining/limit ratio when every candidate has a limit, else the smallest remaining; ties go to the first. */
const tightest = (candidates: ReadonlyArray<QuotaDimension | undefined>): QuotaDimension | undefined => {
  const found = candidates.filter((d): d is QuotaDimension => d !== undefined)
  const ratios = found.every((d) => d.limit !== undefined)
  const key = (d: QuotaDimension) => (ratios && d.limit !== undefined ? d.remaining / d.limit : d.remaining)
  return found.reduce<QuotaDimension | undefined>((best, d) => (best === undefined || key(d) < key(best) ? d : best), undefined)
}

const openai = (kind: string) => (field: Field) => `x-ratelimit-${field}-${kind}`
const anthropic = (kind: string) => (field: Field) => `anthropic-ratelimit-${kind}-${field}`
const prefixed = (prefix: string) => (field: Field) => `${prefix}${field}`

/** `undefined` when no rate-limit header is present or usable. Header names are matched without regard to case. */
export const parseRateLimitHeaders = (headers: HeaderInput, now: number): QuotaObservation | undefined => {
  const table = collect(headers)
  const get: Get = (name) => table.get(name) ?? []
  const requests = tightest(
    [openai("requests"), anthropic("requests"), prefixed("x-ratelimit-"), prefixed("ratelimit-")]
      .map((name) => named(get, name))
      .concat(structured(get("ratelimit")))
      .map((family) => dimension(family, now))
  )
  const tokens = tightest(
    [openai("tokens"), anthropic("tokens"), anthropic("input-tokens"), anthropic("output-tokens")].map((name) => dimension(named(get, name), now))
  )
  const retryAt =
    first(get("retry-after-ms"), (v) => instant(plainNumber(v), now)) ??
    first(get("retry-after"), (v) => instant(retryAfterValue(v, now), now))
  return requests === undefined && tokens === undefined && retryAt === undefined ? undefined : { requests, tokens, retryAt }
}
