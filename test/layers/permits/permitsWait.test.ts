/**
 * A permit's wait (issue 21; a `Schedule` since issue 34): polls every `pollMs` while queued, the last
 * nap cut so a look falls on the deadline; granted when the holder releases, gone when cancelled,
 * progress said on a change only. The memory backend, timing on the TestClock.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Fiber, Layer, TestClock } from "effect"
import { PermitsShell, waitSchedule, type WaitLook } from "../../../src/layers/permits/PermitsShell.js"
import { memoryState, type MemoryState } from "../../../src/layers/state/MemoryState.js"
import { sharedStateLayer } from "../../../src/layers/state/sharedStateLayer.js"
import { StateDirMemory } from "../../../src/layers/state/StateDirMemory.js"
import { Permits, type WaitProgress } from "../../../src/services/permits/Permits.js"
import { StateDir } from "../../../src/services/state/StateDir.js"

describe("the wait's schedule (issue 34)", () => {
  it.effect("US-51 a look every pollMs while queued; before a deadline the nap is cut to the time left; the output is the last look", () =>
    Effect.gen(function* () {
      const at: Array<number> = []
      // queued with a deadline at 250: looks at 0, 100, 200, then 250 (the nap cut to 50), which ends it
      const looks: Array<WaitLook> = [
        { _tag: "Queued", leftMs: 250 },
        { _tag: "Queued", leftMs: 150 },
        { _tag: "Queued", leftMs: 50 },
        { _tag: "Ended", outcome: { state: "timeout" } }
      ]
      const look = Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sync(() => (at.push(now), looks[at.length - 1]!)))
      const fiber = yield* Effect.fork(Effect.repeat(look, waitSchedule(100)))
      yield* TestClock.adjust(1_000)
      expect(yield* Fiber.join(fiber)).toEqual({ _tag: "Ended", outcome: { state: "timeout" } })
      expect(at).toEqual([0, 100, 200, 250])
    })
  )
  it.effect("US-51 without a deadline the looks are pollMs apart until one ends", () =>
    Effect.gen(function* () {
      const at: Array<number> = []
      const look = Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.sync((): WaitLook => (at.push(now), at.length < 4 ? { _tag: "Queued", leftMs: undefined } : { _tag: "Ended", outcome: { state: "gone", cause: "cancelled" } }))
      )
      const fiber = yield* Effect.fork(Effect.repeat(look, waitSchedule(250)))
      yield* TestClock.adjust(10_000)
      expect(yield* Fiber.join(fiber)).toEqual({ _tag: "Ended", outcome: { state: "gone", cause: "cancelled" } })
      expect(at).toEqual([0, 250, 500, 750])
    })
  )
})

/** The permits of memory process `pid` on `shared`: budget `heavy` of 1, polling every 100 ms. */
const permitsOf = (shared: MemoryState, pid: number) =>
  PermitsShell({ budgets: [{ name: "heavy", capacity: 1, source: "option" }], pollMs: 100 }).pipe(
    Layer.provide(sharedStateLayer({ backend: "memory", shared, pid })),
    Layer.provideMerge(StateDirMemory(pid))
  )

const requestAs = Effect.gen(function* () {
  const dir = yield* StateDir
  const permits = yield* Permits
  return yield* permits.request({ budget: "heavy", weight: 1, reason: "npm test", holder: { host: dir.host, pid: dir.pid, startToken: dir.startTime, via: "run" } })
})

describe("Permits.wait (issue 21, a Schedule since issue 34)", () => {
  it.effect("US-51 queued behind a holder: progress once, a timeout at the deadline exactly; granted once the holder releases", () =>
    Effect.gen(function* () {
      const shared = memoryState()
      const a = yield* requestAs.pipe(Effect.provide(permitsOf(shared, 101)))
      expect(a.answer.state).toBe("granted")
      const b = permitsOf(shared, 102)
      const { ticket } = yield* requestAs.pipe(Effect.provide(b))
      const progress: Array<WaitProgress> = []
      const timedOut = yield* Effect.fork(
        Effect.flatMap(Permits, (p) => p.wait(ticket, { deadline: 250, onProgress: (x) => Effect.sync(() => void progress.push(x)) })).pipe(
          Effect.zipLeft(Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sync(() => progress.push({ position: -now, paused: false, holders: [] })))),
          Effect.provide(b)
        )
      )
      yield* TestClock.adjust(1_000)
      expect(yield* Fiber.join(timedOut)).toEqual({ state: "timeout" })
      // one progress line (position 1, the holder a), then the wait ended at 250
      expect(progress.map((p) => p.position)).toEqual([1, -250])
      expect(progress[0]!.holders.map((h) => h.id)).toEqual([a.ticket.id])

      const granted = yield* Effect.fork(Effect.flatMap(Permits, (p) => p.wait(ticket)).pipe(Effect.provide(b)))
      yield* TestClock.adjust(300)
      yield* Effect.flatMap(Permits, (p) => p.release(a.ticket)).pipe(Effect.provide(permitsOf(shared, 101)))
      yield* TestClock.adjust(100)
      expect(yield* Fiber.join(granted)).toMatchObject({ state: "granted" })
    })
  )
  it.effect("US-51 a cancelled request ends its wait as gone at the next look", () =>
    Effect.gen(function* () {
      const shared = memoryState()
      yield* requestAs.pipe(Effect.provide(permitsOf(shared, 101)))
      const b = permitsOf(shared, 102)
      const { ticket } = yield* requestAs.pipe(Effect.provide(b))
      const waiting = yield* Effect.fork(Effect.flatMap(Permits, (p) => p.wait(ticket)).pipe(Effect.provide(b)))
      yield* TestClock.adjust(150)
      yield* Effect.flatMap(Permits, (p) => p.cancel(ticket, "aborted")).pipe(Effect.provide(b))
      yield* TestClock.adjust(100)
      expect(yield* Fiber.join(waiting)).toMatchObject({ state: "gone" })
    })
  )
})
