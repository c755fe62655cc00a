/**
 * The context map's trace lines (issue 23, docs/TRACE-FORMAT.md "Context map lines"): `context_load`,
 * `context_edit`, `context_idle`, `context_bound` and `context_end`. Hand-written like the other lines
 * (input.ts): flat checks whose messages name the field. Bounded: at most CONTEXT_PATHS_MAX paths on a
 * line, strings of at most CONTEXT_STRING_MAX characters.
 */
import { isRecord } from "../json.js"
import { TRACE_TIME_MAX_MS } from "../readLimits.js"
import { echo } from "../printable.js"
import { PENDING_MAX } from "../context/map.js"
import type { ContextLine, LastRun, MapStamp, RunOutcome } from "../context/refresh.js"
import { fail, Invalid, isTraceTime, type Obj } from "./check.js"

export const CONTEXT_PATHS_MAX = PENDING_MAX
export const CONTEXT_STRING_MAX = 4_096

const str = (o: Obj, key: string, path = key): string => {
  const v = o[key]
  if (v === undefined) return fail(`missing required field "${echo(path)}"`)
  if (typeof v !== "string") return fail(`field "${echo(path)}" must be a string`)
  if (v.length > CONTEXT_STRING_MAX) return fail(`field "${echo(path)}" must be at most ${CONTEXT_STRING_MAX} characters`)
  return v
}

const optStr = (o: Obj, key: string, path = key): string | undefined => (o[key] === undefined || o[key] === null ? undefined : str(o, key, path))

const time = (o: Obj, key: string, path = key): number => {
  const v = o[key]
  if (v === undefined) return fail(`missing required field "${echo(path)}"`)
  return isTraceTime(v) ? v : fail(`field "${echo(path)}" must be a time within ±${TRACE_TIME_MAX_MS} (epoch ms)`)
}

const optTime = (o: Obj, key: string): number | undefined => (o[key] === undefined || o[key] === null ? undefined : time(o, key))

const count = (o: Obj, key: string, path = key): number => {
  const v = o[key]
  if (v === undefined) return fail(`missing required field "${echo(path)}"`)
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) return fail(`field "${echo(path)}" must be an integer ≥ 0`)
  return v
}

const optCount = (o: Obj, key: string): number | undefined => (o[key] === undefined || o[key] === null ? undefined : count(o, key))

const bool = (o: Obj, key: string): boolean => {
  const v = o[key]
  if (v === undefined) return fail(`missing required field "${key}"`)
  if (typeof v !== "boolean") return fail(`field "${key}" must be a boolean`)
  return v
}

const optBool = (o: Obj, key: string): boolean | undefined => (o[key] === undefined || o[key] === null ? undefined : bool(o, key))

const paths = (o: Obj, key: string, required: boolean): ReadonlyArray<string> | undefined => {
  const v = o[key]
  if (v === undefined || v === null) return required ? fail(`missing required field "${key}"`) : undefined
  if (!Array.isArray(v)) return fail(`field "${key}" must be an array of strings`)
  if (v.length > CONTEXT_PATHS_MAX) return fail(`field "${key}" must hold at most ${CONTEXT_PATHS_MAX} paths`)
  v.forEach((p, i) => {
    if (typeof p !== "string") fail(`field "${key}[${i}]" must be a string`)
    else if (p.length > CONTEXT_STRING_MAX) fail(`field "${key}[${i}]" must be at most ${CONTEXT_STRING_MAX} characters`)
  })
  return v as ReadonlyArray<string>
}

const map = (o: Obj): MapStamp => {
  const v = o.map
  if (v === undefined) return fail(`missing required field "map"`)
  if (!isRecord(v)) return fail(`field "map" must be an object`)
  const exists = v.exists
  if (typeof exists !== "boolean") return fail(`field "map.exists" must be a boolean`)
  return { exists, bytes: count(v, "bytes", "map.bytes"), stamp: str(v, "stamp", "map.stamp") }
}

const OUTCOMES: ReadonlySet<string> = new Set<RunOutcome>(["ok", "unchanged", "failed"])

const lastRun = (o: Obj): LastRun | undefined => {
  const v = o.lastRun
  if (v === undefined || v === null) return undefined
  if (!isRecord(v)) return fail(`field "lastRun" must be an object`)
  const kind = str(v, "kind", "lastRun.kind")
  if (kind !== "update" && kind !== "bootstrap") return fail(`field "lastRun.kind" must be "update" or "bootstrap"`)
  const outcome = str(v, "outcome", "lastRun.outcome")
  if (!OUTCOMES.has(outcome)) return fail(`field "lastRun.outcome" must be "ok", "unchanged" or "failed"`)
  const reason = optStr(v, "reason", "lastRun.reason")
  return {
    run: str(v, "run", "lastRun.run"),
    kind,
    startedAt: time(v, "startedAt", "lastRun.startedAt"),
    endedAt: time(v, "endedAt", "lastRun.endedAt"),
    outcome: outcome as RunOutcome,
    paths: count(v, "paths", "lastRun.paths"),
    ...(reason === undefined ? {} : { reason })
  }
}

const decode = (o: Obj, type: string, at: number): ContextLine => {
  switch (type) {
    case "context_load":
      return {
        type,
        at,
        root: str(o, "root"),
        maxBytes: optCount(o, "maxBytes"),
        pending: paths(o, "pending", false),
        dropped: optCount(o, "dropped"),
        lastStartedAt: optTime(o, "lastStartedAt"),
        lastRun: lastRun(o)
      }
    case "context_edit":
      return { type, at, paths: paths(o, "paths", true)!, session: optStr(o, "session") }
    case "context_idle":
      return { type, at, session: str(o, "session"), map: map(o), requested: optBool(o, "requested") }
    case "context_bound":
      return { type, at, run: str(o, "run"), session: str(o, "session") }
    case "context_end":
      return { type, at, run: str(o, "run"), ok: bool(o, "ok"), map: map(o), reason: optStr(o, "reason") }
    default:
      return fail(`unknown type ${JSON.stringify(echo(type))}`)
  }
}

/** A context line of `type` at `at`, or why not. */
export const decodeContext = (o: Obj, type: string, at: number): ContextLine | { readonly invalid: string } => {
  try {
    return decode(o, type, at)
  } catch (e) {
    if (e instanceof Invalid) return { invalid: e.message }
    throw e
  }
}
