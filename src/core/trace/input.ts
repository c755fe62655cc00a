/**
 * Spawn-trace input lines (TRACE.md §1–2, §6): decoding and field validation (`permit` lines: permitInput.ts).
 *
 * Hand-written rather than `effect/Schema`: this runs once per line of traces that reach millions
 * of lines, and the checks are flat type tests whose messages must name the field. Decoding
 * through Schema measured 4.4× slower, longer than the whole replay (`npm run bench:decode`,
 * docs/PERFORMANCE.md).
 */
import { Schema } from "effect"
import type { CoolReason } from "../pool/cooldown.js"
import { isRecord } from "../json.js"
import { JSON_MAX_DEPTH, TRACE_TIME_MAX_MS } from "../readLimits.js"
import { jsonTooDeep } from "../extract.js"
import { echo } from "../printable.js"
import type { QuotaLevel } from "../quota/low.js"
import { decodeBudget, type GroupBudget } from "../limits/learned.js"
import { decodePermit, type PermitLine } from "./permitInput.js"
import { decodeContext } from "./contextInput.js"
import { fail, Invalid, isTraceTime, type Obj } from "./check.js"
import type { ContextLine } from "../context/refresh.js"

export type { PermitLine } from "./permitInput.js"

/** `pending`: the abort was requested and its outcome arrives later, on its own `aborted` line. */
export type AbortOutcome = "ok" | "fail" | "pending"

export interface PeerCooling {
  readonly model: string
  readonly until: number
  readonly reason: CoolReason
  /** The peer's strikes (default 0), so strikes escalate from what every process recorded. */
  readonly strikes?: number | undefined
  /** A cooldown ended by hand at `until` (`ocpool cool clear`, issue 32): this process's own record ends too. */
  readonly cleared?: true | undefined
}

interface AbortFields {
  readonly abort?: AbortOutcome | undefined
  readonly aborts?: Readonly<Record<string, AbortOutcome>> | undefined
  /** Cooldowns other processes recorded, merged before the line is applied. */
  readonly peerCooling?: ReadonlyArray<PeerCooling> | undefined
}

export type TraceInput =
  | {
      readonly type: "pool"
      readonly at: number
      readonly slots: ReadonlyArray<unknown>
      readonly maxSlots?: unknown
      /** The reaper timings the recording plugin ran with (default SPEC §1). */
      readonly hangMinAgeMs?: number | undefined
      readonly hangSilenceMs?: number | undefined
      /** The option `fallbackModels` (issue 12, US-50), in order; absent means none. */
      readonly fallbacks?: ReadonlyArray<string> | undefined
    }
  | ({
      readonly type: "spawn"
      readonly at: number
      readonly claim: string
      readonly base: string
      readonly session?: string | undefined
      readonly blocked?: ReadonlyArray<string> | undefined
      readonly peers?: Readonly<Record<string, number>> | undefined
    } & AbortFields)
  | { readonly type: "bind"; readonly at: number; readonly claim: string; readonly session: string; readonly activity: boolean }
  | { readonly type: "activity"; readonly at: number; readonly session: string }
  | { readonly type: "release"; readonly at: number; readonly claim: string; readonly ok: boolean; readonly peerCooling?: ReadonlyArray<PeerCooling> | undefined }
  /** The outcome of a claim's abort that was requested as `pending`, when it arrives. */
  | ({ readonly type: "aborted"; readonly at: number; readonly claim: string; readonly ok: boolean } & Pick<AbortFields, "peerCooling">)
  | ({
      readonly type: "limit"
      readonly at: number
      readonly text: string
      readonly status?: number | undefined
      readonly headers?: Readonly<Record<string, unknown>> | undefined
      /** The provider's raw response body, when it is not inside `text` (issue 19). */
      readonly body?: string | undefined
      readonly model?: string | undefined
      readonly provider?: string | undefined
      readonly session?: string | undefined
      /** The session is a root session running this model (US-50): a quota on it may switch it to a fallback. */
      readonly primary?: string | undefined
    } & AbortFields)
  | ({
      readonly type: "retry"
      readonly at: number
      readonly session: string
      readonly message: string
      readonly next: number
      readonly provider?: string | undefined
      /** What the failed response behind the retry said, when the plugin saw it (issue 19). */
      readonly status?: number | undefined
      readonly headers?: Readonly<Record<string, unknown>> | undefined
      readonly body?: string | undefined
      /** As on `limit`. */
      readonly primary?: string | undefined
    } & AbortFields)
  | ({
      readonly type: "sweep"
      readonly at: number
      readonly blocked?: ReadonlyArray<string> | undefined
      readonly spinning?: ReadonlyArray<string> | undefined
      /** Claims whose child streamed no first token within `firstTokenMs` (issue 35). */
      readonly stalled?: ReadonlyArray<string> | undefined
    } & AbortFields)
  | {
      readonly type: "status"
      readonly at: number
      readonly peers?: Readonly<Record<string, number>> | undefined
      readonly peerCooling?: ReadonlyArray<PeerCooling> | undefined
    }
  /** What a provider's rate-limit headers said of a model's quota (issue 12); `reserve` defaults to 0.02. */
  | ({
      readonly type: "quota"
      readonly at: number
      readonly model: string
      readonly requests?: QuotaLevel | undefined
      readonly tokens?: QuotaLevel | undefined
      readonly reserve?: number | undefined
    } & Pick<AbortFields, "peerCooling">)
  /**
   * Learned budgets (issue 35): a request on `model` succeeded (`ok`), or its 429 was a rate limit or
   * quota (`limit`, with the reset it stated or the cooldown it got); `learned` is the model group's
   * shared record as read (absent: none yet); `reserve` defaults to 0.02.
   */
  | ({
      readonly type: "budget"
      readonly at: number
      readonly model: string
      readonly outcome: "ok" | "limit"
      readonly resetAt?: number | undefined
      readonly learned?: GroupBudget | undefined
      readonly reserve?: number | undefined
    } & Pick<AbortFields, "peerCooling">)
  /**
   * A user message of a root session (US-50), sent on `model`: in a fallback episode, or (issue 35) on a
   * model the shared cooldowns (`peerCooling`) say cools, before its request.
   */
  | ({ readonly type: "message"; readonly at: number; readonly session: string; readonly model: string } & Pick<AbortFields, "peerCooling">)
  /** What became of a `switch` decision: the "continue" prompt on `to` was sent (`ok`) or not. */
  | { readonly type: "switched"; readonly at: number; readonly session: string; readonly to: string; readonly ok: boolean }
  /** A step of the permit machine (issue 21) with everything it read: the op, the capacities, the entries. */
  | PermitLine
  /** The context map's refresh machine (issue 23): edits collected, idles, runs bound and ended. */
  | ContextLine

/**
 * A line that cannot be decoded; the caller adds the line number. `message` is the problem as shown;
 * `field` the line's field at fault when the problem is one field's (`at`, `claim`, `limit.remaining`);
 * `unexpected` when the decoder itself threw (a bug, shown as one bounded line).
 */
export class InputError extends Schema.TaggedError<InputError>()("InputError", {
  message: Schema.String,
  field: Schema.optional(Schema.String),
  unexpected: Schema.optional(Schema.Literal(true))
}) {}

const str = (o: Obj, key: string): string => {
  const v = o[key]
  if (v === undefined) return fail(`missing required field "${key}"`, key)
  if (typeof v !== "string") return fail(`field "${key}" must be a string`, key)
  return v
}

const optStr = (o: Obj, key: string): string | undefined => {
  const v = o[key]
  if (v === undefined || v === null) return undefined
  if (typeof v !== "string") return fail(`field "${key}" must be a string`, key)
  return v
}

const num = (o: Obj, key: string): number => {
  const v = o[key]
  if (v === undefined) return fail(`missing required field "${key}"`, key)
  if (typeof v !== "number" || !Number.isFinite(v)) return fail(`field "${key}" must be a number`, key)
  return v
}

/** A required time (epoch ms) within ±TRACE_TIME_MAX_MS. */
const time = (o: Obj, key: string): number => {
  const v = num(o, key)
  return isTraceTime(v) ? v : fail(`field "${key}" must be within ±${TRACE_TIME_MAX_MS} (epoch ms)`, key)
}

const optNum = (o: Obj, key: string): number | undefined => {
  const v = o[key]
  if (v === undefined || v === null) return undefined
  if (typeof v !== "number" || !Number.isFinite(v)) return fail(`field "${key}" must be a number`, key)
  return v
}

const optBool = (o: Obj, key: string, dflt: boolean): boolean => {
  const v = o[key]
  if (v === undefined || v === null) return dflt
  if (typeof v !== "boolean") return fail(`field "${key}" must be a boolean`, key)
  return v
}

const reqBool = (o: Obj, key: string): boolean => {
  const v = o[key]
  if (v === undefined) return fail(`missing required field "${key}"`, key)
  if (typeof v !== "boolean") return fail(`field "${key}" must be a boolean`, key)
  return v
}

/** A reaper timing on a `pool` line: an integer number of milliseconds ≥ 1 (only compared with ages, never added to a time). */
const optTiming = (o: Obj, key: string): number | undefined => {
  const v = o[key]
  if (v === undefined || v === null) return undefined
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 1) return fail(`field "${key}" must be an integer ≥ 1 (ms)`, key)
  return v
}

/** A time on a line: within ±TRACE_TIME_MAX_MS, so every window the rules add to it still lands on a date. */

const outcome = (v: unknown, key: string): AbortOutcome => {
  if (v === "ok" || v === "fail" || v === "pending") return v
  return fail(`field "${key}" must be "ok", "fail" or "pending"`, key)
}

const strList = (o: Obj, key: string): ReadonlyArray<string> | undefined => {
  const v = o[key]
  if (v === undefined || v === null) return undefined
  if (!Array.isArray(v) || !v.every((x) => typeof x === "string")) return fail(`field "${key}" must be an array of strings`, key)
  return v as ReadonlyArray<string>
}

const abortOf = (o: Obj): AbortOutcome | undefined => (o.abort === undefined || o.abort === null ? undefined : outcome(o.abort, "abort"))

const abortsOf = (o: Obj): Readonly<Record<string, AbortOutcome>> | undefined => {
  if (o.aborts === undefined || o.aborts === null) return undefined
  if (!isRecord(o.aborts)) return fail(`field "aborts" must be an object of claim: "ok"|"fail"`, "aborts")
  const aborts: Record<string, AbortOutcome> = {}
  for (const [k, v] of Object.entries(o.aborts)) aborts[k] = outcome(v, `aborts.${echo(k)}`)
  return aborts
}

const peers = (o: Obj): Readonly<Record<string, number>> | undefined => {
  const v = o.peers
  if (v === undefined || v === null) return undefined
  if (!isRecord(v) || !Object.values(v).every((n) => typeof n === "number" && Number.isFinite(n))) {
    return fail(`field "peers" must be an object of model: number`, "peers")
  }
  return v as Readonly<Record<string, number>>
}

const REASONS: ReadonlySet<string> = new Set(["rate_limit", "quota", "outage", "unavailable", "auth", "entitlement", "hang", "quota_low", "manual"])

const peerCooling = (o: Obj): ReadonlyArray<PeerCooling> | undefined => {
  const v = o.peerCooling
  if (v === undefined || v === null) return undefined
  if (!Array.isArray(v)) return fail(`field "peerCooling" must be an array`, "peerCooling")
  return v.map((p: unknown, i): PeerCooling => {
    if (!isRecord(p) || typeof p.model !== "string" || typeof p.until !== "number" || typeof p.reason !== "string" || !REASONS.has(p.reason)) {
      return fail(`peerCooling[${i}] must be {model, until, reason} with a known reason`)
    }
    if (!isTraceTime(p.until)) return fail(`peerCooling[${i}].until must be a time within ±${TRACE_TIME_MAX_MS} (epoch ms)`)
    if (p.strikes !== undefined && p.strikes !== null && (typeof p.strikes !== "number" || !Number.isSafeInteger(p.strikes) || p.strikes < 0)) {
      return fail(`peerCooling[${i}].strikes must be an integer ≥ 0`)
    }
    if (p.cleared !== undefined && p.cleared !== null && p.cleared !== true) return fail(`peerCooling[${i}].cleared must be true when present`)
    const base = { model: p.model, until: p.until, reason: p.reason as CoolReason }
    const withStrikes = typeof p.strikes === "number" && p.strikes > 0 ? { ...base, strikes: p.strikes } : base
    return p.cleared === true ? { ...withStrikes, cleared: true } : withStrikes
  })
}

/** A `quota` line's `requests` or `tokens`: `{remaining ≥ 0, limit? > 0, resetAt?}`. */
const level = (o: Obj, key: string): QuotaLevel | undefined => {
  const v = o[key]
  if (v === undefined || v === null) return undefined
  if (!isRecord(v)) return fail(`field "${key}" must be an object {remaining, limit?, resetAt?}`, key)
  const remaining = num(v, "remaining")
  if (remaining < 0) return fail(`field "${key}.remaining" must be ≥ 0`, `${key}.remaining`)
  const limit = optNum(v, "limit")
  if (limit !== undefined && limit <= 0) return fail(`field "${key}.limit" must be above 0`, `${key}.limit`)
  const resetAt = v.resetAt === undefined || v.resetAt === null ? undefined : time(v, "resetAt")
  return { remaining, ...(limit === undefined ? {} : { limit }), ...(resetAt === undefined ? {} : { resetAt }) }
}

const reserveOf = (o: Obj): number | undefined => {
  const v = optNum(o, "reserve")
  if (v !== undefined && (v < 0 || v >= 1)) return fail(`field "reserve" must be a fraction from 0 up to (not including) 1`, "reserve")
  return v
}

/** A `budget` line's `learned`: a group's shared record, as the shared state stores it (core/limits/learned.ts). */
const learnedOf = (o: Obj): GroupBudget | undefined => {
  const v = o.learned
  if (v === undefined || v === null) return undefined
  const b = isRecord(v) ? decodeBudget(JSON.stringify(v)) : undefined
  return b ?? fail(`field "learned" must be a group's budget record {group, minute, day, limits, seenAt}`, "learned")
}

const headers = (o: Obj): Readonly<Record<string, unknown>> | undefined => {
  const v = o.headers
  if (v === undefined || v === null) return undefined
  if (!isRecord(v)) return fail(`field "headers" must be an object`, "headers")
  return v
}

/** Decodes one non-blank line, or says why it is invalid. */
export const decodeLine = (line: string): TraceInput | InputError => {
  try {
    return decodeOrThrow(line)
  } catch (e) {
    // made without the constructor's check: its fields are known strings, and a fuzzed trace may make many
    if (e instanceof Invalid) return new InputError(e.field === undefined ? { message: e.message } : { message: e.message, field: e.field }, true)
    // not expected: whatever it is, one bounded line (never a stack)
    return new InputError({ message: echo(e instanceof Error ? `${e.name}: ${e.message}` : String(e), 200), unexpected: true }, true)
  }
}

const decodeOrThrow = (line: string): TraceInput => {
  // nesting is refused before parsing: later walks of the value (validation, messages) recurse
  if (jsonTooDeep(line)) return fail(`nested too deeply (more than ${JSON_MAX_DEPTH} levels)`)
  let parsed: unknown
  try {
    parsed = JSON.parse(line)
  } catch (e) {
    return fail(`invalid JSON: ${echo((e as Error).message, 200)}`)
  }
  if (!isRecord(parsed)) return fail("a line must be a JSON object")
  const o = parsed
  if (o.at === undefined) return fail(`missing required field "at"`, "at")
  if (typeof o.at !== "number" || !Number.isSafeInteger(o.at)) return fail(`field "at" must be an integer (epoch ms)`, "at")
  if (!isTraceTime(o.at)) return fail(`field "at" must be within ±${TRACE_TIME_MAX_MS} (epoch ms)`, "at")
  const at = o.at
  if (o.type === undefined) return fail(`missing required field "type"`, "type")
  switch (o.type) {
    case "pool": {
      if (o.slots === undefined) return fail(`missing required field "slots"`, "slots")
      if (!Array.isArray(o.slots)) return fail(`field "slots" must be an array`, "slots")
      return {
        type: "pool",
        at,
        slots: o.slots,
        maxSlots: o.maxSlots,
        hangMinAgeMs: optTiming(o, "hangMinAgeMs"),
        hangSilenceMs: optTiming(o, "hangSilenceMs"),
        fallbacks: strList(o, "fallbacks")
      }
    }
    case "spawn":
      return {
        type: "spawn",
        at,
        claim: str(o, "claim"),
        base: str(o, "base"),
        session: optStr(o, "session"),
        blocked: strList(o, "blocked"),
        peers: peers(o),
        peerCooling: peerCooling(o),
        abort: abortOf(o),
        aborts: abortsOf(o)
      }
    case "bind":
      return { type: "bind", at, claim: str(o, "claim"), session: str(o, "session"), activity: optBool(o, "activity", true) }
    case "activity":
      return { type: "activity", at, session: str(o, "session") }
    case "release":
      return { type: "release", at, claim: str(o, "claim"), ok: optBool(o, "ok", true), peerCooling: peerCooling(o) }
    case "aborted":
      return { type: "aborted", at, claim: str(o, "claim"), ok: reqBool(o, "ok"), peerCooling: peerCooling(o) }
    case "limit":
      return {
        type: "limit",
        at,
        text: str(o, "text"),
        status: optNum(o, "status"),
        headers: headers(o),
        body: optStr(o, "body"),
        model: optStr(o, "model"),
        provider: optStr(o, "provider"),
        session: optStr(o, "session"),
        primary: optStr(o, "primary"),
        abort: abortOf(o),
        aborts: abortsOf(o),
        peerCooling: peerCooling(o)
      }
    case "retry":
      return {
        type: "retry",
        at,
        session: str(o, "session"),
        message: str(o, "message"),
        next: time(o, "next"),
        provider: optStr(o, "provider"),
        status: optNum(o, "status"),
        headers: headers(o),
        body: optStr(o, "body"),
        primary: optStr(o, "primary"),
        abort: abortOf(o),
        aborts: abortsOf(o),
        peerCooling: peerCooling(o)
      }
    case "sweep":
      return { type: "sweep", at, blocked: strList(o, "blocked"), spinning: strList(o, "spinning"), stalled: strList(o, "stalled"), abort: abortOf(o), aborts: abortsOf(o), peerCooling: peerCooling(o) }
    case "status":
      return { type: "status", at, peers: peers(o), peerCooling: peerCooling(o) }
    case "quota":
      return { type: "quota", at, model: str(o, "model"), requests: level(o, "requests"), tokens: level(o, "tokens"), reserve: reserveOf(o), peerCooling: peerCooling(o) }
    case "budget": {
      const outcome = str(o, "outcome")
      if (outcome !== "ok" && outcome !== "limit") return fail(`field "outcome" must be "ok" or "limit"`, "outcome")
      const resetAt = o.resetAt === undefined || o.resetAt === null ? undefined : time(o, "resetAt")
      return { type: "budget", at, model: str(o, "model"), outcome, resetAt, learned: learnedOf(o), reserve: reserveOf(o), peerCooling: peerCooling(o) }
    }
    case "message":
      return { type: "message", at, session: str(o, "session"), model: str(o, "model"), peerCooling: peerCooling(o) }
    case "switched":
      return { type: "switched", at, session: str(o, "session"), to: str(o, "to"), ok: reqBool(o, "ok") }
    case "permit": {
      const r = decodePermit(o, at)
      return "invalid" in r ? fail(r.invalid) : r
    }
    case "context_load":
    case "context_edit":
    case "context_idle":
    case "context_bound":
    case "context_end": {
      const r = decodeContext(o, o.type as string, at)
      return "invalid" in r ? fail(r.invalid) : r
    }
    default:
      return fail(`unknown type ${typeof o.type === "string" ? JSON.stringify(echo(o.type)) : echo(JSON.stringify(o.type) ?? String(o.type))}`)
  }
}
