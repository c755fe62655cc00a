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
import { BREAKER_NEXT_MS, STATED_RESET_MAX_MS } from "./constants.js"

export type ResetSource = "text" | "header" | "retry"

export interface StatedReset {
  readonly ms: number
  readonly source: ResetSource
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
  [/^(h|hr|hrs|hour|hours)$/, 3_600_000],
  [/^(d|day|days)$/, 86_400_000]
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
  `resets? at (?:(${RFC3339})|(\\d{10})(?!\\d)|(\\d{1,2}):(\\d{2})(?::(\\d{2}))?(?:\\s*(am|pm))?${ZONE}|(\\d{1,2})\\s*(am|pm)${ZONE})`,
  "i"
)

const DAY_MS = 86_400_000

/** Parses an RFC 3339 timestamp; a missing zone means UTC. */
export const parseRfc3339 = (text: string): number => {
  const t = text.trim()
  if (!new RegExp(`^${RFC3339}$`).test(t)) return Number.NaN
  const zoned = /([Zz]|[+-]\d{2}:\d{2})$/.test(t) ? t : `${t}Z`
  return Date.parse(zoned.replace(" ", "T"))
}

const zoneOffsetMs = (zone: string | undefined): number => {
  if (zone === undefined) return 0
  const m = /^([+-])(\d{2}):(\d{2})$/.exec(zone)
  if (m === null) return 0
  const sign = m[1] === "-" ? -1 : 1
  return sign * (Number(m[2]) * 3_600_000 + Number(m[3]) * 60_000)
}

/** The next instant strictly after `now` at the given wall-clock time in the given zone, or NaN. */
const nextWallClock = (now: number, hour: number, minute: number, second: number, zone: string | undefined): number => {
  if (hour > 23 || minute > 59 || second > 59) return Number.NaN
  const offset = zoneOffsetMs(zone)
  const dayStart = Math.floor((now + offset) / DAY_MS) * DAY_MS - offset
  let t = dayStart + hour * 3_600_000 + minute * 60_000 + second * 1_000
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
export const resetFromText = (text: string, now: number): number => {
  const d = DURATION_FORM.exec(text)
  const t = TIME_FORM.exec(text)
  if (d === null && t === null) return Number.NaN
  if (d !== null && (t === null || d.index <= t.index)) return durationAt(text, d.index + d[0].length)
  const m = t!
  if (m[1] !== undefined) return parseRfc3339(m[1]) - now
  if (m[2] !== undefined) return Number(m[2]) * 1_000 - now
  if (m[3] !== undefined) {
    const hour = to24h(Number(m[3]), m[6])
    return nextWallClock(now, hour, Number(m[4]), m[5] === undefined ? 0 : Number(m[5]), m[7]) - now
  }
  return nextWallClock(now, to24h(Number(m[8]), m[9]), 0, 0, m[10]) - now
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

/** One `x-ratelimit-reset*` value as ms from now: a duration, an RFC 3339 time, or a plain number. */
export const rateLimitResetValue = (value: unknown, now: number): number => {
  const n = plainNumber(value)
  if (!Number.isNaN(n)) return n >= 1e9 ? n * 1_000 - now : n * 1_000
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
    if (!key.toLowerCase().startsWith("x-ratelimit-reset")) continue
    const v = resetWindow(rateLimitResetValue(boundedValue(headers[key]), now))
    if (v !== undefined && (largest === undefined || v > largest)) largest = v
  }
  return largest ?? Number.NaN
}

export interface ResetInput {
  readonly text: string
  readonly headers?: Headers | undefined
  /** A retry status's `next` (epoch ms); only source 5 reads it. */
  readonly next?: number | undefined
  readonly now: number
}

/**
 * SPEC §7.6 as amended by issue 18: the stated reset, rounded up to a whole ms, or `undefined`. A source
 * whose window is not within (0, 7 days] is absent and the next source is tried; none is ever capped.
 */
export const statedReset = ({ headers, next, now, text }: ResetInput): StatedReset | undefined => {
  const fromText = resetWindow(resetFromText(text, now))
  if (fromText !== undefined) return { ms: fromText, source: "text" }
  const fromHeaders = resetWindow(resetFromHeaders(headers, now))
  if (fromHeaders !== undefined) return { ms: fromHeaders, source: "header" }
  const retry = next !== undefined && next - now >= BREAKER_NEXT_MS ? resetWindow(next - now) : undefined
  return retry === undefined ? undefined : { ms: retry, source: "retry" }
}
