/**
 * The plugin's programs over memory layers, with the TestClock for every timing: hangs, back-fills,
 * blocked children, give-ups, the reaper schedule, and several processes sharing one state.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, TestClock } from "effect"
import { resolvePool } from "../../src/core/source.js"
import { AbortClientMemory } from "../../src/layers/opencode/AbortClientMemory.js"
import { AppLogMemory } from "../../src/layers/opencode/AppLogMemory.js"
import { memoryState, type MemoryState } from "../../src/layers/state/MemoryState.js"
import { PoolConfigMemory } from "../../src/layers/pool/PoolConfigMemory.js"
import { TraceRecorderMemory } from "../../src/layers/pool/TraceRecorderMemory.js"
import { reaperLoop } from "../../src/layers/pool/watchPool.js"
import { engineOn, type TestEngine } from "./testEngine.js"
import { AbortClient } from "../../src/services/opencode/AbortClient.js"
import type { SharedStateService } from "../../src/services/state/SharedState.js"
import type { LogLevel } from "../../src/services/opencode/AppLog.js"

const MIN = 60_000
const pool = (text: string) => resolvePool([{ kind: "file", origin: "test", text }], 4)

interface Proc {
  readonly engine: TestEngine
  readonly logs: Array<{ level: LogLevel; message: string }>
  readonly aborts: Array<string>
  readonly state: TestEngine["view"]
}

/** One plugin process over the shared memory state. */
const proc = (
  shared: MemoryState,
  pid: number,
  poolText = "zen/alpha 1\ngo/gamma 1\n",
  abortOutcomes: Array<string> = ["ok"],
  abortLayer?: Layer.Layer<AbortClient>
) =>
  Effect.gen(function* () {
    const logs: Proc["logs"] = []
    const aborts: Array<string> = []
    const rest = Layer.mergeAll(AppLogMemory(logs), abortLayer ?? AbortClientMemory(abortOutcomes, aborts), TraceRecorderMemory(shared), PoolConfigMemory(pool(poolText)))
    const config = { timing: { hangMinAgeMs: 5 * MIN, hangSilenceMs: 3 * MIN }, reapMs: 30_000 }
    // the memory backend of one process (PoolEngineTest)
    const engine = yield* engineOn(rest, config, shared, pid)
    yield* engine.applyPool(pool(poolText))
    return { engine, logs, aborts, state: engine.view } satisfies Proc
  })

const spawn = (p: Proc, session: string, call: string) =>
  Effect.gen(function* () {
    const args: Record<string, unknown> = { subagent_type: "explore" }
    yield* p.engine.beforeTask(session, call, args).pipe(Effect.orDie)
    return args.subagent_type as string
  })

const claimKeys = (p: Proc) => p.state.claims.map((c) => c.key)

describe("hang recovery with the TestClock (SPEC §8)", () => {
  it.effect("US-8 a bound child silent since it was bound 9 min ago is aborted by the sweep a spawn triggers, cooled 10 min for hang, released", () =>
    Effect.gen(function* () {
      const shared = memoryState()
      const p = yield* proc(shared, 1)
      yield* spawn(p, "par", "c1")
      yield* p.engine.childCreated("s1", "par", "explore-1", undefined)
      yield* TestClock.adjust(9 * MIN)
      expect(yield* spawn(p, "par", "c2")).toBe("explore-2")
      expect(p.aborts).toEqual(["s1"])
      expect(shared.cooldowns.get("zen/alpha")).toMatchObject({ reason: "hang", strikes: 0, until: 19 * MIN })
      expect(claimKeys(p)).toEqual(["par:c2"])
    })
  )

  it.effect("US-8 with reapMs 1 s the reaper aborts a hung claim on its own, without a spawn", () =>
    Effect.gen(function* () {
      const shared = memoryState()
      const p = yield* proc(shared, 1)
      yield* spawn(p, "par", "c1")
      yield* p.engine.childCreated("s1", "par", "explore-1", undefined)
      const fiber = yield* Effect.fork(reaperLoop(p.engine, 1000))
      yield* TestClock.adjust(5 * MIN)
      expect(p.aborts).toEqual([])
      yield* TestClock.adjust(1500)
      expect(p.aborts).toEqual(["s1"])
      yield* Fiber.interrupt(fiber)
    })
  )

  it.effect("US-8 a bound claim 4 min old and silent is left alone", () =>
    Effect.gen(function* () {
      const p = yield* proc(memoryState(), 1)
      yield* spawn(p, "par", "c1")
      yield* p.engine.childCreated("s1", "par", "explore-1", undefined)
      yield* TestClock.adjust(4 * MIN)
      yield* p.engine.sweep
      expect(p.aborts).toEqual([])
    })
  )

  it.effect("US-8 a child active every 2 min for 24 min is never aborted", () =>
    Effect.gen(function* () {
      const p = yield* proc(memoryState(), 1)
      yield* spawn(p, "par", "c1")
      yield* p.engine.childCreated("s1", "par", "explore-1", undefined)
      for (let t = 0; t < 12; t++) {
        yield* TestClock.adjust(2 * MIN)
        yield* p.engine.activity("s1")
        yield* p.engine.sweep
      }
      expect(p.aborts).toEqual([])
      expect(claimKeys(p)).toEqual(["par:c1"])
    })
  )

  it.effect("US-8 two hung children are both aborted by one sweep", () =>
    Effect.gen(function* () {
      const p = yield* proc(memoryState(), 1)
      yield* spawn(p, "par", "c1")
      yield* spawn(p, "par", "c2")
      yield* p.engine.childCreated("s1", "par", "explore-1", undefined)
      yield* p.engine.childCreated("s2", "par", "explore-2", undefined)
      yield* TestClock.adjust(9 * MIN)
      yield* p.engine.sweep
      expect([...p.aborts].sort()).toEqual(["s1", "s2"])
      expect(claimKeys(p)).toEqual([])
    })
  )

  it.effect("US-8 a hang on a model cooling from a stated 30-min reset keeps the stated end and adds no strike", () =>
    Effect.gen(function* () {
      const shared = memoryState()
      const p = yield* proc(shared, 1)
      yield* spawn(p, "par", "c1")
      yield* p.engine.childCreated("s1", "par", "explore-1", undefined)
      yield* p.engine.onError("other", { name: "APIError", data: { message: "Rate limited; resets in 30min" } }, "zen/alpha")
      const stated = shared.cooldowns.get("zen/alpha")!
      yield* TestClock.adjust(9 * MIN)
      yield* p.engine.sweep
      expect(p.aborts).toEqual(["s1"])
      expect(shared.cooldowns.get("zen/alpha")).toEqual(stated)
    })
  )

  it.effect("US-8 retry statuses are not activity: a child that only retries for 3 min past 5 min of age is reaped", () =>
    Effect.gen(function* () {
      const p = yield* proc(memoryState(), 1)
      yield* spawn(p, "par", "c1")
      yield* TestClock.adjust(2 * MIN)
      yield* p.engine.childCreated("s1", "par", "explore-1", undefined)
      for (let t = 0; t < 18; t++) {
        yield* TestClock.adjust(10_000)
        const now = 2 * MIN + (t + 1) * 10_000
        yield* p.engine.onRetry("s1", "Connection reset by server", now + 2_000, undefined)
      }
      yield* TestClock.adjust(1_000)
      yield* p.engine.sweep
      expect(p.aborts).toEqual(["s1"])
    })
  )

  it.effect("US-9 a child created 0.5 s before its claim is back-filled and aborted; one created 2 s before is not, and the claim is released as unbound", () =>
    Effect.gen(function* () {
      const a = yield* proc(memoryState(), 1)
      yield* a.engine.childCreated("early", "par", "general-purpose", undefined)
      yield* TestClock.adjust(500)
      yield* spawn(a, "par", "c1")
      yield* TestClock.adjust(9 * MIN)
      yield* a.engine.sweep
      expect(a.aborts).toEqual(["early"])
      const b = yield* proc(memoryState(), 2)
      yield* b.engine.childCreated("earlier", "par", "general-purpose", undefined)
      yield* TestClock.adjust(2_000)
      yield* spawn(b, "par", "c1")
      yield* TestClock.adjust(9 * MIN)
      yield* b.engine.sweep
      expect(b.aborts).toEqual([])
      expect(b.logs.some((l) => /outcome=unbound$/.test(l.message))).toBe(true)
    })
  )

  it.effect("US-9 a slot whose only claims were reaped shows load 0 before the next claim", () =>
    Effect.gen(function* () {
      const p = yield* proc(memoryState(), 1)
      yield* spawn(p, "par", "c1")
      yield* p.engine.childCreated("s1", "par", "explore-1", undefined)
      yield* TestClock.adjust(9 * MIN)
      yield* p.engine.sweep
      expect(yield* p.engine.statusText()).toMatch(/1\. zen\/alpha +w1 +load 0\/2/)
    })
  )

  it.effect("US-10 three failed aborts release the claim as gave_up: reaped +1, no cooldown, an error naming the session", () =>
    Effect.gen(function* () {
      const shared = memoryState()
      const p = yield* proc(shared, 1, undefined, ["server says session was not aborted"])
      yield* spawn(p, "par", "c1")
      yield* p.engine.childCreated("s1", "par", "explore-1", undefined)
      yield* TestClock.adjust(9 * MIN)
      for (let i = 0; i < 3; i++) {
        yield* p.engine.sweep
        yield* TestClock.adjust(30_000)
      }
      expect(p.aborts).toEqual(["s1", "s1", "s1"])
      expect(claimKeys(p)).toEqual([])
      expect(p.state.reaped).toBe(1)
      expect(shared.cooldowns.size).toBe(0)
      expect(p.logs.filter((l) => l.level === "error").map((l) => l.message)).toEqual([
        expect.stringMatching(/^reaped claim=par:c1 session=s1 model=zen\/alpha age=\d+s silence=\d+s outcome=gave_up$/),
        "abort gave up after 3 attempts: session s1 is still running; stop it by hand"
      ])
    })
  )

  it.effect("US-9 one sweep publishes all its own changes in one write; each abort outcome that arrives later is one more: two hung children and an unbound claim", () =>
    Effect.gen(function* () {
      const shared = memoryState()
      // a claims write is a commit that carries this process's claims
      let writes = 0
      const counting = (inner: SharedStateService): SharedStateService => ({
        ...inner,
        transact: (now, needs, decide) =>
          inner.transact(now, needs, (snapshot) => {
            const decided = decide(snapshot)
            if (decided.commit.claims !== undefined) writes++
            return decided
          }),
        commit: (now, commit) =>
          Effect.suspend(() => {
            if (commit.claims !== undefined) writes++
            return inner.commit(now, commit)
          })
      })
      const aborts: Array<string> = []
      const layer = Layer.mergeAll(AppLogMemory([]), AbortClientMemory(["ok"], aborts), TraceRecorderMemory(shared), PoolConfigMemory(pool("a/1 5\n")))
      const engine = yield* engineOn(layer, { timing: { hangMinAgeMs: 5 * MIN, hangSilenceMs: 3 * MIN }, reapMs: 30_000 }, shared, 1, counting)
      const state = engine.view
      yield* engine.applyPool(pool("a/1 5\n"))
      for (const call of ["c1", "c2", "c3"]) yield* engine.beforeTask("par", call, { subagent_type: "explore" }).pipe(Effect.orDie)
      yield* engine.childCreated("s1", "par", "explore-1", undefined)
      yield* engine.childCreated("s2", "par", "explore-1", undefined)
      yield* TestClock.adjust(31 * MIN)
      const before = writes
      yield* engine.sweep
      expect(aborts.sort()).toEqual(["s1", "s2"])
      expect(state.claims).toEqual([])
      expect(writes - before).toBe(1 + 2)
    })
  )

  it.effect("US-10 an abort client that dies inside is a failed abort (logged with its reason) and the spawn whose sweep started it still routes", () =>
    Effect.gen(function* () {
      const broken = Layer.succeed(AbortClient, { abort: () => Effect.die(new Error("socket exploded")) })
      const p = yield* proc(memoryState(), 1, undefined, undefined, broken)
      yield* spawn(p, "par", "c1")
      yield* p.engine.childCreated("s1", "par", "explore-1", undefined)
      yield* TestClock.adjust(9 * MIN)
      expect(yield* spawn(p, "par", "c2")).toMatch(/^explore-[12]$/)
      expect(p.logs.filter((l) => l.level === "warn" && l.message === "abort failed claim=par:c1 session=s1 attempt=1/3: socket exploded")).toHaveLength(1)
      expect(claimKeys(p)).toEqual(["par:c1", "par:c2"])
    })
  )

  it.effect("US-43 a pending permission for 20 min, or a question in a grandchild, blocks reaping; 3 min after the answer it is reaped", () =>
    Effect.gen(function* () {
      const shared = memoryState()
      const p = yield* proc(shared, 1)
      yield* spawn(p, "par", "c1")
      yield* p.engine.childCreated("s1", "par", "explore-1", undefined)
      yield* p.engine.childCreated("g1", "s1", "general", undefined)
      yield* p.engine.childCreated("gg1", "g1", "general", undefined)
      yield* p.engine.ask("gg1", "que_1", true)
      for (let t = 0; t < 20; t++) {
        yield* TestClock.adjust(MIN)
        yield* p.engine.sweep
      }
      expect(p.aborts).toEqual([])
      expect(claimKeys(p)).toEqual(["par:c1"])
      yield* p.engine.answered("gg1", "que_1")
      yield* TestClock.adjust(2 * MIN)
      yield* p.engine.sweep
      expect(p.aborts).toEqual([])
      yield* TestClock.adjust(MIN)
      yield* p.engine.sweep
      expect(p.aborts).toEqual(["s1"])
    })
  )
})

describe("the pool's warnings", () => {
  it.effect("US-6 the warnings of the pool file are logged once when the pool is applied", () =>
    Effect.gen(function* () {
      const p = yield* proc(memoryState(), 1, "zen/alpha 1\nnot-a-model 1\nzen/beta x\n")
      expect(p.logs.filter((l) => l.level === "warn").map((l) => l.message)).toEqual([
        "test: line 2: model not-a-model is not provider/model-id; dropped",
        "test: slot 2 (zen/beta): weight x invalid, using 1"
      ])
    })
  )
})

describe("a long-running process forgets quiet sessions", () => {
  it.effect("US-9 after two quiet hours the session memory holds only what a live claim needs", () =>
    Effect.gen(function* () {
      const p = yield* proc(memoryState(), 1, "zen/alpha 100\n")
      for (let i = 0; i < 50; i++) {
        yield* spawn(p, `root${i}`, "c")
        yield* p.engine.childCreated(`child${i}`, `root${i}`, "explore-1", undefined)
        yield* p.engine.onError(`child${i}`, { name: "UnknownError", data: { message: "connection reset" } }, undefined)
        yield* p.engine.release(`root${i}:c`, true)
      }
      yield* spawn(p, "keeper", "c")
      yield* p.engine.childCreated("kept", "keeper", "explore-1", undefined)
      expect(p.state.activity.size).toBeGreaterThan(50)
      for (let t = 0; t < 13; t++) {
        yield* TestClock.adjust(10 * MIN)
        yield* p.engine.activity("kept")
        yield* p.engine.timerSweep
      }
      expect([...p.state.activity.keys()]).toEqual(["kept"])
      expect([...p.state.parents.keys()]).toEqual(["kept"])
      expect([...p.state.children.keys()]).toEqual(["keeper"])
      expect(p.state.signals.size).toBe(0)
      expect(claimKeys(p)).toEqual(["keeper:c"])
    })
  )
})

describe("several processes on one state (SPEC §5)", () => {
  it.effect("US-4 a cooldown recorded by one process is honoured by another for 4 spawns", () =>
    Effect.gen(function* () {
      const shared = memoryState()
      const w = yield* proc(shared, 1)
      const r = yield* proc(shared, 2)
      yield* w.engine.onError("x", { name: "APIError", data: { statusCode: 429, message: "Slow down" } }, "zen/alpha")
      const picks: Array<string> = []
      for (let i = 0; i < 4; i++) picks.push(yield* spawn(r, "rp", `c${i}`))
      expect(picks).toEqual(["explore-2", "explore-2", "explore-2", "explore-2"])
    })
  )

  it.effect("US-5 a peer's 3 fresh claims on slot 1's model send the spawn to slot 2; 11 minutes later they no longer count", () =>
    Effect.gen(function* () {
      const shared = memoryState()
      const peer = yield* proc(shared, 1, "zen/alpha 3\ngo/gamma 2\n")
      const me = yield* proc(shared, 2, "zen/alpha 3\ngo/gamma 2\n")
      for (let i = 0; i < 3; i++) yield* spawn(peer, "pp", `c${i}`)
      expect(yield* spawn(me, "mp", "a")).toBe("explore-2")
      shared.processes.set(1, { ...shared.processes.get(1)!, claims: shared.processes.get(1)!.claims })
      yield* TestClock.adjust(11 * MIN)
      expect(yield* spawn(me, "mp", "b")).toBe("explore-1")
    })
  )

  it.effect("US-40 the memory layers follow the file rules: a dead peer's claims stop counting at once, a silent peer's after 20 min, an expired cooldown is dropped", () =>
    Effect.gen(function* () {
      const shared = memoryState()
      const peer = yield* proc(shared, 1, "zen/alpha 1\ngo/gamma 1\n")
      const me = yield* proc(shared, 2, "zen/alpha 1\ngo/gamma 1\n")
      yield* spawn(peer, "pp", "c0")
      expect(yield* spawn(me, "mp", "a")).toBe("explore-2")
      shared.dead.add(1)
      expect(yield* spawn(me, "mp", "b")).toBe("explore-1")
      expect(shared.processes.has(1)).toBe(false)
      shared.dead.delete(1)
      yield* spawn(peer, "pp", "c1")
      yield* TestClock.adjust(21 * MIN)
      yield* me.engine.release("mp:a", true)
      yield* me.engine.release("mp:b", true)
      expect(yield* spawn(me, "mp", "c")).toBe("explore-1")
      expect(shared.processes.has(1)).toBe(false)
      yield* TestClock.adjust(40 * MIN)
      // ended more than 30 min ago: past the strike decay, so whoever reads it deletes it
      shared.cooldowns.set("go/gamma", { model: "go/gamma", reason: "rate_limit", strikes: 1, scope: "model", since: 0, until: 1, source: "backoff" })
      yield* spawn(me, "mp", "d")
      expect(shared.cooldowns.has("go/gamma")).toBe(false)
    })
  )

  it.effect("US-40 weights [1,1,1,1] and 8 processes spawning at the same moment: every slot's load is exactly 2", () =>
    Effect.gen(function* () {
      const shared = memoryState()
      const procs: Array<Proc> = []
      // every process on one memory state shares its one pool lock, as they share pool.lock on disk
      for (let i = 0; i < 8; i++) procs.push(yield* proc(shared, 100 + i, "a/1 1\na/2 1\na/3 1\na/4 1\n"))
      yield* Effect.forEach(procs, (p, i) => spawn(p, `s${i}`, "c"), { concurrency: "unbounded" })
      const loads = new Map<string, number>()
      for (const p of shared.processes.values()) for (const c of p.claims) loads.set(c.model, (loads.get(c.model) ?? 0) + 1)
      expect([...loads.entries()].sort()).toEqual([
        ["a/1", 2],
        ["a/2", 2],
        ["a/3", 2],
        ["a/4", 2]
      ])
    })
  )
})
