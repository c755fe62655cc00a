/**
 * Analysis of the fleet driver's output (`node dist/dev-fleet-drive.js`) (issue 22's fleet stress test, test/stress/fleet.test.ts).
 * Pure: the lines of every drive process in, the violations out.
 *
 * Claim intervals. A pick's `at` is taken after its claim is committed (the claim is visible from some
 * c ≤ at) and a release's `at` before the release starts (the claim is gone at some r ≥ at), so the
 * recorded [pick.at, release.at) lies inside the true life [c, r) of the claim. Counting recorded
 * intervals therefore never counts more than was really held: an instant with more held claims than
 * the cap is a real over-cap (no false alarm), at the price of missing a race narrower than the gap
 * between the release's start and the next pick's commit. The in-transaction `load` covers that gap.
 *
 * Overflow picks are over the cap by design (the pool never refuses), so the invariant checked is:
 * at every instant, the non-overflow claims of a model are at most its cap. A first or second pass
 * picks a model only while its whole load (overflow claims included) is below the cap, so with exact
 * fleet-wide caps this holds whatever the overflow claims do.
 */

export interface StartLine { readonly ev: "start"; readonly host: string; readonly pid: number; readonly backend: string }
export interface PickLine {
  readonly ev: "pick"
  readonly host: string
  readonly key: string
  readonly model: string
  readonly slot: number
  readonly pass: "first" | "second" | "overflow"
  readonly load: number
  readonly cap: number
  readonly cooling: ReadonlyArray<string>
  readonly at: number
}
export interface ReleaseLine { readonly ev: "release"; readonly host: string; readonly key: string; readonly at: number }
export interface CoolLine { readonly ev: "cool"; readonly host: string; readonly model: string; readonly until: number; readonly at: number }
export interface DoneLine { readonly ev: "done"; readonly host: string; readonly picks: number; readonly failOpens: number; readonly fallbacks: number }
export type Line = StartLine | PickLine | ReleaseLine | CoolLine | DoneLine

export class BadLine extends Error {
  readonly _tag = "BadLine"
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)
const num = (o: Record<string, unknown>, k: string): boolean => typeof o[k] === "number" && Number.isFinite(o[k])
const str = (o: Record<string, unknown>, k: string): boolean => typeof o[k] === "string"

/** One stdout line of the fleet driver, checked against the fixed interface; throws `BadLine` otherwise. */
export const parseLine = (text: string): Line => {
  let v: unknown
  try {
    v = JSON.parse(text)
  } catch {
    throw new BadLine(`not JSON: ${text.slice(0, 200)}`)
  }
  const ok = (b: boolean): Line => {
    if (!b) throw new BadLine(`does not match the interface: ${text.slice(0, 300)}`)
    return v as Line
  }
  if (!isObj(v)) return ok(false)
  switch (v.ev) {
    case "start":
      return ok(str(v, "host") && num(v, "pid") && str(v, "backend"))
    case "pick":
      return ok(
        str(v, "host") && str(v, "key") && str(v, "model") && num(v, "slot") && ["first", "second", "overflow"].includes(v.pass as string) &&
          num(v, "load") && num(v, "cap") && Array.isArray(v.cooling) && (v.cooling as Array<unknown>).every((m) => typeof m === "string") && num(v, "at")
      )
    case "release":
      return ok(str(v, "host") && str(v, "key") && num(v, "at"))
    case "cool":
      return ok(str(v, "host") && str(v, "model") && num(v, "until") && num(v, "at"))
    case "done":
      return ok(str(v, "host") && num(v, "picks") && num(v, "failOpens") && num(v, "fallbacks"))
    default:
      return ok(false)
  }
}

/** One drive process as the test saw it. */
export interface Proc {
  /** e.g. `host-a#3` */
  readonly name: string
  readonly host: string
  readonly lines: ReadonlyArray<Line>
  readonly killed: boolean
}

export const picksOf = (p: Proc): Array<PickLine> => p.lines.filter((l): l is PickLine => l.ev === "pick")
export const releasesOf = (p: Proc): Array<ReleaseLine> => p.lines.filter((l): l is ReleaseLine => l.ev === "release")
export const pidOf = (p: Proc): number | undefined => p.lines.find((l): l is StartLine => l.ev === "start")?.pid

export interface Interval {
  readonly proc: string
  readonly key: string
  readonly model: string
  readonly pass: PickLine["pass"]
  readonly load: number
  readonly from: number
  readonly to: number
  /** Picked while the server may have been away (decided on the host's files): not fleet-wide. */
  readonly suspect: boolean
}

export interface IntervalInput {
  readonly procs: ReadonlyArray<Proc>
  /** A killed process's claims stay visible to the others until its lease ends (`holders.lease_until`, by pid). */
  readonly leaseEnd: ReadonlyMap<number, number>
  /** Keys the server held for a killed process right after the kill (by pid), with the kill time: claims whose pick line never came out. */
  readonly killedHeld?: ReadonlyMap<number, { readonly at: number; readonly keys: ReadonlyArray<{ readonly key: string; readonly model: string }> }>
  /** Per process name: times at which its decisions may have been made on its files. */
  readonly suspectWindows?: ReadonlyMap<string, ReadonlyArray<readonly [number, number]>>
}

export interface IntervalResult {
  readonly intervals: ReadonlyArray<Interval>
  /** Claims of a process that exited normally without a release line (it must release everything). */
  readonly unreleased: ReadonlyArray<{ readonly proc: string; readonly key: string }>
  /** Release lines without a pick, or a key picked twice while held. */
  readonly inconsistent: ReadonlyArray<string>
}

const inWindows = (at: number, ws: ReadonlyArray<readonly [number, number]> | undefined): boolean => (ws ?? []).some(([a, b]) => at >= a && at <= b)

/** Every claim's recorded life; a killed process's unreleased claims run to its lease end. */
export const claimIntervals = (input: IntervalInput): IntervalResult => {
  const intervals: Array<Interval> = []
  const unreleased: Array<{ proc: string; key: string }> = []
  const inconsistent: Array<string> = []
  for (const p of input.procs) {
    const open = new Map<string, PickLine>()
    const pid = pidOf(p)
    const windows = input.suspectWindows?.get(p.name)
    const push = (pick: PickLine, to: number): void => {
      intervals.push({ proc: p.name, key: pick.key, model: pick.model, pass: pick.pass, load: pick.load, from: pick.at, to, suspect: inWindows(pick.at, windows) })
    }
    for (const l of p.lines) {
      if (l.ev === "pick") {
        if (open.has(l.key)) inconsistent.push(`${p.name}: ${l.key} picked twice`)
        open.set(l.key, l)
      } else if (l.ev === "release") {
        const pick = open.get(l.key)
        if (pick === undefined) inconsistent.push(`${p.name}: ${l.key} released but not held`)
        else {
          push(pick, l.at)
          open.delete(l.key)
        }
      }
    }
    if (p.killed) {
      const end = pid === undefined ? undefined : input.leaseEnd.get(pid)
      for (const pick of open.values()) {
        if (end === undefined) inconsistent.push(`${p.name}: killed, no lease end known`)
        else push(pick, Math.max(end, pick.at))
      }
      const extra = pid === undefined ? undefined : input.killedHeld?.get(pid)
      if (extra !== undefined && end !== undefined) {
        const seen = new Set(picksOf(p).map((x) => x.key))
        for (const k of extra.keys)
          if (!seen.has(k.key)) intervals.push({ proc: p.name, key: k.key, model: k.model, pass: "first", load: 0, from: extra.at, to: Math.max(end, extra.at), suspect: false })
      }
    } else for (const key of open.keys()) unreleased.push({ proc: p.name, key })
  }
  return { intervals, unreleased, inconsistent }
}

export interface OverCap {
  readonly model: string
  readonly at: number
  readonly count: number
  readonly cap: number
  readonly held: ReadonlyArray<string>
}

/**
 * Instants where more intervals of a model are held than its cap (at most one report per model per
 * excursion). Intervals are half-open: one ending at t and one starting at t do not overlap.
 */
export const overCaps = (intervals: ReadonlyArray<Interval>, caps: ReadonlyMap<string, number>): Array<OverCap> => {
  const out: Array<OverCap> = []
  const byModel = new Map<string, Array<Interval>>()
  for (const i of intervals) byModel.set(i.model, [...(byModel.get(i.model) ?? []), i])
  for (const [model, list] of byModel) {
    const cap = caps.get(model)
    if (cap === undefined) {
      out.push({ model, at: list[0]!.from, count: list.length, cap: -1, held: [] })
      continue
    }
    const events: Array<{ t: number; d: 1 | -1; i: Interval }> = []
    for (const i of list) {
      if (!(i.to > i.from)) continue
      events.push({ t: i.from, d: 1, i }, { t: i.to, d: -1, i })
    }
    events.sort((a, b) => a.t - b.t || a.d - b.d)
    const held = new Set<Interval>()
    let over = false
    for (const e of events) {
      if (e.d === 1) held.add(e.i)
      else held.delete(e.i)
      if (held.size > cap && !over) {
        over = true
        out.push({ model, at: e.t, count: held.size, cap, held: [...held].map((i) => `${i.proc}:${i.key}(${i.pass},load ${i.load})`) })
      } else if (held.size <= cap) over = false
    }
  }
  return out
}

/** The in-transaction check: a first or second pass pick whose fleet-wide load (with itself) is over the cap; or a cap that is not 2 × weight. */
export const loadViolations = (picks: ReadonlyArray<PickLine>, weights: ReadonlyMap<string, number>): Array<PickLine> =>
  picks.filter((p) => (p.pass !== "overflow" && p.load > p.cap) || p.cap !== 2 * (weights.get(p.model) ?? Number.NaN) || p.load < 1)

/** Picks that did not honour a committed cooldown: at > cool.at + graceMs and before its end, yet the model picked or not listed as cooling. */
export const cooldownViolations = (picks: ReadonlyArray<PickLine>, cool: CoolLine, graceMs: number): Array<PickLine> =>
  picks.filter((p) => p.at > cool.at + graceMs && p.at < cool.until && (p.model === cool.model || !p.cooling.includes(cool.model)))

/** Picks a cooldown check applies to (for the report: a check over nothing proves nothing). */
export const cooldownCovered = (picks: ReadonlyArray<PickLine>, cool: CoolLine, graceMs: number): number =>
  picks.filter((p) => p.at > cool.at + graceMs && p.at < cool.until).length

/**
 * The keys a process surely held from `qs` to `qe`: picked (committed) before `qs` and not released
 * before `qe` (its release line, if any, came after `qe`, so the release began after the query ended).
 */
export const surelyHeld = (p: Proc, qs: number, qe: number): Array<string> => {
  const released = new Map(releasesOf(p).map((r) => [r.key, r.at]))
  return picksOf(p)
    .filter((k) => k.at < qs && (released.get(k.key) ?? Number.POSITIVE_INFINITY) > qe)
    .map((k) => k.key)
}

/** A `SELECT` of the claims table, taken between `qs` and `qe` (wall clock), as keys per `host/pid`. */
export interface ClaimSnapshot {
  readonly qs: number
  readonly qe: number
  readonly keys: ReadonlyMap<string, ReadonlySet<string>>
}

export const snapshotOf = (qs: number, qe: number, rows: ReadonlyArray<{ readonly host: string; readonly pid: number; readonly body: unknown }>): ClaimSnapshot => {
  const keys = new Map<string, Set<string>>()
  for (const r of rows) {
    const claims = isObj(r.body) && isObj(r.body.claims) ? Object.keys(r.body.claims) : []
    const id = `${r.host}/${r.pid}`
    keys.set(id, new Set([...(keys.get(id) ?? []), ...claims]))
  }
  return { qs, qe, keys }
}

/**
 * Keys a live process surely held during a snapshot that the server did not have. A process is not
 * asked about a snapshot that overlaps one of its `away` windows (its decisions then went to its files).
 */
export const lostClaims = (
  procs: ReadonlyArray<Proc>,
  snap: ClaimSnapshot,
  away?: ReadonlyMap<string, ReadonlyArray<readonly [number, number]>>
): { readonly checked: number; readonly lost: Array<string> } => {
  let checked = 0
  const lost: Array<string> = []
  for (const p of procs) {
    if (p.killed) continue
    if ((away?.get(p.name) ?? []).some(([a, b]) => snap.qs <= b && snap.qe >= a)) continue
    const pid = pidOf(p)
    if (pid === undefined) continue
    const there = snap.keys.get(`${p.host}/${pid}`) ?? new Set<string>()
    for (const key of surelyHeld(p, snap.qs, snap.qe)) {
      checked++
      if (!there.has(key)) lost.push(`${p.name}:${key}`)
    }
  }
  return { checked, lost }
}
