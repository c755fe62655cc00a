import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Option, TestClock } from "effect"
import { exclusive, makeSerialRef, spanned, traced } from "../../src/layers/hotPath.js"
import { recordSpans } from "../support/spans.js"

const spanName = Effect.map(Effect.option(Effect.currentSpan), Option.map((s) => s.name))

describe("spans only when a tracer listens (DECISIONS 209)", () => {
  it.effect("US-40 traced(name) is the span name under a recording tracer, with its arguments and pipeables", () =>
    Effect.gen(function* () {
      const spans = recordSpans()
      const gen = traced("Svc.gen")(function* (a: number, b: number) {
        return { sum: a + b, span: yield* spanName }
      })
      const plain = traced("Svc.plain")((a: number) => Effect.succeed(a * 2), (e, a) => Effect.map(e, (x) => x + a))
      const got = yield* Effect.all([gen(2, 3), plain(5), spanned(spanName, "Svc.member")]).pipe(Effect.withTracer(spans.tracer))
      expect(got).toEqual([{ sum: 5, span: Option.some("Svc.gen") }, 15, Option.some("Svc.member")])
      expect(spans.spans.map((s) => s.name)).toEqual(["Svc.gen", "Svc.plain", "Svc.member"])
      expect(spans.spans.every((s) => s.exit?._tag === "Success")).toBe(true)
    })
  )

  it.effect("US-40 under Effect's own tracer no span is made (the body sees none)", () =>
    Effect.gen(function* () {
      const gen = traced("Svc.gen")(function* () {
        return yield* spanName
      })
      expect(yield* gen()).toEqual(Option.none())
      expect(yield* spanned(spanName, "Svc.member")).toEqual(Option.none())
      expect(yield* spanName.pipe(spanned("Svc.piped"))).toEqual(Option.none())
    })
  )

  it.effect("US-40 a traced failure keeps its error", () =>
    Effect.gen(function* () {
      const spans = recordSpans()
      const failing = traced("Svc.fail")(function* () {
        return yield* Effect.fail("no" as const)
      })
      expect(yield* Effect.flip(failing())).toBe("no")
      expect(yield* Effect.flip(failing().pipe(Effect.withTracer(spans.tracer)))).toBe("no")
      expect(spans.spans.map((s) => [s.name, s.exit?._tag])).toEqual([["Svc.fail", "Failure"]])
    })
  )
})

describe("a free gate is taken without suspending (DECISIONS 210)", () => {
  it("US-40 a free gate runs the body before runFork returns (the semaphore's own take finishes in a later task)", () => {
    const gate = Effect.runSync(Effect.makeSemaphore(1))
    const done = (fiber: Fiber.RuntimeFiber<number>) => fiber.unsafePoll() !== null
    expect(done(Effect.runFork(exclusive(gate)(Effect.succeed(7))))).toBe(true)
    expect(done(Effect.runFork(gate.withPermits(1)(Effect.succeed(7))))).toBe(false)
    const ref = Effect.runSync(makeSerialRef(1))
    expect(Effect.runSync(ref.modifyEffect((n) => Effect.succeed([n * 10, n + 1] as const)))).toBe(10)
    Effect.runSync(ref.updateEffect((n) => Effect.succeed(n + 1)))
    expect(Effect.runSync(ref.get)).toBe(3)
  })

  it.effect("US-40 a held gate makes the next one wait until it is released, in order", () =>
    Effect.gen(function* () {
      const gate = yield* Effect.makeSemaphore(1)
      const order: Array<string> = []
      const holder = yield* Effect.fork(exclusive(gate)(Effect.zipRight(Effect.sync(() => order.push("a in")), Effect.zipRight(Effect.sleep("1 second"), Effect.sync(() => order.push("a out"))))))
      yield* Effect.yieldNow()
      const waiter = yield* Effect.fork(exclusive(gate)(Effect.sync(() => order.push("b"))))
      yield* Effect.yieldNow()
      expect(order).toEqual(["a in"])
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(holder)
      yield* Fiber.join(waiter)
      expect(order).toEqual(["a in", "a out", "b"])
    })
  )

  it.effect("US-40 serial updates never interleave: each sees the value the one before it left", () =>
    Effect.gen(function* () {
      const ref = yield* makeSerialRef(0)
      const bump = ref.updateEffect((n) => Effect.as(Effect.sleep("10 millis"), n + 1))
      const fibers = yield* Effect.forEach([1, 2, 3, 4], () => Effect.fork(bump))
      yield* TestClock.adjust("1 second")
      yield* Effect.forEach(fibers, Fiber.join)
      expect(yield* ref.get).toBe(4)
    })
  )

  it.effect("US-40 a failed update leaves the value and frees the gate", () =>
    Effect.gen(function* () {
      const ref = yield* makeSerialRef("kept")
      expect(yield* Effect.flip(ref.updateEffect(() => Effect.fail("boom" as const)))).toBe("boom")
      expect(yield* ref.get).toBe("kept")
      yield* ref.updateEffect((s) => Effect.succeed(`${s}!`))
      expect(yield* ref.get).toBe("kept!")
    })
  )
})
