/**
 * What the pool engine counts (issue 36, core/metrics/engineCounts.ts), over real engine steps: each
 * turn's commit carries one count per counter its decisions add to; label values are bases, passes,
 * providers, reasons and kinds, never a session or a claim.
 */
import { describe, expect, it } from "@effect/vitest"
import type { PoolSnapshot } from "../../../src/core/engine/snapshot.js"
import { initialEngineState, type EngineState } from "../../../src/core/engine/state.js"
import type { Applied, EngineEvent } from "../../../src/core/engine/step.js"
import { stepEvents } from "../../helpers.js"
import { effectsOf } from "../../../src/core/engine/effects.js"
import { count, sumCounts, type Count } from "../../../src/core/metrics/counters.js"
import { COUNTS_EVERY_MS, countDecisions, countsDue, NO_HELD_COUNTS, providerLabel, PROVIDER_MAX, reapKind } from "../../../src/core/metrics/engineCounts.js"
import { initialState, step, type TraceState } from "../../../src/core/trace/machine.js"
import type { Slot } from "../../../src/core/pool/pool.js"

const T0 = 1_796_115_600_000
const SNAPSHOT: PoolSnapshot = { peers: [], cooldowns: new Map() }
const TIMING = { hangMinAgeMs: 300_000, hangSilenceMs: 180_000, firstTokenMs: 90_000 }
const SLOTS: ReadonlyArray<Slot> = [
  { index: 1, provider: "zen", model: "zen/alpha", weight: 1 },
  { index: 2, provider: "go", model: "go/gamma", weight: 1 }
]
const RATE_LIMIT = { name: "APIError", data: { statusCode: 429, message: "Slow down", responseHeaders: { "retry-after": "120" } } }

interface Run {
  readonly state: EngineState
  readonly outs: ReadonlyArray<Applied>
  /** Every turn's commit counts, in order. */
  readonly counts: ReadonlyArray<Count>
}

const run = (events: ReadonlyArray<readonly [number, EngineEvent]>, from: EngineState): Run => {
  const { state, outs } = stepEvents(events, from, SNAPSHOT)
  return { state, outs, counts: outs.flatMap((o) => o.commit.counts ?? []) }
}

const pooled = (metrics = true, fallbacks?: ReadonlyArray<string>): EngineState =>
  run([[T0, { type: "pool", slots: SLOTS, origin: "test", warnings: [], ...(fallbacks === undefined ? {} : { fallbacks }) }]], initialEngineState(TIMING, metrics)).state

/** A spawn of `explore` by `root` bound to child `child`. */
const spawned = (from: EngineState, at: number, call: string, child: string): Run =>
  run(
    [
      [at, { type: "spawn", owner: "root", call, base: "explore" }],
      [at + 10, { type: "child", id: child, parent: "root", agent: "explore-1" }]
    ],
    from
  )

const aborted = (r: Run): ReadonlyArray<string> => r.outs.flatMap((o) => effectsOf(o, "Abort").map((a) => a.claim))

describe("US-53 the pool engine's counts", () => {
  it("US-53 a spawn routed counts routes_total by base and pass, one count per counter in the turn's commit", () => {
    const first = spawned(pooled(), T0 + 1, "c1", "k1")
    expect(first.outs[0]!.commit.counts).toEqual([count("routes_total", ["explore", "first"])])
    // more spawns than the slots' caps: each counted by the pass that found its slot, through overflow
    const more = run(
      Array.from({ length: 6 }, (_, i) => [T0 + 2 + i, { type: "spawn", owner: "root", call: `c${i + 2}`, base: "explore" }] as const),
      first.state
    )
    const passes = more.outs.flatMap((o) => o.decisions.flatMap((d) => (d.type === "route" ? [[d.base, d.pass]] : [])))
    expect(passes.map((p) => p[1])).toContain("overflow")
    expect(more.counts.map((c) => c.labels)).toEqual(passes)
    // a base that is not the pool's, a release: nothing counted
    const other = run(
      [
        [T0 + 4, { type: "spawn", owner: "root", call: "c4", base: "general" }],
        [T0 + 5, { type: "taskEnd", claim: "root:c1", ok: true }]
      ],
      more.state
    )
    expect(other.counts).toEqual([])
    // never a session or claim id in a label
    for (const c of [...first.counts, ...more.counts]) for (const l of c.labels) expect(l).not.toMatch(/root|c\d|k\d/)
  })

  it("US-53 a 429 on a pooled child counts the limit by provider and class, the cooldown by reason, and its abort's outcome", () => {
    const s = spawned(pooled(), T0 + 1, "c1", "k1")
    const hit = run([[T0 + 100, { type: "error", session: "k1", error: RATE_LIMIT }]], s.state)
    expect(hit.counts).toEqual([count("cooldowns_total", ["rate_limit"]), count("limits_total", ["zen", "rate_limit"])])
    expect(aborted(hit)).toEqual(["root:c1"])
    // the abort confirmed: aborts_total{ok}; the release after a signal is no reap
    const done = run([[T0 + 200, { type: "aborted", claim: "root:c1", ok: true, reason: "" }]], hit.state)
    expect(done.counts).toEqual([count("aborts_total", ["ok"])])
  })

  it("US-53 a context overflow counts limits_total{provider, context_limit} and cools nothing; an error that is no limit counts nothing", () => {
    const s = spawned(pooled(), T0 + 1, "c1", "k1")
    const overflow = { name: "APIError", data: { statusCode: 413, message: "Request too large" } }
    const r = run([[T0 + 100, { type: "error", session: "k1", error: overflow, model: "zen/alpha" }]], s.state)
    expect(r.outs[0]!.decisions.map((d) => d.type)).toContain("ignore")
    expect(r.counts).toEqual([count("limits_total", ["zen", "context_limit"])])
    const none = run([[T0 + 200, { type: "error", session: "k1", error: { name: "MessageAbortedError", data: { message: "aborted" } } }]], r.state)
    expect(none.counts).toEqual([])
  })

  it("US-53 a hung child's reap counts its abort, the hang cooldown and reaps_total{hung}", () => {
    const s = spawned(pooled(), T0 + 1, "c1", "k1")
    // it spoke (no first-token miss), then went silent past the hang clock
    const spoke = run([[T0 + 20, { type: "activity", session: "k1", assistant: true }], [T0 + 21, { type: "output", session: "k1" }]], s.state)
    const swept = run([[T0 + 600_000, { type: "sweep" }]], spoke.state)
    expect(aborted(swept)).toEqual(["root:c1"])
    expect(swept.counts).toEqual([])
    const done = run([[T0 + 600_100, { type: "aborted", claim: "root:c1", ok: true, reason: "" }]], swept.state)
    expect(sumCounts(done.counts)).toEqual([count("aborts_total", ["ok"]), count("cooldowns_total", ["hang"]), count("reaps_total", ["hung"])])
  })

  it("US-53 a spinning child's reap is reaps_total{spinning}; a child with no first token, reaps_total{no_first_token}", () => {
    const s = spawned(pooled(), T0 + 1, "c1", "k1")
    const requests: Array<readonly [number, EngineEvent]> = Array.from({ length: 20 }, (_, i) => [T0 + 100 + i, { type: "request", session: "k1" }] as const)
    const spun = run(requests, s.state)
    expect(aborted(spun)).toEqual(["root:c1"])
    const done = run([[T0 + 1_000, { type: "aborted", claim: "root:c1", ok: true, reason: "" }]], spun.state)
    expect(done.counts).toContainEqual(count("reaps_total", ["spinning"]))

    const quiet = spawned(pooled(), T0 + 1, "c2", "k2")
    const stalled = run([[T0 + 100_000, { type: "sweep" }]], quiet.state)
    expect(aborted(stalled)).toEqual(["root:c2"])
    const gone = run([[T0 + 100_100, { type: "aborted", claim: "root:c2", ok: true, reason: "" }]], stalled.state)
    // the first miss in a row cools nothing
    expect(gone.counts).toEqual([count("aborts_total", ["ok"]), count("reaps_total", ["no_first_token"])])
  })

  it("US-53 an abort that fails three times counts aborts_total{failed} each time and then {gave_up}", () => {
    const s = spawned(pooled(), T0 + 1, "c1", "k1")
    let state = run([[T0 + 20, { type: "output", session: "k1" }]], s.state).state
    const counts: Array<Count> = []
    let at = T0 + 600_000
    for (let i = 0; i < 3; i++) {
      const swept = run([[at, { type: "sweep" }]], state)
      const failed = run([[at + 100, { type: "aborted", claim: "root:c1", ok: false, reason: "still busy" }]], swept.state)
      counts.push(...swept.counts, ...failed.counts)
      state = failed.state
      at += 60_000
    }
    expect(sumCounts(counts)).toEqual([count("aborts_total", ["failed"], 3), count("aborts_total", ["gave_up"])])
  })

  it("US-53 a claim no child ever bound, taken back by the reaper, is reaps_total{unbound}", () => {
    const s = run([[T0 + 1, { type: "spawn", owner: "root", call: "c1", base: "explore" }]], pooled())
    const swept = run([[T0 + 400_000, { type: "sweep" }]], s.state)
    expect(swept.outs[0]!.decisions).toContainEqual(expect.objectContaining({ type: "release", reason: "unbound" }))
    expect(swept.counts).toEqual([count("reaps_total", ["unbound"])])
  })

  it("US-53 a root session switched to a fallback counts fallback_switches_total with its limit and cooldown", () => {
    const s = run(
      [
        [T0 + 1, { type: "request", session: "main", model: "zen/alpha", agent: "build" }],
        [T0 + 2, { type: "error", session: "main", error: RATE_LIMIT }]
      ],
      pooled(true, ["go/gamma"])
    )
    expect(s.outs[1]!.decisions.map((d) => d.type)).toContain("switch")
    expect(s.counts).toEqual([count("cooldowns_total", ["rate_limit"]), count("limits_total", ["zen", "rate_limit"]), count("fallback_switches_total")])
  })

  it("US-53 with metrics off (option metrics: false) no turn counts anything", () => {
    const s = spawned(pooled(false), T0 + 1, "c1", "k1")
    const hit = run(
      [
        [T0 + 100, { type: "error", session: "k1", error: RATE_LIMIT }],
        [T0 + 200, { type: "aborted", claim: "root:c1", ok: true, reason: "" }]
      ],
      s.state
    )
    expect([...s.outs, ...hit.outs].map((o) => o.commit.counts)).toEqual([undefined, undefined, undefined, undefined])
    expect(hit.outs[0]!.decisions.map((d) => d.type)).toContain("cool")
  })

  it("US-53 a replayed sweep that aborts and releases in one line names the kind from its own lists; provider labels are bounded", () => {
    let st: TraceState = initialState
    const feed = (line: Parameters<typeof step>[1]) => {
      const before = st
      const r = step(st, line)
      if (r._tag !== "Ok") throw new Error(r.message)
      st = r.state
      const out: Array<Count> = []
      countDecisions(out, line, r.decisions, before)
      return out
    }
    feed({ type: "pool", at: T0, slots: [{ model: "zen/alpha", weight: 2 }] })
    feed({ type: "spawn", at: T0, claim: "a", base: "explore" })
    feed({ type: "bind", at: T0, claim: "a", session: "ka", activity: true })
    expect(reapKind(st, { type: "sweep", at: T0 + 1, spinning: ["a"] }, "a")).toBe("spinning")
    expect(feed({ type: "sweep", at: T0 + 1, spinning: ["a"], abort: "ok" })).toContainEqual(count("reaps_total", ["spinning"]))
    expect(providerLabel("zen/alpha")).toBe("zen")
    expect(providerLabel(undefined, "openrouter")).toBe("openrouter")
    expect(providerLabel(undefined)).toBe("unknown")
    expect(providerLabel(undefined, "x".repeat(500))).toHaveLength(PROVIDER_MAX)
  })

  it("US-53 the engine writes its counts at most once a second, summed: a burst of spawns is one row; a view's counts are held, never lost", () => {
    const route = count("routes_total", ["explore", "first"])
    const first = countsDue(NO_HELD_COUNTS, [route], T0, true)
    expect(first.write).toEqual([route])
    const second = countsDue(first.held, [route], T0 + 10, true)
    expect(second.write).toBeUndefined()
    // a view's step (a status read) writes nothing: its counts wait with the others
    const viewed = countsDue(second.held, [count("cooldowns_total", ["hang"])], T0 + 20, false)
    const third = countsDue(viewed.held, [route], T0 + 30, true)
    expect(third.write).toBeUndefined()
    // a commit a second after the last write takes everything held, one count per counter
    const due = countsDue(third.held, undefined, T0 + COUNTS_EVERY_MS, true)
    expect(due.write).toEqual([{ ...route, by: 2 }, count("cooldowns_total", ["hang"])])
    expect(due.held).toEqual({ counts: [], writtenAt: T0 + COUNTS_EVERY_MS })
    expect(countsDue(due.held, undefined, T0 + 5_000, true).write).toBeUndefined()
  })
})
