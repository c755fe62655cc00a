/**
 * Time lost before the first token (issue 35, item 5): a pooled child that streams no first token within
 * `firstTokenMs` is aborted by the timer sweep and released like a hung one; its model cools only on the
 * second miss in a row; the hang clock is unchanged. The engine over memory layers with the TestClock,
 * and the recorded trace replays to the same decisions.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, TestClock } from "effect"
import { resolvePool } from "../../src/core/source.js"
import { formatDecision } from "../../src/core/trace/format.js"
import { replayText } from "../../src/core/trace/replay.js"
import { AbortClientMemory } from "../../src/layers/opencode/AbortClientMemory.js"
import { AppLogMemory } from "../../src/layers/opencode/AppLogMemory.js"
import { memoryState, type MemoryState } from "../../src/layers/state/MemoryState.js"
import { PoolConfigMemory } from "../../src/layers/pool/PoolConfigMemory.js"
import { TraceRecorderMemory } from "../../src/layers/pool/TraceRecorderMemory.js"
import { reaperLoop } from "../../src/layers/pool/watchPool.js"
import type { LogLevel } from "../../src/services/opencode/AppLog.js"
import { engineOn } from "./testEngine.js"

const SEC = 1_000
const MIN = 60_000
const POOL_TEXT = "zen/alpha 1\ngo/gamma 1\n"
const pool = resolvePool([{ kind: "file", origin: "test", text: POOL_TEXT }], 4)

const proc = (shared: MemoryState, firstTokenMs: number | null = 90 * SEC, abortOutcomes: Array<string> = ["ok"]) =>
  Effect.gen(function* () {
    const logs: Array<{ level: LogLevel; message: string }> = []
    const aborts: Array<string> = []
    const rest = Layer.mergeAll(AppLogMemory(logs), AbortClientMemory(abortOutcomes, aborts), TraceRecorderMemory(shared), PoolConfigMemory(pool))
    const timing = { hangMinAgeMs: 5 * MIN, hangSilenceMs: 3 * MIN, ...(firstTokenMs === null ? {} : { firstTokenMs }) }
    const engine = yield* engineOn(rest, { timing, reapMs: 30_000 }, shared, 1)
    yield* engine.applyPool(pool)
    return { engine, logs, aborts }
  })

type Proc = Effect.Effect.Success<ReturnType<typeof proc>>

const spawn = (p: Proc, session: string, call: string) =>
  Effect.gen(function* () {
    const args: Record<string, unknown> = { subagent_type: "explore" }
    yield* p.engine.beforeTask(session, call, args).pipe(Effect.orDie)
    return args.subagent_type as string
  })

/** A spawn whose child session is created at once (bound). */
const child = (p: Proc, call: string, session: string) =>
  Effect.gen(function* () {
    const agent = yield* spawn(p, "par", call)
    yield* p.engine.childCreated(session, "par", agent, undefined)
    return agent
  })

const claimKeys = (p: Proc) => p.engine.view.claims.map((c) => c.key)
const warned = (p: Proc, re: RegExp) => p.logs.filter((l) => re.test(l.message)).map((l) => `${l.level} ${l.message}`)

/** The recorded trace replayed by `ocpool replay`'s machine gives exactly the recorded decisions. */
const replays = (shared: MemoryState): void => {
  const replay = replayText(shared.trace.map((l) => JSON.stringify(l)).join("\n") + "\n")
  expect(replay.decisions.map(formatDecision)).toEqual(shared.decisions)
}

describe("no first token within firstTokenMs (issue 35)", () => {
  it.effect("US-8 a bound child with no output 90 s after its spawn is aborted by the timer sweep and released, its model not cooled; at 89 s it is left alone", () =>
    Effect.gen(function* () {
      const shared = memoryState()
      const p = yield* proc(shared)
      yield* child(p, "c1", "s1")
      // the prompt's own text part (output before any assistant message) is no first token, nor is
      // activity that is not output (a step start), nor the assistant message itself
      yield* p.engine.output("s1")
      yield* TestClock.adjust(20 * SEC)
      yield* p.engine.assistantMessage("s1")
      yield* p.engine.activity("s1")
      yield* TestClock.adjust(69 * SEC)
      yield* p.engine.timerSweep
      expect(p.aborts).toEqual([])
      yield* TestClock.adjust(1 * SEC)
      yield* p.engine.timerSweep
      expect(p.aborts).toEqual(["s1"])
      expect(claimKeys(p)).toEqual([])
      expect(shared.cooldowns.has("zen/alpha")).toBe(false)
      expect(p.engine.view.reaped).toBe(1)
      expect(warned(p, /no first token|reaped/)).toEqual([
        "warn no first token session=s1 model=zen/alpha after=90s (firstTokenMs 90s)",
        "debug aborting claim=par:c1 session=s1 (no first token)",
        "warn reaped claim=par:c1 session=s1 model=zen/alpha age=90s silence=70s outcome=no_first_token"
      ])
      // the slot is free again: the next spawn goes back to slot 1
      expect(yield* spawn(p, "par", "c2")).toBe("explore-1")
      const sweepLine = shared.trace.find((l) => l["type"] === "sweep" && Array.isArray(l["stalled"]))
      expect(sweepLine).toMatchObject({ at: 90 * SEC, stalled: ["par:c1"], abort: "pending" })
      replays(shared)
    })
  )

  it.effect("US-8 the second first-token miss in a row on a model cools it for hang, and the next spawn goes to slot 2", () =>
    Effect.gen(function* () {
      const shared = memoryState()
      const p = yield* proc(shared)
      expect(yield* child(p, "c1", "s1")).toBe("explore-1")
      yield* TestClock.adjust(90 * SEC)
      yield* p.engine.timerSweep
      expect(shared.cooldowns.has("zen/alpha")).toBe(false)
      expect(yield* child(p, "c2", "s2")).toBe("explore-1")
      yield* TestClock.adjust(90 * SEC)
      yield* p.engine.timerSweep
      expect(p.aborts).toEqual(["s1", "s2"])
      expect(shared.cooldowns.get("zen/alpha")).toMatchObject({ reason: "hang", strikes: 0, until: 180 * SEC + 10 * MIN })
      expect(yield* spawn(p, "par", "c3")).toBe("explore-2")
      replays(shared)
    })
  )

  it.effect("US-8 a task that ended well between two misses starts the count again: the second miss does not cool", () =>
    Effect.gen(function* () {
      const shared = memoryState()
      const p = yield* proc(shared)
      yield* child(p, "c1", "s1")
      yield* TestClock.adjust(90 * SEC)
      yield* p.engine.timerSweep
      yield* child(p, "c2", "s2")
      yield* TestClock.adjust(5 * SEC)
      yield* p.engine.assistantMessage("s2")
      yield* p.engine.output("s2")
      yield* p.engine.release("par:c2", true)
      yield* child(p, "c3", "s3")
      yield* TestClock.adjust(90 * SEC)
      yield* p.engine.timerSweep
      expect(p.aborts).toEqual(["s1", "s3"])
      expect(shared.cooldowns.has("zen/alpha")).toBe(false)
      replays(shared)
    })
  )

  it.effect("US-8 a child whose first token came in time is left to the hang clock: silent afterwards, it is aborted at 5 min of age and 3 min of silence, and cooled", () =>
    Effect.gen(function* () {
      const shared = memoryState()
      const p = yield* proc(shared)
      yield* child(p, "c1", "s1")
      yield* TestClock.adjust(30 * SEC)
      yield* p.engine.assistantMessage("s1")
      yield* p.engine.output("s1")
      yield* p.engine.activity("s1")
      for (let t = 1; t <= 9; t++) {
        yield* TestClock.adjust(30 * SEC)
        yield* p.engine.timerSweep
      }
      // 5 min of age, 4 min 30 s of silence: the hang rule, unchanged
      expect(p.aborts).toEqual([])
      yield* TestClock.adjust(30 * SEC + 1)
      yield* p.engine.timerSweep
      expect(p.aborts).toEqual(["s1"])
      expect(shared.cooldowns.get("zen/alpha")).toMatchObject({ reason: "hang" })
      expect(warned(p, /no first token/)).toEqual([])
      replays(shared)
    })
  )

  it.effect("US-43 a child held by a pending permission is not aborted for its missing first token", () =>
    Effect.gen(function* () {
      const p = yield* proc(memoryState())
      yield* child(p, "c1", "s1")
      yield* p.engine.ask("s1", "per_1", true)
      yield* TestClock.adjust(2 * MIN)
      yield* p.engine.timerSweep
      expect(p.aborts).toEqual([])
      expect(claimKeys(p)).toEqual(["par:c1"])
    })
  )

  it.effect("US-8 a spawn's own sweep does not judge first tokens; an unbound claim has no session to abort", () =>
    Effect.gen(function* () {
      const shared = memoryState()
      const p = yield* proc(shared)
      yield* child(p, "c1", "s1")
      yield* spawn(p, "par", "c2")
      yield* TestClock.adjust(2 * MIN)
      yield* spawn(p, "par", "c3")
      expect(p.aborts).toEqual([])
      yield* p.engine.timerSweep
      expect(p.aborts).toEqual(["s1"])
      expect(claimKeys(p)).toEqual(["par:c2", "par:c3"])
      replays(shared)
    })
  )

  it.effect("US-10 a failed first-token abort keeps the claim; the next sweep retries it and, once it succeeds, the first miss still cools nothing", () =>
    Effect.gen(function* () {
      const shared = memoryState()
      const p = yield* proc(shared, 90 * SEC, ["HTTP 500", "ok"])
      yield* child(p, "c1", "s1")
      yield* TestClock.adjust(90 * SEC)
      yield* p.engine.timerSweep
      expect(claimKeys(p)).toEqual(["par:c1"])
      yield* TestClock.adjust(30 * SEC)
      yield* p.engine.timerSweep
      expect(p.aborts).toEqual(["s1", "s1"])
      expect(claimKeys(p)).toEqual([])
      expect(shared.cooldowns.has("zen/alpha")).toBe(false)
      replays(shared)
    })
  )

  it.effect("US-8 with reapMs 1 s and firstTokenMs 3 s the reaper aborts a child with no first token within 4 s, on its own", () =>
    Effect.gen(function* () {
      const p = yield* proc(memoryState(), 3 * SEC)
      yield* child(p, "c1", "s1")
      const fiber = yield* Effect.fork(reaperLoop(p.engine.raw, 1000))
      yield* TestClock.adjust(2500)
      expect(p.aborts).toEqual([])
      yield* TestClock.adjust(1500)
      yield* p.engine.settle
      expect(p.aborts).toEqual(["s1"])
      yield* Fiber.interrupt(fiber)
    })
  )

  it.effect("US-8 without firstTokenMs in the engine's timing there is no first-token rule", () =>
    Effect.gen(function* () {
      const p = yield* proc(memoryState(), null)
      yield* child(p, "c1", "s1")
      yield* TestClock.adjust(4 * MIN)
      yield* p.engine.timerSweep
      expect(p.aborts).toEqual([])
    })
  )
})
