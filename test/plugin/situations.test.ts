/**
 * The five situations where the plugin's shell used to decide apart from the core machine, each driven
 * through the engine with the TestClock and an abort client whose latency and outcome the test sets.
 * In each, the plugin's actions, its decisions file and the replay of its trace agree exactly.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Scope, TestClock, Exit } from "effect"
import { resolvePool } from "../../src/core/source.js"
import { formatDecision } from "../../src/core/trace/format.js"
import { replayText } from "../../src/core/trace/replay.js"
import { AppLogMemory } from "../../src/layers/opencode/AppLogMemory.js"
import { memoryState, type MemoryState } from "../../src/layers/state/MemoryState.js"
import { PoolConfigMemory } from "../../src/layers/pool/PoolConfigMemory.js"
import { TraceRecorderMemory } from "../../src/layers/pool/TraceRecorderMemory.js"
import { AbortClient } from "../../src/services/opencode/AbortClient.js"
import { answeredAborts, engineOn, quiesce } from "./testEngine.js"

const MIN = 60_000
const POOL = resolvePool([{ kind: "file", origin: "test", text: "zen/alpha 1\ngo/gamma 1\n" }], 4)
const TIMING = { hangMinAgeMs: 5 * MIN, hangSilenceMs: 3 * MIN }

/** An abort client that takes `ms` (TestClock) and then succeeds. */
const slow = (ms: number, calls: Array<string>) =>
  Layer.succeed(AbortClient, { abort: (session) => Effect.zipRight(Effect.sync(() => void calls.push(session)), Effect.sleep(ms)) })

const setup = (abort: Layer.Layer<AbortClient>, timing = TIMING, shared: MemoryState = memoryState()) =>
  Effect.gen(function* () {
    const layer = Layer.mergeAll(AppLogMemory([]), abort, TraceRecorderMemory(shared), PoolConfigMemory(POOL))
    const t = yield* engineOn(layer, { timing, reapMs: 30_000 }, shared, 1)
    yield* t.applyPool(POOL)
    return { t, e: t.raw, shared }
  })

const spawn = (e: { readonly beforeTask: (s: string, c: string, a: Record<string, unknown>) => Effect.Effect<void, unknown> }, owner: string, call: string) =>
  Effect.gen(function* () {
    const args: Record<string, unknown> = { subagent_type: "explore" }
    yield* e.beforeTask(owner, call, args).pipe(Effect.orDie)
    return args.subagent_type as string
  })

/** The recorded trace replays to exactly the recorded decisions. */
const agrees = (shared: MemoryState) => {
  const replay = replayText(shared.trace.map((l) => JSON.stringify(l)).join("\n") + "\n")
  expect(replay.error).toBeUndefined()
  expect(replay.decisions.map(formatDecision)).toEqual(shared.decisions)
  return replay
}

const decided = (shared: MemoryState) => shared.decisions.map((d) => JSON.parse(d) as Record<string, unknown>)

describe("one decision engine: the five situations (TRACE.md §6)", () => {
  it.effect("US-8 a spawn while a sweep's abort is in flight routes with the hung claim still counted and its model not yet cooled; replay agrees", () =>
    Effect.gen(function* () {
      const a = answeredAborts()
      const { e, shared } = yield* setup(a.layer)
      expect(yield* spawn(e, "par", "c1")).toBe("explore-1")
      yield* e.apply({ type: "child", id: "s1", parent: "par", agent: "explore-1" })
      yield* TestClock.adjust(9 * MIN)
      // the spawn's sweep finds c1 hung and requests its abort; the abort is still running when it routes
      expect(yield* spawn(e, "par", "c2")).toBe("explore-2")
      yield* quiesce
      expect(a.calls).toEqual(["s1"])
      expect(shared.cooldowns.get("zen/alpha")).toBeUndefined()
      expect(shared.processes.get(1)!.claims.map((c) => c.key)).toEqual(["par:c1", "par:c2"])
      // another spawn meanwhile: c1 is not attempted again and still counts
      expect(yield* spawn(e, "par", "c3")).toBe("explore-1")
      yield* quiesce
      expect(a.calls).toEqual(["s1"])
      expect(shared.trace.filter((l) => l.type === "spawn").map((l) => l.abort)).toEqual([undefined, "pending", undefined])
      yield* Deferred.succeed(a.pending[0]!, undefined)
      yield* e.settle
      expect(shared.cooldowns.get("zen/alpha")).toMatchObject({ reason: "hang" })
      expect(shared.processes.get(1)!.claims.map((c) => c.key)).toEqual(["par:c2", "par:c3"])
      expect(shared.processes.get(1)!.reaped).toBe(1)
      const replay = agrees(shared)
      expect(decided(shared).slice(-3).map((d) => [d.type, d.reason ?? d.ok ?? d.model])).toEqual([
        ["abort", true],
        ["cool", "hang"],
        ["release", "hung"]
      ])
      expect(replay.state.reaped).toBe(1)
    })
  )

  it.effect("US-8 US-4 a hang abort and a 429 on the same child: one abort call, the model cooled for the 429, released as signal (reaped 0); replay agrees", () =>
    Effect.gen(function* () {
      const a = answeredAborts()
      const { e, shared } = yield* setup(a.layer)
      yield* spawn(e, "par", "c1")
      yield* e.apply({ type: "child", id: "s1", parent: "par", agent: "explore-1" })
      yield* TestClock.adjust(9 * MIN)
      yield* e.sweep
      yield* quiesce
      yield* e.apply({ type: "error", session: "s1", error: { name: "APIError", data: { statusCode: 429, message: "Slow down" } }, model: "zen/alpha" })
      yield* quiesce
      expect(a.calls).toEqual(["s1"])
      expect(shared.cooldowns.get("zen/alpha")).toMatchObject({ reason: "rate_limit", strikes: 1 })
      yield* Deferred.succeed(a.pending[0]!, undefined)
      yield* e.settle
      expect(shared.processes.get(1)!.claims).toEqual([])
      expect(shared.processes.get(1)!.reaped).toBe(0)
      expect(shared.cooldowns.get("zen/alpha")).toMatchObject({ reason: "rate_limit" })
      agrees(shared)
      // what the 429 taught its model's group (issue 35) is a turn of its own, ordered with the abort's by the scheduler
      expect(decided(shared).filter((d) => d.type === "budget")).toHaveLength(1)
      expect(decided(shared).slice(1).filter((d) => d.type !== "budget").map((d) => [d.type, d.reason ?? d.ok])).toEqual([
        ["cool", "rate_limit"],
        ["abort", true],
        ["release", "signal"]
      ])
    })
  )

  it.effect("US-45 an abort that takes 11 s: its outcome is its own line at the time it arrived, lines never go back in time, and the cooldown file is the decision's", () =>
    Effect.gen(function* () {
      const calls: Array<string> = []
      const { e, shared } = yield* setup(slow(11_000, calls))
      yield* spawn(e, "par", "c1")
      yield* e.apply({ type: "child", id: "s1", parent: "par", agent: "explore-1" })
      yield* TestClock.adjust(5_000)
      yield* e.apply({ type: "error", session: "s1", error: { name: "APIError", data: { statusCode: 429, message: "Slow down" } } })
      yield* quiesce
      for (let i = 0; i < 5; i++) {
        yield* TestClock.adjust(2_000)
        yield* spawn(e, "other", `x${i}`)
      }
      yield* TestClock.adjust(2_000)
      yield* e.settle
      const ats = shared.trace.map((l) => l.at as number)
      expect([...ats].sort((x, y) => x - y)).toEqual(ats)
      const limit = shared.trace.find((l) => l.type === "limit")!
      const outcome = shared.trace.find((l) => l.type === "aborted")!
      expect(outcome.at as number).toBe((limit.at as number) + 11_000)
      const cool = decided(shared).find((d) => d.type === "cool")!
      expect(shared.cooldowns.get("zen/alpha")!.until).toBe(cool.until)
      agrees(shared)
    })
  )

  it.effect("US-8 custom hang timings go into the trace: replay without options reaps what the plugin reaped", () =>
    Effect.gen(function* () {
      const calls: Array<string> = []
      const { e, shared } = yield* setup(slow(0, calls), { hangMinAgeMs: 60_000, hangSilenceMs: 30_000 })
      yield* spawn(e, "par", "c1")
      yield* e.apply({ type: "child", id: "s1", parent: "par", agent: "explore-1" })
      yield* TestClock.adjust(2 * MIN)
      yield* e.sweep
      yield* e.settle
      expect(calls).toEqual(["s1"])
      expect(shared.trace[0]).toMatchObject({ type: "pool", hangMinAgeMs: 60_000, hangSilenceMs: 30_000 })
      const replay = agrees(shared)
      expect(replay.decisions.map((d) => d.type)).toEqual(["route", "abort", "cool", "release"])
      expect(replay.state.reaped).toBe(1)
    })
  )

  it.effect("US-15 dispose while an abort and a hook are in flight: the claim file is gone and nothing is written after", () =>
    Effect.gen(function* () {
      const a = answeredAborts()
      const { t, e, shared } = yield* setup(a.layer)
      yield* spawn(e, "par", "c1")
      yield* e.apply({ type: "child", id: "s1", parent: "par", agent: "explore-1" })
      yield* TestClock.adjust(9 * MIN)
      yield* e.sweep
      yield* quiesce
      expect(a.calls).toEqual(["s1"])
      const lines = shared.trace.length
      // a spawn racing the dispose
      const racing = yield* Effect.fork(spawn(e, "par", "c2"))
      yield* Scope.close(t.scope, Exit.void)
      yield* Fiber.join(racing)
      yield* Deferred.succeed(a.pending[0]!, undefined)
      yield* quiesce
      expect(shared.processes.has(1)).toBe(false)
      expect(yield* e.apply({ type: "sweep" })).toBeUndefined()
      yield* TestClock.adjust(10 * MIN)
      yield* quiesce
      expect(shared.processes.has(1)).toBe(false)
      expect(shared.trace.length).toBeLessThanOrEqual(lines + 1)
      agrees(shared)
    })
  )
})
