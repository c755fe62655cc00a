import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { explainDecision } from "../../../src/core/trace/format.js"
import type { Decision } from "../../../src/core/trace/machine.js"
import { barOutcome, timelineBuilder } from "../../../src/core/view/timeline.js"
import { BAR_OUTCOMES, type Timeline } from "../../../src/core/view/timelineModel.js"
import { pool, T0, trace } from "../../helpers.js"

import { replayTimeline } from "../../support/timelineOf.js"

const root = new URL("../../../", import.meta.url).pathname
const traces = join(root, "test/fixtures/traces")
const MIN = 60_000

const build = replayTimeline

const fixture = (name: string) => build(readFileSync(join(traces, `${name}.jsonl`), "utf8"), `${name}.jsonl`)

/** What holds for every timeline, whatever the trace. */
const wellFormed = (t: Timeline, decisions: ReadonlyArray<Decision>, lineCount: number) => {
  const laneIds = new Set(t.lanes.map((l) => l.id))
  expect(laneIds.size).toBe(t.lanes.length)
  expect(t.bars).toHaveLength(decisions.filter((d) => d.type === "route").length)
  expect(t.lines).toBe(lineCount)
  expect(t.decisions).toBe(decisions.length)
  for (const b of t.bars) {
    expect(laneIds.has(b.lane)).toBe(true)
    expect(b.end).toBeGreaterThanOrEqual(b.start)
    expect(b.start).toBeGreaterThanOrEqual(t.start)
    expect(b.end).toBeLessThanOrEqual(t.end)
    expect(BAR_OUTCOMES).toContain(b.outcome)
  }
  for (const c of t.cools) {
    expect(c.lanes.length).toBeGreaterThan(0)
    for (const l of c.lanes) expect(laneIds.has(l)).toBe(true)
    expect(c.end).toBeGreaterThanOrEqual(c.start)
  }
  for (const m of t.marks) {
    expect(laneIds.has(m.lane)).toBe(true)
    expect(m.at).toBeGreaterThanOrEqual(t.start)
    expect(m.at).toBeLessThanOrEqual(t.end)
  }
  // slot lanes first, in slot order; special lanes only when something is on them
  const slots = t.lanes.filter((l) => l.kind === "slot").map((l) => l.slot!)
  expect(slots).toEqual([...slots].sort((a, b) => a - b))
  expect(t.lanes.slice(0, slots.length).every((l) => l.kind === "slot")).toBe(true)
  for (const l of t.lanes) {
    if (l.kind !== "slot") expect(t.marks.some((m) => m.lane === l.id) || t.cools.some((c) => c.lanes.includes(l.id))).toBe(true)
  }
}

describe("US-45 timeline of the recorded fixtures (test/fixtures/traces)", () => {
  const names = readdirSync(traces).filter((f) => f.endsWith(".jsonl") && !f.endsWith(".decisions.jsonl")).map((f) => f.replace(/\.jsonl$/, ""))

  it("US-45 every fixture: one bar per route decision on its slot's lane, lanes, bounds and counts hold", () => {
    expect(names.length).toBeGreaterThanOrEqual(6)
    for (const name of names) {
      const { timeline, decisions, lines } = fixture(name)
      wellFormed(timeline, decisions, lines)
      expect(timeline.title).toBe(`${name}.jsonl`)
      const routes = decisions.flatMap((d) => (d.type === "route" ? [d] : []))
      expect(timeline.bars.map((b) => [b.claim, b.lane, b.model, b.pass, b.agent])).toEqual(routes.map((r) => [r.claim, `slot-${r.slot}`, r.model, r.pass, r.agent]))
      const ats = decisions.map((d) => d.at)
      expect(timeline.start).toBeLessThanOrEqual(Math.min(...ats))
      expect(timeline.end).toBeGreaterThanOrEqual(Math.max(...ats))
    }
  })

  it("US-45 hang.jsonl: the first claim is hung, the retry open; the hang cooldown (strike 0) shades slot 1; the abort is a mark", () => {
    const { timeline: t, decisions } = fixture("hang")
    expect(t.lanes.map((l) => [l.id, l.label])).toEqual([
      ["slot-1", "1. fakeB/pool-b"],
      ["slot-2", "2. fakeB/pool-c"]
    ])
    expect(t.bars.map((b) => b.outcome)).toEqual(["hung", "open"])
    expect(t.bars[0]).toMatchObject({ lane: "slot-1", start: 1796018023528, end: 1796018324528, session: "ses_dd4fbd394ffeyklOD3lklwhT3W" })
    expect(t.bars[1]).toMatchObject({ lane: "slot-2", start: 1796018325528, end: 1796018326528 })
    expect(t.cools).toEqual([
      expect.objectContaining({ model: "fakeB/pool-b", lanes: ["slot-1"], start: 1796018324528, end: 1796018924528, reason: "hang", strike: 0, scope: "model" })
    ])
    expect(t.marks).toEqual([expect.objectContaining({ kind: "abort", lane: "slot-1", at: 1796018324528 })])
    // the explanation is the --explain text: route, abort, release, one per line
    const own = decisions.filter((d) => "claim" in d && d.claim === t.bars[0]!.claim)
    expect(t.bars[0]!.explain).toBe(own.map(explainDecision).join("\n"))
    expect(t.bars[0]!.explain.split("\n")).toHaveLength(3)
    expect(t.cools[0]!.explain).toBe(explainDecision(decisions.find((d) => d.type === "cool")!))
  })

  it("US-45 limit-mid.jsonl and retry-429.jsonl: the signalled claim ends as limit; the rate_limit cooldown carries strike 1", () => {
    for (const name of ["limit-mid", "retry-429"]) {
      const { timeline: t } = fixture(name)
      expect(t.bars.map((b) => [b.lane, b.outcome])).toEqual([
        ["slot-1", "limit"],
        ["slot-2", "open"]
      ])
      expect(t.cools).toHaveLength(1)
      expect(t.cools[0]).toMatchObject({ model: "fakeB/pool-b", lanes: ["slot-1"], reason: "rate_limit", strike: 1 })
      expect(t.marks.map((m) => [m.kind, m.lane])).toEqual([["abort", "slot-1"]])
    }
  })

  it("US-45 abort-in-flight.jsonl: the hang abort a 429 re-originated is released as signal, so limit; c2 and c3 stay open on slot 2", () => {
    const { timeline: t } = fixture("abort-in-flight")
    expect(t.bars.map((b) => [b.claim, b.lane, b.outcome])).toEqual([
      ["c1", "slot-1", "limit"],
      ["c2", "slot-2", "open"],
      ["c3", "slot-2", "open"]
    ])
    expect(t.bars[0]).toMatchObject({ start: 1796115601000, end: 1796116146000, session: "s1" })
    expect(t.bars.slice(1).map((b) => b.end)).toEqual([1796116147000, 1796116147000])
    expect(t.bars[2]!.pass).toBe("second")
    expect(t.marks).toEqual([expect.objectContaining({ kind: "abort", lane: "slot-1", at: 1796116146000 })])
    expect(t.cools).toEqual([expect.objectContaining({ model: "zen/alpha", lanes: ["slot-1"], reason: "rate_limit", strike: 1, end: 1796116203000 })])
  })

  it("US-45 task-spawn.jsonl: three ok bars, two on slot 1 and one on slot 2; no cooldown, no mark, no special lane", () => {
    const { timeline: t } = fixture("task-spawn")
    expect(t.bars.map((b) => [b.lane, b.outcome])).toEqual([
      ["slot-1", "ok"],
      ["slot-1", "ok"],
      ["slot-2", "ok"]
    ])
    expect(t.cools).toEqual([])
    expect(t.marks).toEqual([])
    expect(t.lanes.map((l) => l.kind)).toEqual(["slot", "slot"])
    expect(t.start).toBe(1796018000737)
    expect(t.end).toBe(1796018003269)
  })

  it("US-45 context-refresh.jsonl: the context runs are marks on the context lane; the failed run's bar is failed, the next ok", () => {
    const { timeline: t } = fixture("context-refresh")
    expect(t.bars.map((b) => [b.claim, b.outcome])).toEqual([
      ["context-map:ctx-mx4gus7k", "failed"],
      ["context-map:ctx-mx4h7n68", "ok"]
    ])
    expect(t.lanes.map((l) => l.id)).toEqual(["slot-1", "slot-2", "context"])
    expect(t.marks.map((m) => [m.lane, m.kind, m.label])).toEqual([
      ["context", "context-start", "bootstrap ctx-mx4gus7k"],
      ["context", "context-done", "ctx-mx4gus7k failed"],
      ["context", "context-skip", "skip (spacing)"],
      ["context", "context-start", "bootstrap ctx-mx4h7n68"],
      ["context", "context-done", "ctx-mx4h7n68 ok"]
    ])
    expect(t.marks[1]!.explain).toContain("goes back in the queue")
  })
})

const P = pool(T0, ["zen/alpha", 1], ["go/gamma", 1])
const spawn = (at: number, claim: string, extra: Record<string, unknown> = {}) => ({ at, type: "spawn", claim, base: "explore", ...extra })
const bind = (at: number, claim: string, session: string) => ({ at, type: "bind", claim, session })
const sweep = (at: number, extra: Record<string, unknown> = {}) => ({ at, type: "sweep", ...extra })
const outcomes = (text: string) => build(text).timeline.bars.map((b) => b.outcome)

describe("US-45 timeline outcome rules", () => {
  it("US-45 a spinning claim (listed by a sweep) is spinning, though the machine releases it as hung", () => {
    const { timeline: t, decisions } = build(trace(P, spawn(T0, "c1"), bind(T0, "c1", "s1"), sweep(T0 + 10_000, { spinning: ["c1"] })))
    expect(decisions.find((d) => d.type === "release")).toMatchObject({ reason: "hung" })
    expect(t.bars.map((b) => b.outcome)).toEqual(["spinning"])
    expect(t.cools[0]).toMatchObject({ reason: "hang", lanes: ["slot-1"] })
  })

  it("US-45 unbound is failed, three failed aborts (gave_up) are aborted with three abort-failed marks, a failed task is failed", () => {
    expect(outcomes(trace(P, spawn(T0, "c1"), sweep(T0 + 6 * MIN)))).toEqual(["failed"])
    const gaveUp = build(trace(P, spawn(T0, "c1"), bind(T0, "c1", "s1"), sweep(T0 + 9 * MIN, { abort: "fail" }), sweep(T0 + 10 * MIN, { abort: "fail" }), sweep(T0 + 11 * MIN, { abort: "fail" })))
    expect(gaveUp.decisions.find((d) => d.type === "release")).toMatchObject({ reason: "gave_up" })
    expect(gaveUp.timeline.bars.map((b) => b.outcome)).toEqual(["aborted"])
    expect(gaveUp.timeline.marks.map((m) => [m.kind, m.label])).toEqual([
      ["abort-failed", "abort failed"],
      ["abort-failed", "abort failed"],
      ["abort-failed", "abort failed"]
    ])
    expect(gaveUp.timeline.bars[0]!.explain.split("\n")).toHaveLength(5)
    expect(outcomes(trace(P, spawn(T0, "c1"), bind(T0, "c1", "s1"), { at: T0 + 1000, type: "release", claim: "c1", ok: false }))).toEqual(["failed"])
  })

  it("US-45 done is ok, also while another claim's 429 cools the model; limit when its own session's signal cooled it and the abort failed", () => {
    const other = trace(P, spawn(T0, "c1"), bind(T0, "c1", "s1"), spawn(T0 + 1, "c2", { peers: { "go/gamma": 5 } }), bind(T0 + 1, "c2", "s2"), { at: T0 + 2, type: "limit", text: "limit reached", session: "s2" }, { at: T0 + 3, type: "release", claim: "c1" })
    const o = build(other)
    expect(o.timeline.bars.map((b) => [b.claim, b.lane])).toEqual([
      ["c1", "slot-1"],
      ["c2", "slot-1"]
    ])
    expect(o.decisions.filter((d) => d.type === "release").map((d) => d.type === "release" && [d.claim, d.reason, d.cooled])).toEqual([
      ["c2", "signal", true],
      ["c1", "done", true]
    ])
    expect(o.timeline.bars.map((b) => b.outcome)).toEqual(["ok", "limit"])
    const own = build(trace(P, spawn(T0, "c1"), bind(T0, "c1", "s1"), { at: T0 + 2, type: "limit", text: "limit reached", session: "s1", abort: "fail" }, { at: T0 + 3, type: "release", claim: "c1" }))
    expect(own.decisions.find((d) => d.type === "release")).toMatchObject({ reason: "done", cooled: true })
    expect(own.timeline.bars.map((b) => b.outcome)).toEqual(["limit"])
  })

  it("US-45 the table of release reasons", () => {
    const f = { cooled: false, signalled: false, limitCooled: false, spinning: false }
    expect(barOutcome("done", f)).toBe("ok")
    expect(barOutcome("done", { ...f, cooled: true })).toBe("ok")
    expect(barOutcome("done", { ...f, cooled: true, signalled: true })).toBe("limit")
    expect(barOutcome("signal", { ...f, limitCooled: true })).toBe("limit")
    expect(barOutcome("signal", f)).toBe("aborted")
    expect(barOutcome("hung", f)).toBe("hung")
    expect(barOutcome("hung", { ...f, spinning: true })).toBe("spinning")
    expect(barOutcome("gave_up", { ...f, spinning: true })).toBe("aborted")
    expect(barOutcome("failed", f)).toBe("failed")
    expect(barOutcome("unbound", f)).toBe("failed")
  })
})

describe("US-45 timeline lanes and marks", () => {
  it("US-45 a quota line is a mark on the quota lane labelled with what it stated; its quota_low cooldown shades the slot", () => {
    const { timeline: t } = build(trace(P, { at: T0 + 1000, type: "quota", model: "zen/alpha", requests: { remaining: 1, limit: 100, resetAt: T0 + 61_000 }, tokens: { remaining: 5000 } }))
    expect(t.marks).toEqual([expect.objectContaining({ lane: "quota", kind: "quota", at: T0 + 1000, label: "zen/alpha requests 1/100, tokens 5000" })])
    expect(t.marks[0]!.explain).toMatch(/^quota of zen\/alpha: requests: 1 of 100 left \(resets .*\); tokens: 5000 left\.\nzen\/alpha cools \(model scope\) for quota_low/)
    expect(t.cools).toEqual([expect.objectContaining({ model: "zen/alpha", lanes: ["slot-1"], reason: "quota_low", end: T0 + 61_000 })])
    expect(t.lanes.map((l) => l.id)).toEqual(["slot-1", "slot-2", "quota"])
  })

  it("US-45 a root session's switch and model decisions go on the fallback lane, with the primary's cooldown (no slot runs it)", () => {
    const { timeline: t } = build(
      trace(
        { ...P, fallbacks: ["go/b", "go/c"] },
        { at: T0 + 1000, type: "retry", session: "ses_root", message: "Monthly usage limit reached", next: T0 + 4000, primary: "main/big" },
        { at: T0 + 3000, type: "switched", session: "ses_root", to: "go/b", ok: true },
        { at: T0 + 10_000, type: "message", session: "ses_root", model: "main/big" }
      )
    )
    expect(t.marks.map((m) => [m.lane, m.kind, m.label])).toEqual([
      ["fallback", "switch", "main/big -> go/b"],
      ["fallback", "model", "main/big -> go/b"]
    ])
    expect(t.cools).toEqual([expect.objectContaining({ model: "main/big", lanes: ["fallback"], reason: "quota" })])
    expect(t.lanes.map((l) => l.id)).toEqual(["slot-1", "slot-2", "fallback"])
  })

  it("US-45 a hand-named slot variant is a mark on the refused lane; no bar", () => {
    const { timeline: t } = build(trace(P, spawn(T0 + 5, "c1", { base: "explore-2" })))
    expect(t.bars).toEqual([])
    expect(t.marks).toEqual([expect.objectContaining({ lane: "refused", kind: "refuse", label: "explore-2", at: T0 + 5 })])
    expect(t.lanes.map((l) => l.id)).toEqual(["slot-1", "slot-2", "refused"])
  })

  it("US-45 lanes are labelled with the model a slot had last; a cooldown shades only the lanes running the model at the time", () => {
    const { timeline: t } = build(
      trace(
        P,
        spawn(T0, "c1"),
        bind(T0, "c1", "s1"),
        { at: T0 + 1, type: "limit", text: "limit reached", session: "s1" },
        pool(T0 + 2, ["go/gamma", 1], ["zen/alpha", 1], ["or/x", 1]),
        { at: T0 + 3, type: "limit", text: "limit reached", model: "zen/alpha" }
      )
    )
    expect(t.lanes.map((l) => l.label)).toEqual(["1. go/gamma", "2. zen/alpha", "3. or/x"])
    expect(t.cools.map((c) => [c.model, c.lanes])).toEqual([
      ["zen/alpha", ["slot-1"]],
      ["zen/alpha", ["slot-2"]]
    ])
    expect(t.cools[1]!.strike).toBe(2)
  })

  it("US-45 --pool slots give the lanes before the first line; an empty trace is 0 to 0; blank lines count as lines", () => {
    const b = timelineBuilder("x", { pool: [{ index: 1, model: "a/b" }, { index: 2, model: "c/d" }] })
    b.add(undefined, [])
    expect(b.finish()).toEqual({ title: "x", start: 0, end: 0, lanes: [expect.objectContaining({ id: "slot-1", label: "1. a/b" }), expect.objectContaining({ id: "slot-2", label: "2. c/d" })], bars: [], cools: [], marks: [], lines: 1, decisions: 0 })
  })
})

const MODELS = ["zen/alpha", "zen/beta", "go/gamma"]
const TEXTS = ["Rate limit exceeded", "limit reached", "context limit reached", "Service Unavailable", "connection reset by peer"]
const claimId = fc.integer({ min: 0, max: 4 }).map((i) => `c${i}`)
const sessionId = fc.integer({ min: 0, max: 4 }).map((i) => `s${i}`)
const abortOutcome = fc.constantFrom("ok", "fail", "pending")
const op = fc.oneof(
  { weight: 6, arbitrary: fc.record({ type: fc.constant("spawn"), claim: claimId, base: fc.constantFrom("explore", "general", "explore-2"), abort: abortOutcome }) },
  { weight: 4, arbitrary: fc.record({ type: fc.constant("bind"), claim: claimId, session: sessionId }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant("activity"), session: sessionId }) },
  { weight: 3, arbitrary: fc.record({ type: fc.constant("release"), claim: claimId, ok: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant("aborted"), claim: claimId, ok: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ type: fc.constant("limit"), text: fc.constantFrom(...TEXTS), session: sessionId, abort: abortOutcome }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant("sweep"), abort: abortOutcome, spinning: fc.array(claimId, { maxLength: 1 }) }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant("quota"), model: fc.constantFrom(...MODELS), requests: fc.record({ remaining: fc.nat(5), limit: fc.constant(100) }) }) },
  { weight: 1, arbitrary: fc.constant({ type: "blank" }) }
)
const traceArb = fc
  .tuple(
    fc.uniqueArray(fc.constantFrom(...MODELS), { minLength: 1, maxLength: 3 }),
    fc.array(fc.tuple(op, fc.constantFrom(0, 1, 1_000, 60_000, 200_000, 480_000)), { minLength: 1, maxLength: 60 })
  )
  .map(([models, ops]) => {
    let at = T0
    const lines = [JSON.stringify({ at, type: "pool", slots: models.map((model) => ({ model, weight: 1 })) })]
    for (const [o, gap] of ops) {
      at += gap
      lines.push(o.type === "blank" ? "" : JSON.stringify({ at, ...o }))
    }
    return lines.join("\n") + "\n"
  })

describe("US-45 timeline properties over generated traces", () => {
  it.prop("US-45 bars never end before they start, every lane referenced exists, one bar per route, open bars are exactly the claims still held", [traceArb], ([text]) => {
    const { timeline: t, decisions, state, lines } = build(text)
    wellFormed(t, decisions, lines)
    expect(t.bars.filter((b) => b.outcome === "open").map((b) => b.claim).sort()).toEqual(state.claims.map((c) => c.key).sort())
    // every release closes its claim's latest bar at the release's time
    const releases = decisions.flatMap((d) => (d.type === "release" ? [d] : []))
    expect(t.bars.filter((b) => b.outcome !== "open").length).toBeGreaterThanOrEqual(releases.length)
    expect(t.cools).toHaveLength(decisions.reduce((n, d) => n + (d.type === "cool" ? d.models.length : 0), 0))
    expect(t.marks.filter((m) => m.kind === "abort" || m.kind === "abort-failed")).toHaveLength(decisions.filter((d) => d.type === "abort").length)
  })
})
