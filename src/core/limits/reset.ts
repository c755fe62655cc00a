/**
 * Stated resets (SPEC §7.6, TRACE.md §6): how long a provider asked us to wait.
 * Sources in order; the first that yields a usable window wins. A window is usable when it is a number
 * within (0, 7 days] once rounded up to a whole ms; anything else (zero, negative, unreadable, not a
 * representable time, or further than 7 days away) is absent, never capped (issue 18: such a reset is
 * garbage, and the usual strike window is a better guess than a week).
 *
 * Bounded work: a header value is read from its first RESET_VALUE_MAX_CHARS characters, and so is the
 * run of duration components after a reset phrase in body text; the text itself is searched whole, by
 * regular expressions without nested unbounded repetition (linear in its length).
 */
import { BREAKER_NEXT_MS, DAY_MS, HOUR_MS, STATED_RESET_LONG_MAX_MS, STATED_RESET_MAX_MS } from "../constants.js"
import { nextMidnight, zoneOffsetMs as zoneOffsetAt, type Zone } from "./providerFamily.js"

/**
 * Where a window came from: `detail` (a RetryInfo `retryDelay`), `body` (a body's `resets_in_seconds`
 * or `resets_at`), `text`, `header`, `retry` (a retry status's `next`), `day` (a per-day quota's midnight).
 */
export type ResetSource = "detail" | "body" | "text" | "header" | "retry" | "day"

export interface StatedReset {
  readonly ms: number
  readonly source: ResetSource
  /** Issue 35: the window the provider stated when it was beyond 7 days and `ms` is the 7-day cap. */
  readonly statedMs?: number | undefined
}

export type Headers = Readonly<Record<string, unknown>>

/** A rate-limit header value, or a duration run in body text, is read from this many characters (1 KiB). */
export const RESET_VALUE_MAX_CHARS = 1_024

/** A header value cut to its first RESET_VALUE_MAX_CHARS characters; anything but a string is left as it is. */
export const boundedValue = <A>(value: A): A =>
  (typeof value === "string" && value.length > RESET_VALUE_MAX_CHARS ? value.slice(0, RESET_VALUE_MAX_CHARS) : value) as A

/**
 * A reset as a window: `ms` from now rounded up to a whole ms when that is within (0, 7 days], else
 * `undefined` (zero, negative, NaN, infinite, or further than STATED_RESET_MAX_MS: absent, not capped).
 */
export const resetWindow = (ms: number): number | undefined => {
  if (!Number.isFinite(ms)) return undefined
  const whole = Math.ceil(ms)
  return whole > 0 && whole <= STATED_RESET_MAX_MS ? whole : undefined
}

const UNIT_MS: ReadonlyArray<readonly [RegExp, number]> = [
  [/^ns$/, 1e-6],
  [/^(us|µs)$/, 1e-3],
  [/^ms$/, 1],
  [/^(s|sec|secs|second|seconds)$/, 1_000],
  [/^(m|min|mins|minute|minutes)$/, 60_000],
  [/^(h|hr|hrs|hour|hours)$/, HOUR_MS],
  [/^(d|day|days)$/, DAY_MS]
]
/** Longest spellings first, so `ms` is not read as `m` + `s` and `mins` not as `m`. */
const UNIT = "(?:ns|us|µs|ms|seconds|second|secs|sec|s|minutes|minute|mins|min|m|hours|hour|hrs|hr|h|days|day|d)"
const COMPONENT = `\\d+(?:\\.\\d+)?\\s*${UNIT}`
const COMPONENT_RE = new RegExp(`(\\d+(?:\\.\\d+)?)\\s*(${UNIT})`, "gi")
/** A run of duration components from the start of a (bounded) string. */
const DURATION_RUN = new RegExp(`^${COMPONENT}(?:\\s*${COMPONENT})*`, "i")
/** A whole header value that is a duration (`6m0s`, `20ms`). */
const DURATION_VALUE = new RegExp(`^(?:${COMPONENT})+$`, "i")

const unitMs = (unit: string): number => {
  const u = unit.toLowerCase()
  for (const [re, ms] of UNIT_MS) if (re.test(u)) return ms
  return Number.NaN
}

/** `1m20s`, `6m0s`, `2hr 17min`, `1.5s`: the sum of the components, or NaN. */
export const parseDuration = (text: string): number => {
  let total = 0
  let any = false
  for (const m of text.matchAll(COMPONENT_RE)) {
    total += Number(m[1]) * unitMs(m[2]!)
    any = true
  }
  return any ? total : Number.NaN
}

/**
 * The duration form's phrase, where at least one component follows; the components themselves are read
 * afterwards from the next RESET_VALUE_MAX_CHARS characters (DURATION_RUN). Matching the whole run here
 * would cost time in proportion to its length, unbounded in a long message (`"1h" × 500 000`).
 */
const DURATION_FORM = new RegExp(`(?:resets?|try again|retrying|retry)[ -](?:in|after) ?(?=${COMPONENT})`, "i")
const RFC3339 = "\\d{4}-\\d{2}-\\d{2}[Tt ]\\d{2}:\\d{2}(?::\\d{2}(?:\\.\\d+)?)?(?:[Zz]|[+-]\\d{2}:\\d{2})?"
const ZONE = "(?:\\s*(UTC|GMT|Z|[+-]\\d{2}:\\d{2}))?"
const TIME_FORM = new RegExp(
  `(?:将在|于)\\s*(${RFC3339})\\s*重置|resets? at (?:(${RFC3339})|(\\d{10})(?!\\d)|(\\d{1,2}):(\\d{2})(?::(\\d{2}))?(?:\\s*(am|pm))?${ZONE}|(\\d{1,2})\\s*(am|pm)${ZONE})`,
  "i"
)


/** Parses an RFC 3339 timestamp; a missing zone means `zone` (UTC unless given). */
export const parseRfc3339 = (text: string, zone: Zone = "UTC"): number => {
  const t = text.trim()
  if (!new RegExp(`^${RFC3339}$`).test(t)) return Number.NaN
  if (/([Zz]|[+-]\d{2}:\d{2})$/.test(t)) return Date.parse(t.replace(" ", "T"))
  const asUtc = Date.parse(`${t.replace(" ", "T")}Z`)
  return asUtc - zoneOffsetAt(zone, asUtc - zoneOffsetAt(zone, asUtc))
}

const zoneOffsetMs = (zone: string | undefined, fallback: number): number => {
  if (zone === undefined) return fallback
  const m = /^([+-])(\d{2}):(\d{2})$/.exec(zone)
  if (m === null) return 0
  const sign = m[1] === "-" ? -1 : 1
  return sign * (Number(m[2]) * HOUR_MS + Number(m[3]) * 60_000)
}

/** The next instant strictly after `now` at the given wall-clock time in the given zone (else `fallback`), or NaN. */
const nextWallClock = (now: number, hour: number, minute: number, second: number, zone: string | undefined, fallback: Zone): number => {
  if (hour > 23 || minute > 59 || second > 59) return Number.NaN
  const offset = zoneOffsetMs(zone, zoneOffsetAt(fallback, now))
  const dayStart = Math.floor((now + offset) / DAY_MS) * DAY_MS - offset
  let t = dayStart + hour * HOUR_MS + minute * 60_000 + second * 1_000
  while (t <= now) t += DAY_MS
  return t
}

const to24h = (hour: number, meridiem: string | undefined): number => {
  if (meridiem === undefined) return hour
  if (hour < 1 || hour > 12) return Number.NaN
  const pm = meridiem.toLowerCase() === "pm"
  return (hour % 12) + (pm ? 12 : 0)
}

/** The components after a duration phrase ending at `from`, read from the next RESET_VALUE_MAX_CHARS characters. */
const durationAt = (text: string, from: number): number => {
  const run = DURATION_RUN.exec(text.slice(from, from + RESET_VALUE_MAX_CHARS))
  return run === null ? Number.NaN : parseDuration(run[0])
}

/**
 * Source 1: the earliest duration or time form in the body text, as ms from now (may be ≤ 0, NaN, or
 * further than 7 days: `statedReset` judges it).
 */
export const resetFromText = (text: string, now: number, zone: Zone = "UTC"): number => {
  const d = DURATION_FORM.exec(text)
  const t = TIME_FORM.exec(text)
  if (d === null && t === null) return Number.NaN
  if (d !== null && (t === null || d.index <= t.index)) return durationAt(text, d.index + d[0].length)
  const m = t!
  const rfc = m[1] ?? m[2]
  if (rfc !== undefined) return parseRfc3339(rfc, zone) - now
  if (m[3] !== undefined) return Number(m[3]) * 1_000 - now
  if (m[4] !== undefined) {
    const hour = to24h(Number(m[4]), m[7])
    return nextWallClock(now, hour, Number(m[5]), m[6] === undefined ? 0 : Number(m[6]), m[8], zone) - now
  }
  return nextWallClock(now, to24h(Number(m[9]), m[10]), 0, 0, m[11], zone) - now
}

const IMF_FIXDATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/

/** The value of the header `name` (any case), cut to RESET_VALUE_MAX_CHARS characters. */
const headerValue = (headers: Headers | undefined, name: string): unknown => {
  if (headers === undefined) return undefined
  for (const key of Object.keys(headers)) if (key.toLowerCase() === name) return boundedValue(headers[key])
  return undefined
}

/** A plain non-negative decimal (`30`, `1.5`), or NaN: no sign, exponent or unit. */
export const plainNumber = (value: unknown): number => {
  if (typeof value === "number") return value
  if (typeof value === "string" && /^\s*\d+(?:\.\d+)?\s*$/.test(value)) return Number(value)
  return Number.NaN
}

/** A plain number at or above this is epoch milliseconds (2001-09-09 onwards); at or above 1e9, epoch seconds. */
export const EPOCH_MS_MIN = 1e12

/** A reset stated as a plain number, as ms from now: epoch ms (≥ 1e12), epoch seconds (≥ 1e9), else seconds. */
export const numericReset = (n: number, now: number): number => (n >= EPOCH_MS_MIN ? n - now : n >= 1e9 ? n * 1_000 - now : n * 1_000)

/** One `x-ratelimit-reset*` value as ms from now: a duration, an RFC 3339 time, or a plain number. */
export const rateLimitResetValue = (value: unknown, now: number): number => {
  const n = plainNumber(value)
  if (!Number.isNaN(n)) return numericReset(n, now)
  if (typeof value !== "string") return Number.NaN
  const v = value.trim()
  const rfc = parseRfc3339(v)
  if (!Number.isNaN(rfc)) return rfc - now
  return DURATION_VALUE.test(v) ? parseDuration(v) : Number.NaN
}

/** An HTTP date (IMF-fixdate only) as epoch ms, or NaN. */
export const parseHttpDate = (value: unknown): number =>
  typeof value === "string" && IMF_FIXDATE.test(value.trim()) ? Date.parse(value.trim()) : Number.NaN

/** One `retry-after` value as ms from now: seconds (decimals allowed) or an HTTP date, or NaN. */
export const retryAfterValue = (value: unknown, now: number): number => {
  const seconds = plainNumber(value)
  return Number.isNaN(seconds) ? parseHttpDate(value) - now : seconds * 1_000
}

/**
 * Sources 2–4: `retry-after-ms`, `retry-after`, then the largest `x-ratelimit-reset*`, as a window
 * (`resetWindow`: within (0, 7 days]) or NaN. A source whose value is not a usable window is absent and
 * the next is tried; among `x-ratelimit-reset*` only usable windows compete. Each value is read from its
 * first RESET_VALUE_MAX_CHARS characters.
 */
export const resetFromHeaders = (headers: Headers | undefined, now: number): number => {
  if (headers === undefined) return Number.NaN
  const ms = resetWindow(plainNumber(headerValue(headers, "retry-after-ms")))
  if (ms !== undefined) return ms
  const after = resetWindow(retryAfterValue(headerValue(headers, "retry-after"), now))
  if (after !== undefined) return after
  let largest: number | undefined
  for (const key of Object.keys(headers)) {
    const v = resetWindow(resetHeaderValue(headers, key.toLowerCase(), boundedValue(headers[key]), now))
    if (v !== undefined && (largest === undefined || v > largest)) largest = v
  }
  return largest ?? Number.NaN
}

const ANTHROPIC_RESET = /^anthropic-ratelimit-[a-z-]+-reset$/
const CODEX_RESET = /^x-codex-(primary|secondary)-reset-(after-seconds|at)$/

/**
 * One reset header as ms from now, or NaN when `name` is not one: `x-ratelimit-reset*` (SPEC §7.6
 * source 4, epoch ms told apart by magnitude), `anthropic-ratelimit-*-reset` (RFC 3339), and a ChatGPT
 * plan's `x-codex-{primary,secondary}-reset-after-seconds` / `-reset-at` (epoch seconds), the latter
 * only for a window whose `x-codex-*-used-percent` is 100 or more, or not stated.
 */
const resetHeaderValue = (headers: Headers, name: string, value: unknown, now: number): number => {
  if (name.startsWith("x-ratelimit-reset") || ANTHROPIC_RESET.test(name)) return rateLimitResetValue(value, now)
  const codex = CODEX_RESET.exec(name)
  if (codex === null) return Number.NaN
  const used = plainNumber(headerValue(headers, `x-codex-${codex[1]}-used-percent`))
  if (!Number.isNaN(used) && used < 100) return Number.NaN
  const n = plainNumber(value)
  return codex[2] === "at" ? numericReset(n, now) : n * 1_000
}

export interface ResetInput {
  readonly text: string
  readonly headers?: Headers | undefined
  /** A retry status's `next` (epoch ms); only the last source reads it. */
  readonly next?: number | undefined
  readonly now: number
  /** A RetryInfo `retryDelay`, in ms. */
  readonly retryDelayMs?: number | undefined
  /** A body's `resets_in_seconds`, in ms. */
  readonly resetsInMs?: number | undefined
  /** A body's `resets_at`: epoch seconds or ms, or an RFC 3339 string. */
  readonly resetsAt?: unknown
  /** The zone of a wall-clock time stated without one (the provider's, docs/CLASSIFICATION.md). */
  readonly zone?: Zone | undefined
  /** A per-day quota: the window lasts at least until the next midnight of this zone. */
  readonly dayEnd?: Zone | undefined
  /**
   * A quota (issue 35): a body field or body text stating a reset beyond 7 days but within 31 days (a
   * monthly plan) is kept, capped at 7 days, its stated window in `statedMs`. Otherwise such a reset is absent.
   */
  readonly long?: boolean | undefined
}

/** A reset beyond 7 days but within STATED_RESET_LONG_MAX_MS, as the 7-day cap with what was stated; else undefined. */
const longWindow = (ms: number, source: ResetSource): StatedReset | undefined => {
  if (!Number.isFinite(ms)) return undefined
  const whole = Math.ceil(ms)
  return whole > STATED_RESET_MAX_MS && whole <= STATED_RESET_LONG_MAX_MS ? { ms: STATED_RESET_MAX_MS, source, statedMs: whole } : undefined
}

const bodyResetAt = (value: unknown, now: number): number => {
  if (typeof value === "number") return numericReset(value, now)
  if (typeof value !== "string") return Number.NaN
  const n = plainNumber(value)
  return Number.isNaN(n) ? parseRfc3339(value.slice(0, RESET_VALUE_MAX_CHARS)) - now : numericReset(n, now)
}

/** The sources in order (docs/CLASSIFICATION.md "Stated resets"); the first usable window wins. */
const firstStated = (input: ResetInput): StatedReset | undefined => {
  const { headers, next, now, text } = input
  const detail = input.retryDelayMs === undefined ? undefined : resetWindow(input.retryDelayMs)
  if (detail !== undefined) return { ms: detail, source: "detail" }
  const bodyIn = input.resetsInMs ?? Number.NaN
  const bodyAt = bodyResetAt(input.resetsAt, now)
  const body = resetWindow(bodyIn) ?? resetWindow(bodyAt)
  if (body !== undefined) return { ms: body, source: "body" }
  if (input.long === true) {
    const long = longWindow(bodyIn, "body") ?? longWindow(bodyAt, "body")
    if (long !== undefined) return long
  }
  const textMs = resetFromText(text, now, input.zone)
  const fromText = resetWindow(textMs)
  if (fromText !== undefined) return { ms: fromText, source: "text" }
  if (input.long === true) {
    const long = longWindow(textMs, "text")
    if (long !== undefined) return long
  }
  const fromHeaders = resetWindow(resetFromHeaders(headers, now))
  if (fromHeaders !== undefined) return { ms: fromHeaders, source: "header" }
  const retry = next !== undefined && next - now >= BREAKER_NEXT_MS ? resetWindow(next - now) : undefined
  return retry === undefined ? undefined : { ms: retry, source: "retry" }
}

/**
 * SPEC §7.6 as amended by issues 18 and 19: the stated reset, rounded up to a whole ms, or `undefined`.
 * A source whose window is not within (0, 7 days] is absent and the next source is tried; none is ever
 * capped. A per-day quota (`dayEnd`) lasts at least until that zone's next midnight.
 */
export const statedReset = (input: ResetInput): StatedReset | undefined => {
  const stated = firstStated(input)
  if (input.dayEnd === undefined) return stated
  const day = resetWindow(nextMidnight(input.dayEnd, input.now) - input.now)
  return day !== undefined && (stated === undefined || day > stated.ms) ? { ms: day, source: "day" } : stated
}
