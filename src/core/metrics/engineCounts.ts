/**
 * What the pool engine counts (issue 36): the counters one trace line's decisions add to, derived from
 * the line, its decisions and the machine state before it. Pure. The turn (core/engine/turn.ts) calls it
 * for every line it applies and puts the sum into the commit it already writes, so a count is stored in
 * the transaction of the decision it counts.
 *
 * Label values are bounded: a route's base is one of the pooled bases and its pass one of three; a
 * cooldown's reason and a limit's class are `CoolReason`s; a limit's provider is the part before `/` of
 * a cooled model (a pool slot's, a fallback's or a root session's: models opencode was configured
 * with), or of the line's model, or the line's provider, cut to PROVIDER_MAX characters; never a
 * session or claim id. The counts of the common decisions are constants (a route allocates nothing),
 * and a turn's counts are summed as they are added (one per counter), without the catalogue's helpers:
 * a spawn runs no module more than it must (`npm run count:files`, docs/DECISIONS.md 298).
 */
import { POOLED_BASES } from "../constants.js"
import type { CoolReason } from "../pool/cooldown.js"
import type { Pass } from "../pool/routing.js"
import { getClaim } from "../trace/claimTable.js"
import type { Decision } from "../trace/decision.js"
import type { TraceInput } from "../trace/input.js"
import type { TraceState } from "../trace/machine.js"
import type { Count, CounterName } from "./counters.js"

/** A provider label longer than this is cut (a provider id is short; this only bounds a strange one). */
export const PROVIDER_MAX = 64

/** The provider of a line whose model and provider are both unknown. */
export const UNKNOWN_PROVIDER = "unknown"

/** Why the reaper took a claim back (`reaps_total{kind}`). */
export type ReapKind = "hung" | "spinning" | "no_first_token" | "unbound"

const PASSES: ReadonlyArray<Pass> = ["first", "second", "overflow"]
const COOL_REASONS: ReadonlyArray<CoolReason> = ["rate_limit", "quota", "outage", "unavailable", "auth", "entitlement", "hang", "quota_low", "manual"]
const REAP_KINDS: ReadonlyArray<ReapKind> = ["hung", "spinning", "no_first_token", "unbound"]

/** One increment (counters.ts's `count`, made here so that counting runs this module only). */
const count = (name: CounterName, labels: ReadonlyArray<string> = [], by = 1): Count => ({ name, labels, by })

const sameLabels = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): boolean => {
  if (a === b) return true
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/** Adds `c` to `out`, summed into the entry of the same counter and labels when there is one (a turn's few counts: a linear look). */
export const addCount = (out: Array<Count>, c: Count): void => {
  for (let i = 0; i < out.length; i++) {
    const o = out[i]!
    if (o.name === c.name && sameLabels(o.labels, c.labels)) {
      out[i] = { name: o.name, labels: o.labels, by: o.by + c.by }
      return
    }
  }
  out.push(c)
}

const table = <K extends string>(keys: ReadonlyArray<K>, make: (k: K) => Count): Readonly<Record<K, Count>> =>
  Object.fromEntries(keys.map((k) => [k, make(k)])) as Record<K, Count>

/** `routes_total{base, pass}`, one constant per pooled base and pass. */
const ROUTES: Readonly<Record<string, Readonly<Record<Pass, Count>>>> = Object.fromEntries(
  POOLED_BASES.map((base) => [base, table(PASSES, (pass) => count("routes_total", [base, pass]))])
)
const COOLDOWNS = table(COOL_REASONS, (reason) => count("cooldowns_total", [reason]))
const REAPS = table(REAP_KINDS, (kind) => count("reaps_total", [kind]))
const ABORT_OK = count("aborts_total", ["ok"])
const ABORT_FAILED = count("aborts_total", ["failed"])
const ABORT_GAVE_UP = count("aborts_total", ["gave_up"])
const SWITCH = count("fallback_switches_total")

/** A provider label from a model (`provider/model`) or a provider id, bounded. */
export const providerLabel = (model: string | undefined, provider?: string | undefined): string => {
  const slash = model === undefined ? -1 : model.indexOf("/")
  const p = model !== undefined && slash > 0 ? model.slice(0, slash) : provider !== undefined && provider !== "" ? provider : UNKNOWN_PROVIDER
  return p.length > PROVIDER_MAX ? p.slice(0, PROVIDER_MAX) : p
}

/**
 * Why a claim released `hung` was taken back: the origin of the abort that released it, as the claim
 * held it before the line (a spin, no first token, else a hang); when the abort was requested and
 * settled by the same line (a replayed sweep with `abort: "ok"`), the sweep line's own lists say.
 */
export const reapKind = (before: TraceState, line: TraceInput, claim: string): ReapKind => {
  const origin = getClaim(before.table, claim)?.abortOrigin
  if (origin === "spin") return "spinning"
  if (origin === "first_token") return "no_first_token"
  if (origin === "hang") return "hung"
  if (line.type === "sweep") {
    if (line.spinning?.includes(claim) === true) return "spinning"
    if (line.stalled?.includes(claim) === true) return "no_first_token"
  }
  return "hung"
}

/** The line's model and provider, for a limit nothing cooled (a context overflow). */
const lineProvider = (line: TraceInput): string =>
  line.type === "limit" ? providerLabel(line.model, line.provider) : line.type === "retry" ? providerLabel(undefined, line.provider) : UNKNOWN_PROVIDER

/**
 * Adds to `out` (summed per counter) the counts of `decisions`, the decisions `line` made from the machine state `before`:
 * - `route` → `routes_total{base, pass}`;
 * - `cool` → `cooldowns_total{reason}`, and from a `limit` or `retry` line also `limits_total{provider,
 *   class}` (the first cooled model's provider, the cooldown's reason); an `ignore` of a context overflow
 *   from such a line → `limits_total{provider, "context_limit"}` (`not_a_limit` is no limit);
 * - `abort` → `aborts_total{ok|failed}`; a release `gave_up` → `aborts_total{gave_up}`;
 * - a release `hung` → `reaps_total{hung|spinning|no_first_token}`, a release `unbound` (the reaper
 *   took back a claim no child ever bound) → `reaps_total{unbound}`;
 * - `switch` → `fallback_switches_total`.
 * Other decisions count nothing here (permits are counted by their own shell: permitCounts.ts).
 */
export const countDecisions = (out: Array<Count>, line: TraceInput, decisions: ReadonlyArray<Decision>, before: TraceState): void => {
  for (let i = 0; i < decisions.length; i++) {
    const d = decisions[i]!
    switch (d.type) {
      case "route": {
        const c = ROUTES[d.base]?.[d.pass]
        if (c !== undefined) addCount(out, c)
        break
      }
      case "cool": {
        addCount(out, COOLDOWNS[d.reason] ?? count("cooldowns_total", [d.reason]))
        if (line.type === "limit" || line.type === "retry") addCount(out, count("limits_total", [providerLabel(d.models[0]), d.reason]))
        break
      }
      case "ignore":
        if (d.reason === "context_limit" && (line.type === "limit" || line.type === "retry")) addCount(out, count("limits_total", [lineProvider(line), "context_limit"]))
        break
      case "abort":
        addCount(out, d.ok ? ABORT_OK : ABORT_FAILED)
        break
      case "release":
        if (d.reason === "gave_up") addCount(out, ABORT_GAVE_UP)
        else if (d.reason === "hung") addCount(out, REAPS[reapKind(before, line, d.claim)])
        else if (d.reason === "unbound") addCount(out, REAPS.unbound)
        break
      case "switch":
        addCount(out, SWITCH)
        break
      default:
        break
    }
  }
}

/**
 * How often the pool engine writes its counts (docs/DECISIONS.md 298): a counter row is one more page
 * of the WAL in the spawn's commit, ~8 µs, 3–7% of a spawn; written at most once a second (summed), a
 * burst of spawns costs one row a second. A count waits at most that long, or until the engine's next
 * commit after it (the timer's sweep at the latest), or its end, which writes what it holds.
 */
export const COUNTS_EVERY_MS = 1_000

/** The counts the engine holds for a later commit, and when it last wrote some. */
export interface HeldCounts {
  readonly counts: ReadonlyArray<Count>
  readonly writtenAt: number
}

export const NO_HELD_COUNTS: HeldCounts = { counts: [], writtenAt: Number.NEGATIVE_INFINITY }

/**
 * What a commit at `now` writes of the counts held and its turn's own (`write`, summed per counter;
 * undefined: none), and what is held after it. `writes`: whether the commit is written at all (a
 * view's step writes nothing: its counts are held).
 */
export const countsDue = (
  held: HeldCounts,
  counts: ReadonlyArray<Count> | undefined,
  now: number,
  writes: boolean
): { readonly write: ReadonlyArray<Count> | undefined; readonly held: HeldCounts } => {
  let all: ReadonlyArray<Count> = held.counts
  if (counts !== undefined && counts.length > 0) {
    if (all.length === 0) all = counts
    else {
      const merged = [...all]
      for (const c of counts) addCount(merged, c)
      all = merged
    }
  }
  if (all.length === 0) return { write: undefined, held }
  if (writes && now - held.writtenAt >= COUNTS_EVERY_MS) return { write: all, held: { counts: [], writtenAt: now } }
  return { write: undefined, held: all === held.counts ? held : { counts: all, writtenAt: held.writtenAt } }
}
