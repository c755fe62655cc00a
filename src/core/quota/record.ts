/**
 * Per-model quota records (issue 12, US-48): what the last provider response said about a model's quota,
 * shared by every process as `quota.<enc>.json` in the state directory (`<enc>` as cooldown files encode
 * a model, core/pool/cooldownFile.ts). Pure: encoding, tolerant decoding (effect/Schema), staleness and the
 * write throttle; `now` is always passed in.
 */
import { Option, Schema } from "effect"
import { STATED_RESET_MAX_MS } from "../constants.js"
import { modelFileKey } from "../pool/cooldownFile.js"
import { EpochMs, orElse } from "../tolerant.js"
import type { QuotaDimension, QuotaObservation } from "./headers.js"

export interface QuotaFigures {
  readonly remaining: number
  readonly limit?: number
  readonly resetAt?: number
}

export interface QuotaRecord {
  readonly model: string
  readonly requests?: QuotaFigures
  readonly tokens?: QuotaFigures
  /** When the response these figures came from was seen (epoch ms). */
  readonly seenAt: number
}

/** A record without a reset is stale this long after it was seen. */
export const QUOTA_UNDATED_STALE_MS = 10 * 60_000
/** The write throttle: a record is rewritten at least this often while responses keep coming. */
export const QUOTA_REWRITE_MS = 5_000
/** A reset that moved by more than this is rewritten at once. */
export const QUOTA_RESET_SLACK_MS = 1_000
/** Remaining is watched in bands of this fraction of the limit. */
const BANDS = 10

/** `opencode/big-pickle` → `quota.opencode_2fbig-pickle.json`. */
export const quotaFileName = (model: string): string => `quota.${modelFileKey(model)}.json`

export const QUOTA_FILE = /^quota\..+\.json$/

const figures = (d: QuotaDimension | undefined, retryAt: number | undefined): QuotaFigures | undefined => {
  if (d === undefined || !Number.isFinite(d.remaining)) return undefined
  const remaining = Math.max(0, d.remaining)
  // an exhausted dimension without a reset of its own resets when the provider said to retry
  const resetAt = d.resetAt ?? (remaining === 0 ? retryAt : undefined)
  return {
    remaining,
    ...(d.limit !== undefined && Number.isFinite(d.limit) && d.limit > 0 ? { limit: d.limit } : {}),
    ...(resetAt !== undefined ? { resetAt } : {})
  }
}

/**
 * The record of one observation, or `undefined` when it says nothing about requests or tokens (a bare
 * `retry-after` is a cooldown signal, not a quota figure). Negative remaining counts read as 0.
 */
export const recordOf = (model: string, observation: QuotaObservation, now: number): QuotaRecord | undefined => {
  const requests = figures(observation.requests, observation.retryAt)
  const tokens = figures(observation.tokens, observation.retryAt)
  if (requests === undefined && tokens === undefined) return undefined
  return { model, ...(requests !== undefined ? { requests } : {}), ...(tokens !== undefined ? { tokens } : {}), seenAt: now }
}

/** The file body. */
export const encodeQuota = (r: QuotaRecord): string =>
  JSON.stringify({ version: 1, model: r.model, requests: r.requests, tokens: r.tokens, seenAt: r.seenAt })

/** Counts stop at 2^53 − 1: a larger figure is garbage (no quota is that big) and would print as `1e+308` or `Infinity%`. */
const NonNegative = Schema.Number.pipe(Schema.filter((n) => (Number.isFinite(n) && n >= 0 && n <= Number.MAX_SAFE_INTEGER) || "a number from 0 to 2^53 − 1"))
const Positive = Schema.Number.pipe(Schema.filter((n) => (Number.isFinite(n) && n > 0 && n <= Number.MAX_SAFE_INTEGER) || "a number above 0, up to 2^53 − 1"))

/** One dimension: `remaining` is required; a bad `limit` or `resetAt` reads as absent. */
const Figures = Schema.Struct({
  remaining: NonNegative,
  limit: orElse(Schema.UndefinedOr(Positive), undefined),
  resetAt: orElse(Schema.UndefinedOr(EpochMs), undefined)
})

const decodeFigures = Schema.decodeUnknownOption(Figures)

/** A dimension read tolerantly: absent when `Figures` cannot decode it (missing, not an object, no usable `remaining`). */
const TolerantFigures = Schema.transform(Schema.Unknown, Schema.UndefinedOr(Schema.typeSchema(Figures)), {
  strict: true,
  decode: (u) => Option.getOrUndefined(decodeFigures(u)),
  encode: (a) => a
})

/** `model` and `seenAt` are required; a dimension that is not a usable object reads as absent. */
const QuotaJson = Schema.parseJson(
  Schema.Struct({
    model: Schema.String,
    requests: TolerantFigures,
    tokens: TolerantFigures,
    seenAt: EpochMs
  })
)

const decodeFile = Schema.decodeUnknownOption(QuotaJson)

const clean = (d: Schema.Schema.Type<typeof Figures> | undefined): QuotaFigures | undefined =>
  d === undefined ? undefined : { remaining: d.remaining, ...(d.limit !== undefined ? { limit: d.limit } : {}), ...(d.resetAt !== undefined ? { resetAt: d.resetAt } : {}) }

/** A parsed file, or `undefined` when it is unusable (not JSON, no `model` or `seenAt`, neither dimension). Never throws. */
export const decodeQuota = (text: string): QuotaRecord | undefined => {
  const file = decodeFile(text)
  if (Option.isNone(file)) return undefined
  const r = file.value
  const requests = clean(r.requests)
  const tokens = clean(r.tokens)
  if (requests === undefined && tokens === undefined) return undefined
  return { model: r.model, ...(requests !== undefined ? { requests } : {}), ...(tokens !== undefined ? { tokens } : {}), seenAt: r.seenAt }
}

/** The latest reset of the record's dimensions, if any has one. */
export const freshestReset = (r: QuotaRecord): number | undefined => {
  const resets = [r.requests?.resetAt, r.tokens?.resetAt].filter((t): t is number => t !== undefined)
  return resets.length === 0 ? undefined : Math.max(...resets)
}

/**
 * Whether no reading could have produced the record (issue 18): it was seen after `now`, or a dimension
 * resets more than 7 days after it was seen (every reset read from headers is within 7 days of the response).
 */
const isGarbage = (r: QuotaRecord, now: number): boolean =>
  r.seenAt > now || [r.requests?.resetAt, r.tokens?.resetAt].some((t) => t !== undefined && t - r.seenAt > STATED_RESET_MAX_MS)

/**
 * A record is stale once its figures no longer describe the quota: when its freshest reset has passed
 * (every dimension has refilled since), or, with no reset to go by, when it was seen more than 10 minutes
 * ago (providers that send no reset refill within minutes; an older figure is more likely wrong than right).
 * A record seen in the future, or with a reset more than 7 days after it was seen, is stale at once.
 */
export const isStale = (r: QuotaRecord, now: number): boolean => {
  if (isGarbage(r, now)) return true
  const reset = freshestReset(r)
  return reset === undefined ? now - r.seenAt > QUOTA_UNDATED_STALE_MS : now >= reset
}

/** Which tenth of the limit `remaining` is in (0..10), or undefined without a limit. */
const band = (f: QuotaFigures): number | undefined => (f.limit === undefined ? undefined : Math.min(BANDS, Math.floor((f.remaining * BANDS) / f.limit)))

const dimensionMoved = (prev: QuotaFigures | undefined, next: QuotaFigures | undefined): boolean => {
  if (prev === undefined || next === undefined) return prev !== next
  if (band(prev) !== band(next)) return true
  if (next.remaining === 0 && prev.remaining !== 0) return true
  if (prev.resetAt === undefined || next.resetAt === undefined) return prev.resetAt !== next.resetAt
  return Math.abs(prev.resetAt - next.resetAt) > QUOTA_RESET_SLACK_MS
}

/**
 * The write throttle: whether `next` should replace the last written record `previous` on disk. Yes when
 * there was none, when remaining crossed a 10 %-of-limit band or reached 0, when a reset moved by more
 * than 1 s (or a dimension or its reset appeared or vanished), or when the previous write is ≥ 5 s old
 * (or dated after `next`: a clock stepped back); otherwise no, so a busy provider does not cost a file
 * write per response.
 */
export const shouldWrite = (previous: QuotaRecord | undefined, next: QuotaRecord): boolean => {
  if (previous === undefined || previous.model !== next.model) return true
  const age = next.seenAt - previous.seenAt
  if (age >= QUOTA_REWRITE_MS || age < 0) return true
  return dimensionMoved(previous.requests, next.requests) || dimensionMoved(previous.tokens, next.tokens)
}
