/**
 * The plugin's heavy-command gate over the permits port and the memory backend (issue 21): a second
 * command waits for the first, its session is an `ask` while it waits (blocked, not hung), an abort of
 * its session ends the wait at once, and the layer's end releases everything. Timing on the TestClock.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer, Scope, TestClock } from "effect"
import type { EngineEvent } from "../../../src/core/engine/step.js"
import { AppLogMemory, type MemoryLine } from "../../../src/layers/opencode/AppLogMemory.js"
import { MachineFactsTest } from "../../../src/layers/permits/MachineFactsTest.js"
import { PermitGateShell } from "../../../src/layers/permits/PermitGateShell.js"
import { permitsLayer } from "../../../src/layers/permits/permitsLayer.js"
import { memoryState, type MemoryState } from "../../../src/layers/state/MemoryState.js"
import { sharedStateLayer } from "../../../src/layers/state/sharedStateLayer.js"
import { StateDirMemory } from "../../../src/layers/state/StateDirMemory.js"
import type { MachineFactsView } from "../../../src/services/permits/MachineFacts.js"
import { PermitGate } from "../../../src/services/permits/PermitGate.js"
import { Permits } from "../../../src/services/permits/Permits.js"
import { PoolEngine, type PoolEngineService } from "../../../src/services/pool/PoolEngine.js"

const FACTS: MachineFactsView = {
  cpus: { cpus: 2, online: 2, source: "online" } as MachineFactsView["cpus"],
  memory: { totalBytes: undefined, availableBytes: undefined, limitBytes: undefined, limitSource: undefined },
  cgroup: { version: "none", paths: [] },
  pressure: { cpu: undefined, memory: undefined }
}

/** A pool engine that only records what the gate tells it. */
const recordingEngine = (seen: Array<EngineEvent>) =>
  Layer.succeed(PoolEngine, {
    apply: (event: EngineEvent) => Effect.sync(() => void seen.push(event)).pipe(Effect.as(undefined))
  } as unknown as PoolEngineService)

/** The gate of memory process `pid` on `shared`, budget `heavy` of `capacity`. */
const gateOf = (shared: MemoryState, pid: number, seen: Array<EngineEvent>, logs: Array<MemoryLine>, capacity = 1) =>
  PermitGateShell.pipe(
    Layer.provideMerge(permitsLayer([{ name: "heavy", capacity, source: "option" }], { facts: MachineFactsTest(FACTS), pollMs: 100 })),
    Layer.provide(recordingEngine(seen)),
    Layer.provide(sharedStateLayer({ backend: "memory", shared, pid })),
    Layer.provideMerge(StateDirMemory(pid)),
    Layer.provideMerge(AppLogMemory(logs))
  )

const call = (session: string, n: number) => ({ session, call: `call_${n}`, command: `npm test # ${n}`, budget: "heavy", weight: 1 })

const build = (shared: MemoryState, pid: number, seen: Array<EngineEvent>, logs: Array<MemoryLine>) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const ctx = yield* Layer.buildWithScope(gateOf(shared, pid, seen, logs), scope)
    return { scope, gate: ctx.unsafeMap.get(PermitGate.key) as PermitGate["Type"], permits: ctx.unsafeMap.get(Permits.key) as Permits["Type"] }
  })

describe("the heavy-command gate (issue 21)", () => {
  it.effect("US-51 a second heavy command waits for the first; its session asks while it waits; the after hook says how long", () =>
    Effect.gen(function* () {
      const shared = memoryState()
      const seen: Array<EngineEvent> = []
      const a = yield* build(shared, 101, seen, [])
      const b = yield* build(shared, 102, seen, [])
      yield* a.gate.before(call("ses_a", 1))
      expect(seen).toEqual([])
      const waiting = yield* Effect.fork(b.gate.before(call("ses_b", 2)))
      yield* TestClock.adjust(1_000)
      expect(waiting.unsafePoll()).toBeNull()
      expect(seen.map((e) => e.type)).toEqual(["ask"])
      expect(seen[0]).toMatchObject({ type: "ask", session: "ses_b" })
      expect(yield* a.gate.after("ses_a", "call_1")).toBeUndefined()
      yield* TestClock.adjust(100)
      yield* Fiber.join(waiting)
      expect(seen.map((e) => e.type)).toEqual(["ask", "answered"])
      expect((seen[1] as { id: string }).id).toBe((seen[0] as { id: string }).id)
      expect(yield* b.gate.after("ses_b", "call_2")).toBe("[opencode-pool] waited 1 s for a heavy-work permit; 1 command ran before it")
      expect((yield* a.permits.status)[0]).toMatchObject({ name: "heavy", used: 0, holders: [], queue: [] })
    })
  )

  it.effect("US-51 an abort of the waiting session ends its wait at once and cancels the request; the holder is untouched", () =>
    Effect.gen(function* () {
      const shared = memoryState()
      const seen: Array<EngineEvent> = []
      const a = yield* build(shared, 201, seen, [])
      const b = yield* build(shared, 202, seen, [])
      yield* a.gate.before(call("ses_a", 1))
      const waiting = yield* Effect.fork(b.gate.before(call("ses_b", 2)))
      yield* TestClock.adjust(300)
      yield* b.gate.sessionEnded("ses_b")
      const exit = yield* Fiber.await(waiting)
      // the hook is told the command must not run (it refuses the tool call)
      expect(exit).toEqual(Exit.succeed("ended"))
      const [heavy] = yield* a.permits.status
      expect(heavy!.queue).toEqual([])
      expect(heavy!.holders.map((h) => h.holder.session)).toEqual(["ses_a"])
      expect(seen.map((e) => e.type)).toEqual(["ask", "answered"])
      // the aborted call's after hook has nothing to release or say
      expect(yield* b.gate.after("ses_b", "call_2")).toBeUndefined()
    })
  )

  it.effect("US-51 an abort or error of a holding session releases its permit; closing the gate releases the rest", () =>
    Effect.gen(function* () {
      const shared = memoryState()
      const seen: Array<EngineEvent> = []
      const a = yield* build(shared, 301, seen, [])
      yield* a.gate.before(call("ses_a", 1))
      yield* a.gate.sessionEnded("ses_a")
      expect((yield* a.permits.status)[0]!.used).toBe(0)
      yield* a.gate.before(call("ses_a", 2))
      expect((yield* a.permits.status)[0]!.used).toBe(1)
      const c = yield* build(shared, 302, seen, [])
      yield* Scope.close(a.scope, Exit.void)
      expect((yield* c.permits.status)[0]!.used).toBe(0)
    })
  )
})
