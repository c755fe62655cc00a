import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { activityEntries } from "../../../src/core/trace/activity.js"
import { feed, replayText, startReplay } from "../../../src/core/trace/replay.js"
import { formatDecision } from "../../../src/core/trace/format.js"
import type { Decision } from "../../../src/core/trace/machine.js"
import { T0 } from "../../helpers.js"

const MODELS = ["zen/alpha", "zen/beta", "go/gamma", "go/delta", "or/x/y:free"]
const TEXTS = [
  "Rate limit exceeded",
  "limit reached",
  "context limit reached",
  "Monthly usage limit reached",
  "Free usage exceeded, subscribe to Go",
  "Service Unavailable",
  "Model not found",
  "invalid api key",
  "connection reset by peer",
  "Resets in 35min",
  "try again in 3m20s",
  '{"name":"UnknownError","data":{"message":"{\\"message\\":\\"limit reached\\"}"}}'
]
const STATUSES = [undefined, 429, 503, 500, 401, 404]

const claimId = fc.integer({ min: 0, max: 5 }).map((i) => `c${i}`)
const sessionId = fc.integer({ min: 0, max: 5 }).map((i) => `s${i}`)
const outcome = fc.constantFrom("ok", "fail")

const op = fc.oneof(
  { weight: 6, arbitrary: fc.record({ type: fc.constant("spawn"), claim: claimId, base: fc.constantFrom("explore", "implement", "context", "explore-2", "general"), session: fc.constantFrom("p1", "p2"), abort: outcome }) },
  { weight: 4, arbitrary: fc.record({ type: fc.constant("bind"), claim: claimId, session: sessionId, activity: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ type: fc.constant("activity"), session: sessionId }) },
  { weight: 3, arbitrary: fc.record({ type: fc.constant("release"), claim: claimId, ok: fc.boolean() }) },
  {
    weight: 3,
    arbitrary: fc.record({
      type: fc.constant("limit"),
      text: fc.constantFrom(...TEXTS),
      status: fc.constantFrom(...STATUSES),
      session: sessionId,
      model: fc.option(fc.constantFrom(...MODELS), { nil: undefined }),
      headers: fc.option(fc.constantFrom({ "retry-after": "120" }, { "x-ratelimit-reset-tokens": "6m0s" }), { nil: undefined }),
      abort: outcome
    })
  },
  { weight: 2, arbitrary: fc.record({ type: fc.constant("retry"), session: sessionId, message: fc.constantFrom(...TEXTS), nextIn: fc.constantFrom(1_000, 3_000, 90_000, 4 * 3_600_000), abort: outcome }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant("sweep"), abort: outcome, blocked: fc.array(claimId, { maxLength: 2 }), spinning: fc.array(claimId, { maxLength: 1 }) }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant("status") }) }
)

const poolLine = fc
  .uniqueArray(fc.constantFrom(...MODELS), { minLength: 1, maxLength: 4 })
  .chain((models) => fc.tuple(fc.constant(models), fc.array(fc.constantFrom(0.5, 1, 2, 3), { minLength: models.length, maxLength: models.length })))
  .map(([models, weights]) => ({ type: "pool", slots: models.map((model, i) => ({ model, weight: weights[i]! })) }))

/** A whole trace: a pool line, then ops at non-decreasing times (gaps up to 8 min). */
const traceArb = fc
  .tuple(poolLine, fc.array(fc.tuple(op, fc.constantFrom(0, 1, 500, 5_000, 40_000, 60_000, 120_000, 200_000, 480_000)), { minLength: 1, maxLength: 80 }))
  .map(([pool, ops]) => {
    let at = T0
    const lines: Array<Record<string, unknown>> = [{ at, ...pool }]
    for (const [o, gap] of ops) {
      at += gap
      const line: Record<string, unknown> = { at, ...o }
      if (o.type === "retry") {
        line.next = at + (o as { nextIn: number }).nextIn
        delete line.nextIn
      }
      for (const k of Object.keys(line)) if (line[k] === undefined) delete line[k]
      lines.push(line)
    }
    return lines
  })

const text = (lines: ReadonlyArray<Record<string, unknown>>) => lines.map((l) => JSON.stringify(l)).join("\n") + "\n"

const replay = (lines: ReadonlyArray<Record<string, unknown>>) => {
  const r = replayText(text(lines))
  if (r.error !== undefined) throw new Error(`invalid generated trace at line ${r.error.line}: ${r.error.message}`)
  return r.decisions
}

const routesOf = (ds: ReadonlyArray<Decision>) => ds.flatMap((d) => (d.type === "route" ? [d] : []))

const RUNS = { fastCheck: { numRuns: 1000 } }

describe("routing invariants over generated traces", () => {
  it.prop("US-5 a pooled spawn is never refused: every pooled-base spawn line gives exactly one route", [traceArb], ([lines]) => {
    const pooled = lines.filter((l) => l.type === "spawn" && ["explore", "implement", "context"].includes(l.base as string)).length
    const ds = replay(lines)
    expect(routesOf(ds)).toHaveLength(pooled)
    const variants = lines.filter((l) => l.type === "spawn" && l.base === "explore-2").length
    expect(ds.filter((d) => d.type === "refuse")).toHaveLength(variants)
  }, RUNS)

  it.prop("US-5 a pick keeps its slot at or under 2×weight unless the pass is overflow", [traceArb], ([lines]) => {
    for (const r of routesOf(replay(lines))) {
      const i = r.slot - 1
      if (r.pass !== "overflow") expect(r.loads[i]! + 1).toBeLessThanOrEqual(2 * r.weights[i]!)
    }
  }, RUNS)

  it.prop("US-5 a first-pass pick is the lowest-index usable slot under its weight", [traceArb], ([lines]) => {
    for (const r of routesOf(replay(lines))) {
      const usableUnder = r.weights.map((w, i) => !r.cooling[i] && r.loads[i]! < w)
      if (r.pass === "first") expect(usableUnder.indexOf(true)).toBe(r.slot - 1)
      else expect(usableUnder.includes(true)).toBe(false)
    }
  }, RUNS)

  it.prop("US-5 overflow happens only when every usable slot is at its cap (or none is usable), and takes the least loaded", [traceArb], ([lines]) => {
    for (const r of routesOf(replay(lines))) {
      if (r.pass !== "overflow") continue
      const usable = r.weights.map((_, i) => i).filter((i) => !r.cooling[i])
      for (const i of usable) expect(r.loads[i]!).toBeGreaterThanOrEqual(2 * r.weights[i]!)
      const pool = usable.length === 0 ? r.weights.map((_, i) => i) : usable
      expect(r.loads[r.slot - 1]).toBe(Math.min(...pool.map((i) => r.loads[i]!)))
      expect(pool.find((i) => r.loads[i] === r.loads[r.slot - 1])).toBe(r.slot - 1)
    }
  }, RUNS)

  it.prop("US-4 a cooling slot is never picked while a usable one exists", [traceArb], ([lines]) => {
    for (const r of routesOf(replay(lines))) {
      if (r.cooling[r.slot - 1]) expect(r.cooling.every((c) => c)).toBe(true)
    }
  }, RUNS)
})

describe("cooldown invariants over generated traces", () => {
  it.prop("US-31 an outage never raises a strike; flat reasons print strike 0; until ≥ at", [traceArb], ([lines]) => {
    let cursor = startReplay()
    for (const line of lines) {
      const before = cursor.state.cooldowns
      const r = feed(cursor, JSON.stringify(line))
      if (r._tag !== "Ok") throw new Error(r.message)
      cursor = r.cursor
      const cools = r.decisions.flatMap((d) => (d.type === "cool" ? [d] : []))
      for (const c of cools) {
        expect(c.until).toBeGreaterThanOrEqual(c.at)
        if (c.reason !== "rate_limit" && c.reason !== "quota") expect(c.strike).toBe(0)
        else expect(c.strike).toBeGreaterThanOrEqual(1)
      }
      if (cools.length > 0 && cools.every((c) => c.reason === "outage")) {
        for (const [model, rec] of cursor.state.cooldowns) expect(rec.strikes).toBeLessThanOrEqual(before.get(model)?.strikes ?? 0)
      }
    }
  }, RUNS)

  it.prop("US-10 the reaped count equals the hung, unbound and gave_up releases", [traceArb], ([lines]) => {
    const r = replayText(text([...lines, { at: (lines.at(-1)!.at as number) + 1, type: "status" }]))
    const reaps = r.decisions.filter((d) => d.type === "release" && ["hung", "unbound", "gave_up"].includes(d.reason)).length
    expect(r.decisions.at(-1)).toMatchObject({ type: "status", reaped: reaps })
    expect(r.state.reaped).toBe(reaps)
  }, RUNS)
})

describe("replay is deterministic", () => {
  it.prop("US-8 pruning old activity never changes a decision (prune on every line vs never)", [traceArb], ([lines]) => {
    const t = text(lines)
    const always = replayText(t, { activityPruneMin: 0 })
    const never = replayText(t, { activityPruneMin: Number.POSITIVE_INFINITY })
    expect(always.decisions.map(formatDecision)).toEqual(never.decisions.map(formatDecision))
  }, { fastCheck: { numRuns: 4000 } })

  it.prop("US-45 the same trace replays to the same output, and the input is never mutated", [traceArb], ([lines]) => {
    const t = text(lines)
    const first = replayText(t)
    const second = replayText(t)
    expect(second.decisions.map(formatDecision)).toEqual(first.decisions.map(formatDecision))
    // stepping from a kept state twice gives the same result (the state is not mutated by a step)
    let cursor = startReplay()
    for (const line of lines.slice(0, -1)) {
      const r = feed(cursor, JSON.stringify(line))
      if (r._tag !== "Ok") throw new Error(r.message)
      cursor = r.cursor
    }
    const last = JSON.stringify(lines.at(-1))
    const a = feed(cursor, last)
    const b = feed(cursor, last)
    // the activity and claim tables are persistent: compared by what they hold, not by how their stores are laid out
    const seen = (r: typeof a) =>
      r._tag === "Ok"
        ? { ...r, cursor: { ...r.cursor, state: { ...r.cursor.state, activity: new Map(activityEntries(r.cursor.state.activity)), table: [...r.cursor.state.claims] } } }
        : r
    expect(seen(a)).toEqual(seen(b))
  }, { fastCheck: { numRuns: 100 } })
})
