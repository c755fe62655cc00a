import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { isLive, type Claim } from "../../../src/core/pool/claims.js"
import { DEFAULT_TIMING, type ReaperTiming } from "../../../src/core/pool/reaper.js"
import { getActivity } from "../../../src/core/trace/activity.js"
import { indexView, liveTarget, oldestAcquired, oldestUnbound } from "../../../src/core/trace/claimTable.js"
import { decodeLine, InputError } from "../../../src/core/trace/input.js"
import { initialState, step, type Decision, type TraceState } from "../../../src/core/trace/machine.js"
import { formatDecision } from "../../../src/core/trace/format.js"
import { T0 } from "../../helpers.js"

/** The oracle the indexed lookup must agree with: the first live claim targeting `session`, by a scan. */
const liveTargetOf = (claims: ReadonlyArray<Claim>, session: string | undefined, now: number): Claim | undefined => {
  if (session === undefined) return undefined
  for (const c of claims) if (c.targetSession === session && isLive(c, now)) return c
  return undefined
}

const MODELS = ["zen/alpha", "zen/beta", "go/gamma"]
const claimId = fc.integer({ min: 0, max: 7 }).map((i) => `c${i}`)
const sessionId = fc.integer({ min: 0, max: 5 }).map((i) => `s${i}`)
const outcome = fc.constantFrom("ok", "fail", "pending")

const op = fc.oneof(
  { weight: 6, arbitrary: fc.record({ type: fc.constant("spawn"), claim: claimId, base: fc.constantFrom("explore", "implement", "context"), session: fc.constantFrom("p1", "p2"), abort: outcome }) },
  { weight: 4, arbitrary: fc.record({ type: fc.constant("bind"), claim: claimId, session: sessionId, activity: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ type: fc.constant("activity"), session: sessionId }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant("release"), claim: claimId, ok: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant("aborted"), claim: claimId, ok: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant("limit"), text: fc.constantFrom("Rate limit exceeded", "Service Unavailable"), status: fc.constantFrom(429, 503), session: sessionId, abort: outcome }) },
  { weight: 3, arbitrary: fc.record({ type: fc.constant("sweep"), abort: outcome, blocked: fc.array(claimId, { maxLength: 3 }), spinning: fc.array(claimId, { maxLength: 1 }) }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant("status") }) },
  {
    weight: 1,
    arbitrary: fc.record({
      type: fc.constant("pool"),
      slots: fc.constant(MODELS.map((model, i) => ({ model, weight: i + 1 }))),
      hangMinAgeMs: fc.constantFrom(60_000, 300_000),
      hangSilenceMs: fc.constantFrom(30_000, 180_000)
    })
  }
)

const gap = fc.constantFrom(0, 1, 1_000, 30_000, 60_000, 120_000, 200_000, 330_000, 700_000)

/** Lines of a trace: a pool line, then ops at non-decreasing times. */
const traceArb = fc.array(fc.tuple(op, gap), { minLength: 1, maxLength: 120 }).map((ops) => {
  let at = T0
  const lines = [JSON.stringify({ at, type: "pool", slots: MODELS.map((model) => ({ model, weight: 1 })) })]
  for (const [o, g] of ops) {
    at += g
    lines.push(JSON.stringify({ at, ...o }))
  }
  return lines
})

const stepLine = (state: TraceState, line: string) => {
  const input = decodeLine(line)
  if (input instanceof InputError) throw new Error(input.message)
  const r = step(state, input)
  if (r._tag !== "Ok") throw new Error(r.message)
  return r
}

const timingOf = (s: TraceState): ReaperTiming => s.timing ?? DEFAULT_TIMING
const keysOf = (cs: ReadonlyArray<Claim>) => cs.map((c) => c.key)

/** Every index of the state's claim table against a count from its claims, at the state's time. */
const checkIndexes = (state: TraceState): void => {
  const at = state.lastAt!
  const timing = timingOf(state)
  const claims = state.claims
  const view = indexView(state.table, at, timing)
  const live = new Map<string, number>()
  for (const c of claims) if (isLive(c, at)) live.set(c.model, (live.get(c.model) ?? 0) + 1)
  expect(view.live).toEqual(live)
  const group = (by: (c: Claim) => string | null) => {
    const m = new Map<string, Array<string>>()
    for (const c of claims) {
      const k = by(c)
      if (k !== null) m.set(k, [...(m.get(k) ?? []), c.key])
    }
    return m
  }
  expect(view.byTarget).toEqual(group((c) => c.targetSession))
  expect(view.byOwner).toEqual(group((c) => c.ownerSession))
  expect(view.unboundByOwner).toEqual(group((c) => (c.targetSession === null ? c.ownerSession : null)))
  expect(view.owed).toEqual(keysOf(claims.filter((c) => c.abortPending && !c.abortInFlight)))
  expect(keysOf(oldestUnbound(state.table, () => true))).toEqual(keysOf(claims.filter((c) => c.targetSession === null)))
  expect(oldestAcquired(state.table)).toBe(claims.length === 0 ? Number.POSITIVE_INFINITY : Math.min(...claims.map((c) => c.acquiredAt)))
  for (let i = 0; i < 6; i++) expect(liveTarget(state.table, `s${i}`, at)).toBe(liveTargetOf(claims, `s${i}`, at))
  // a claim the reaper may act on has a deadline entry that is due by the first time it can act
  for (const c of claims) {
    if (c.abortInFlight || c.abortPending) continue
    const entry = view.due.get(c.key)
    expect(entry, c.key).toBeDefined()
    const last = c.targetSession === null ? undefined : getActivity(state.activity, c.targetSession)
    const since = last === undefined ? c.acquiredAt : Math.max(last, c.acquiredAt)
    const first = c.targetSession === null ? c.acquiredAt + timing.hangMinAgeMs + 1 : Math.max(c.acquiredAt + timing.hangMinAgeMs + 1, since + timing.hangSilenceMs)
    expect(view.ready(entry!, first), c.key).toBe(true)
  }
}

describe("the claim table's indexes (src/core/trace/claimTable.ts)", () => {
  it.prop("US-45 after every line, loads, targets, owners, owed aborts, unbound order and deadlines equal a recount from the claims", [traceArb], ([lines]) => {
    let state = initialState
    for (const line of lines) {
      state = stepLine(state, line).state
      checkIndexes(state)
    }
  }, { fastCheck: { numRuns: 400 } })

  it.prop("US-45 stepping again from any earlier state (a branch) decides what the first pass decided, and keeps its indexes right", [traceArb, fc.nat()], ([lines, pick]) => {
    const states: Array<TraceState> = [initialState]
    const first: Array<ReadonlyArray<Decision>> = []
    for (const line of lines) {
      const r = stepLine(states.at(-1)!, line)
      states.push(r.state)
      first.push(r.decisions)
    }
    const from = pick % lines.length
    let state = states[from]!
    for (let i = from; i < lines.length; i++) {
      const r = stepLine(state, lines[i]!)
      expect(r.decisions.map(formatDecision)).toEqual(first[i]!.map(formatDecision))
      state = r.state
      checkIndexes(state)
    }
    // the states of the first pass still read as they did
    expect(states.at(-1)!.claims).toEqual(state.claims)
  }, { fastCheck: { numRuns: 300 } })
})

describe("the claim table's deadlines with extreme timings", () => {
  it("US-32 a hang age or silence too long to add to a time still lets a sweep release an old unbound claim and keeps a bound one", () => {
    const lines = [
      { at: T0, type: "pool", slots: [{ model: "zen/alpha", weight: 1 }] },
      // the bound claim first: its key must not hide the unbound one's below it in the heap
      { at: T0 + 1, type: "spawn", claim: "b", base: "explore", session: "p" },
      { at: T0 + 2, type: "bind", claim: "b", session: "s", activity: true },
      { at: T0 + 3, type: "spawn", claim: "a", base: "explore", session: "p" },
      { at: T0 + 400_000, type: "sweep" }
    ].map((l) => JSON.stringify(l))
    for (const timing of [
      { hangMinAgeMs: 300_000, hangSilenceMs: Number.MAX_SAFE_INTEGER },
      { hangMinAgeMs: 300_000, hangSilenceMs: Number.POSITIVE_INFINITY }
    ]) {
      let state = initialState
      const decisions: Array<Decision> = []
      for (const line of lines) {
        const input = decodeLine(line)
        if (input instanceof InputError) throw new Error(input.message)
        const r = step(state, input, { timing })
        if (r._tag !== "Ok") throw new Error(r.message)
        state = r.state
        decisions.push(...r.decisions)
      }
      expect(decisions.filter((d) => d.type === "release").map((d) => (d.type === "release" ? `${d.claim} ${d.reason}` : ""))).toEqual(["a unbound"])
      expect(state.claims.map((c) => c.key)).toEqual(["b"])
    }
  })
})
