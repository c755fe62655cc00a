/**
 * The `permit` trace line (issue 21, TRACE-FORMAT.md "Permit lines"): the op, the capacities and every
 * entry the recording process read, so a replay needs no shared state. Hand-written like the other
 * lines (input.ts): flat checks whose messages name the field by its path (`entries[3].holder.pid`).
 * Bounded: at most PERMIT_ENTRIES_MAX entries and budgets, strings of at most PERMIT_STRING_MAX characters.
 */
import { isRecord } from "../json.js"
import { TRACE_TIME_MAX_MS } from "../readLimits.js"
import { echo } from "../printable.js"
import type { CancelCause, Capacities, PermitHolder, PermitOp, PermitVia, PermitView } from "../permits/types.js"
import { fail, Invalid, type Obj } from "./check.js"

export const PERMIT_ENTRIES_MAX = 10_000
export const PERMIT_STRING_MAX = 1_000

export interface PermitLine {
  readonly type: "permit"
  readonly at: number
  readonly op: PermitOp
  readonly capacities: Capacities
  readonly entries: ReadonlyArray<PermitView>
}

const name = (path: string, key: string): string => echo(path === "" ? key : `${path}.${key}`)

const obj = (v: unknown, path: string): Obj => {
  if (v === undefined) return fail(`missing required field "${echo(path)}"`)
  if (!isRecord(v)) return fail(`field "${echo(path)}" must be an object`)
  return v
}

const str = (o: Obj, path: string, key: string): string => {
  const v = o[key]
  if (v === undefined) return fail(`missing required field "${name(path, key)}"`)
  if (typeof v !== "string") return fail(`field "${name(path, key)}" must be a string`)
  if (v.length > PERMIT_STRING_MAX) return fail(`field "${name(path, key)}" must be at most ${PERMIT_STRING_MAX} characters`)
  return v
}

const optStr = (o: Obj, path: string, key: string): string | undefined => (o[key] === undefined || o[key] === null ? undefined : str(o, path, key))

/** A string or null; absent is null. */
const strOrNull = (o: Obj, path: string, key: string): string | null => (o[key] === undefined || o[key] === null ? null : str(o, path, key))

const num = (o: Obj, path: string, key: string): number => {
  const v = o[key]
  if (v === undefined) return fail(`missing required field "${name(path, key)}"`)
  if (typeof v !== "number" || !Number.isFinite(v)) return fail(`field "${name(path, key)}" must be a number`)
  return v
}

const int = (o: Obj, path: string, key: string, min: number): number => {
  const v = num(o, path, key)
  return Number.isSafeInteger(v) && v >= min ? v : fail(`field "${name(path, key)}" must be an integer ≥ ${min}`)
}

const optInt = (o: Obj, path: string, key: string, min: number): number | undefined => (o[key] === undefined || o[key] === null ? undefined : int(o, path, key, min))

const time = (o: Obj, path: string, key: string): number => {
  const v = num(o, path, key)
  return Math.abs(v) <= TRACE_TIME_MAX_MS ? v : fail(`field "${name(path, key)}" must be within ±${TRACE_TIME_MAX_MS} (epoch ms)`)
}

const optTime = (o: Obj, path: string, key: string): number | undefined => (o[key] === undefined || o[key] === null ? undefined : time(o, path, key))

const bool = (o: Obj, path: string, key: string, dflt?: boolean): boolean => {
  const v = o[key]
  if ((v === undefined || v === null) && dflt !== undefined) return dflt
  if (v === undefined) return fail(`missing required field "${name(path, key)}"`)
  if (typeof v !== "boolean") return fail(`field "${name(path, key)}" must be a boolean`)
  return v
}

const oneOf = <A extends string>(o: Obj, path: string, key: string, values: ReadonlyArray<A>): A => {
  const v = str(o, path, key)
  return (values as ReadonlyArray<string>).includes(v) ? (v as A) : fail(`field "${name(path, key)}" must be one of ${values.map((x) => `"${x}"`).join(", ")}`)
}

const VIA: ReadonlyArray<PermitVia> = ["plugin", "run", "mcp"]
const CANCEL_CAUSES: ReadonlyArray<CancelCause> = ["aborted", "timeout", "wait", "error", "dispose"]
const OPS = ["request", "poll", "release", "cancel", "rebind", "free", "settle"] as const

const group = (v: unknown, path: string): { readonly pgid: number; readonly startToken: string | null } => {
  const g = obj(v, path)
  return { pgid: int(g, path, "pgid", 1), startToken: strOrNull(g, path, "startToken") }
}

const holder = (v: unknown, path: string): PermitHolder => {
  const h = obj(v, path)
  const session = optStr(h, path, "session")
  const g = h.group === undefined || h.group === null ? undefined : group(h.group, `${path}.group`)
  return {
    host: str(h, path, "host"),
    pid: int(h, path, "pid", 1),
    startToken: strOrNull(h, path, "startToken"),
    ...(session === undefined ? {} : { session }),
    ...(g === undefined ? {} : { group: g }),
    via: oneOf(h, path, "via", VIA)
  }
}

/** The fields every entry and a request's entry share. */
const common = (e: Obj, path: string) => ({
  id: str(e, path, "id"),
  token: str(e, path, "token"),
  budget: str(e, path, "budget"),
  weight: num(e, path, "weight"),
  reason: str(e, path, "reason"),
  holder: holder(e.holder, `${path}.holder`),
  requestedAt: time(e, path, "requestedAt")
})

/** Optional fields, present only when given (the records stay as written). */
const optionals = (fields: Readonly<Record<string, number | undefined>>): Record<string, number> => {
  const out: Record<string, number> = {}
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) out[k] = v
  return out
}

const entry = (v: unknown, path: string): PermitView => {
  const e = obj(v, path)
  return {
    ...common(e, path),
    seq: num(e, path, "seq"),
    ...optionals({
      grantedAt: optTime(e, path, "grantedAt"),
      seenAt: optTime(e, path, "seenAt"),
      ahead: optInt(e, path, "ahead", 0),
      headSince: optTime(e, path, "headSince"),
      pausedAt: optTime(e, path, "pausedAt")
    }),
    gone: bool(e, path, "gone", false)
  }
}

const op = (v: unknown): PermitOp => {
  const o = obj(v, "op")
  const kind = oneOf(o, "op", "op", OPS)
  switch (kind) {
    case "request": {
      const e = obj(o.entry, "op.entry")
      const seenAt = optTime(e, "op.entry", "seenAt")
      return { op: "request", entry: { ...common(e, "op.entry"), ...(seenAt === undefined ? {} : { seenAt }) } }
    }
    case "poll":
    case "release":
      return { op: kind, id: str(o, "op", "id"), token: str(o, "op", "token") }
    case "cancel":
      return { op: "cancel", id: str(o, "op", "id"), token: str(o, "op", "token"), cause: oneOf(o, "op", "cause", CANCEL_CAUSES) }
    case "rebind":
      return { op: "rebind", id: str(o, "op", "id"), token: str(o, "op", "token"), group: group(o.group, "op.group") }
    case "free":
      return { op: "free", id: str(o, "op", "id"), force: bool(o, "op", "force", false) }
    case "settle":
      return { op: "settle" }
  }
}

const capacities = (v: unknown): Capacities => {
  const c = obj(v, "capacities")
  const keys = Object.keys(c)
  if (keys.length > PERMIT_ENTRIES_MAX) return fail(`field "capacities" must name at most ${PERMIT_ENTRIES_MAX} budgets`)
  for (const k of keys) {
    if (k.length > PERMIT_STRING_MAX) return fail(`field "capacities" must name budgets of at most ${PERMIT_STRING_MAX} characters`)
    int(c, "capacities", k, 1)
  }
  // JSON.parse makes every key an own property (even `__proto__`); the machine reads own keys only
  return c as Capacities
}

const entries = (v: unknown): ReadonlyArray<PermitView> => {
  if (v === undefined) return fail(`missing required field "entries"`)
  if (!Array.isArray(v)) return fail(`field "entries" must be an array`)
  if (v.length > PERMIT_ENTRIES_MAX) return fail(`field "entries" must hold at most ${PERMIT_ENTRIES_MAX} entries`)
  const seen = new Map<string, number>()
  return v.map((x: unknown, i) => {
    const e = entry(x, `entries[${i}]`)
    const before = seen.get(e.id)
    if (before !== undefined) return fail(`field "entries[${i}].id" repeats entries[${before}].id`)
    seen.set(e.id, i)
    return e
  })
}

/** A `permit` line's fields (`type` and `at` already read), or why they are invalid. */
export const decodePermit = (o: Obj, at: number): PermitLine | { readonly invalid: string } => {
  try {
    return { type: "permit", at, op: op(o.op), capacities: capacities(o.capacities), entries: entries(o.entries) }
  } catch (e) {
    if (e instanceof Invalid) return { invalid: e.message }
    throw e
  }
}
