/**
 * Quota sensing's failure reads (issue 19) on the Clock: a retry status waits for the error body of its
 * session still being read, FAILURE_WAIT_MS at most (it was a raw `setTimeout` in the hooks' closure).
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, TestClock } from "effect"
import { FailureReadsShell } from "../../../src/layers/quota/FailureReadsShell.js"
import { FAILURE_WAIT_MS, FailureReads } from "../../../src/services/quota/FailureReads.js"

/** `f` over the layer, which ends when `f` does. */
const withReads = <A, E>(f: (reads: FailureReads["Type"]) => Effect.Effect<A, E>) => Effect.provide(Effect.flatMap(FailureReads, f), FailureReadsShell())

describe("failure reads on the Clock (issue 19)", () => {
  it.effect("US-42 a retry waits for its session's body still being read, FAILURE_WAIT_MS at most, then goes on without it", () =>
    withReads((reads) =>
      Effect.gen(function* () {
        yield* reads.started("ses_1", Effect.never)
        const waiting = yield* Effect.fork(reads.awaited("ses_1"))
        yield* TestClock.adjust(FAILURE_WAIT_MS - 1)
        expect(yield* Fiber.poll(waiting)).toMatchObject({ _tag: "None" })
        yield* TestClock.adjust(1)
        yield* Fiber.join(waiting)
        // another session's retry never waits
        yield* reads.awaited("ses_2")
      })
    )
  )

  it.effect("US-42 the wait ends as soon as the read has reached the engine; a session without a read does not wait at all", () =>
    withReads((reads) =>
      Effect.gen(function* () {
        const body = yield* Deferred.make<string>()
        const applied: Array<string> = []
        yield* reads.started("ses_1", Effect.flatMap(Deferred.await(body), (b) => Effect.sync(() => void applied.push(b))))
        const waiting = yield* Effect.fork(reads.awaited("ses_1"))
        yield* TestClock.adjust(100)
        expect(yield* Fiber.poll(waiting)).toMatchObject({ _tag: "None" })
        yield* Deferred.succeed(body, "quota exceeded")
        yield* Fiber.join(waiting)
        expect(applied).toEqual(["quota exceeded"])
        // the read is done: its entry is gone, the next retry of the session goes at once
        const next = yield* Effect.fork(reads.awaited("ses_1"))
        yield* Effect.yieldNow()
        expect(yield* Fiber.poll(next)).toMatchObject({ _tag: "Some" })
      })
    )
  )

  it.effect("US-42 a later read of the same session is the one waited for; the earlier still runs to its end", () =>
    withReads((reads) =>
      Effect.gen(function* () {
        const first = yield* Deferred.make<void>()
        const second = yield* Deferred.make<void>()
        const ended: Array<string> = []
        yield* reads.started("ses_1", Effect.zipRight(Deferred.await(first), Effect.sync(() => void ended.push("first"))))
        yield* reads.started("ses_1", Effect.zipRight(Deferred.await(second), Effect.sync(() => void ended.push("second"))))
        const waiting = yield* Effect.fork(reads.awaited("ses_1"))
        yield* Deferred.succeed(first, undefined)
        yield* TestClock.adjust(10)
        expect(ended).toEqual(["first"])
        expect(yield* Fiber.poll(waiting)).toMatchObject({ _tag: "None" })
        yield* Deferred.succeed(second, undefined)
        yield* Fiber.join(waiting)
        expect(ended).toEqual(["first", "second"])
      })
    )
  )

  it.effect("US-42 a read still running when the layer ends is interrupted: nothing reaches the engine after dispose", () =>
    Effect.gen(function* () {
      const body = yield* Deferred.make<void>()
      const applied: Array<string> = []
      yield* withReads((reads) => reads.started("ses_1", Effect.zipRight(Deferred.await(body), Effect.sync(() => void applied.push("late")))))
      yield* Deferred.succeed(body, undefined)
      yield* TestClock.adjust(FAILURE_WAIT_MS)
      expect(applied).toEqual([])
    })
  )
})
