import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Fiber, TestClock } from "effect"
import { AbortClientSdk, type SessionClient } from "../../src/layers/opencode/AbortClientSdk.js"
import { AbortClient } from "../../src/services/opencode/AbortClient.js"
import { recordSpans } from "../support/spans.js"

type Reply = { data?: unknown; error?: unknown; response?: { status: number } }

/** A stub SDK client: the abort answers `abort`, each status read answers the next of `statuses`. */
const client = (abort: () => Promise<Reply>, statuses: Array<Record<string, { type: string }>>, calls: Array<string>): SessionClient => ({
  session: {
    abort: (o) => {
      calls.push(`abort ${o.path.id} ${o.query?.directory ?? ""}`)
      return abort()
    },
    status: () => {
      calls.push("status")
      return Promise.resolve({ data: statuses.length > 1 ? statuses.shift() : statuses[0], response: { status: 200 } })
    }
  }
})

const attempt = (c: SessionClient | undefined) => Effect.flatMap(AbortClient, (a) => Effect.either(a.abort("ses_1"))).pipe(Effect.provide(AbortClientSdk(c, "/proj")))

describe("abort protocol (SPEC §8.3)", () => {
  it.effect("US-10 200 with an empty body, then the session absent from the status map: verified", () =>
    Effect.gen(function* () {
      const calls: Array<string> = []
      const r = yield* attempt(client(() => Promise.resolve({ data: undefined, response: { status: 200 } }), [{}], calls))
      expect(Either.isRight(r)).toBe(true)
      expect(calls).toEqual(["abort ses_1 /proj", "status"])
    })
  )

  it.effect("US-10 200 false is a failure: server says session was not aborted", () =>
    Effect.gen(function* () {
      const r = yield* attempt(client(() => Promise.resolve({ data: false, response: { status: 200 } }), [{}], []))
      expect(r).toMatchObject({ _tag: "Left", left: { reason: "server says session was not aborted" } })
    })
  )

  it.effect("US-10 HTTP 500 is a failure naming the status", () =>
    Effect.gen(function* () {
      const r = yield* attempt(client(() => Promise.resolve({ error: { name: "UnknownError" }, response: { status: 500 } }), [{}], []))
      expect(r).toMatchObject({ _tag: "Left", left: { reason: "HTTP 500" } })
    })
  )

  it.effect("US-10 an abort that never answers fails after 10 s", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(attempt(client(() => new Promise(() => {}), [{}], [])))
      yield* TestClock.adjust("9 seconds")
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust("2 seconds")
      const r = yield* Fiber.join(fiber)
      expect(r).toMatchObject({ _tag: "Left", left: { reason: "abort: timed out after 10s" } })
    })
  )

  it.effect("US-10 a session still busy on both reads, 1 s apart, is a failure; idle on the second read is verified", () =>
    Effect.gen(function* () {
      const busy = yield* Effect.fork(attempt(client(() => Promise.resolve({ data: true, response: { status: 200 } }), [{ ses_1: { type: "busy" } }], [])))
      yield* TestClock.adjust("1 second")
      expect(yield* Fiber.join(busy)).toMatchObject({ _tag: "Left", left: { reason: "session still running after abort" } })
      const calls: Array<string> = []
      const settles = yield* Effect.fork(attempt(client(() => Promise.resolve({ data: true, response: { status: 200 } }), [{ ses_1: { type: "retry" } }, { ses_1: { type: "idle" } }], calls)))
      yield* TestClock.adjust("1 second")
      expect(Either.isRight(yield* Fiber.join(settles))).toBe(true)
      expect(calls).toEqual(["abort ses_1 /proj", "status", "status"])
    })
  )

  it.effect("US-10 without a client there is no server url", () =>
    Effect.gen(function* () {
      expect(yield* attempt(undefined)).toMatchObject({ _tag: "Left", left: { reason: "no server url" } })
    })
  )

  it.effect("US-10 an abort is the span AbortClient.abort, ended with its failure", () =>
    Effect.gen(function* () {
      const spans = recordSpans()
      yield* attempt(client(() => Promise.resolve({ data: false, response: { status: 200 } }), [{}], [])).pipe(Effect.withTracer(spans.tracer))
      expect(spans.names()).toEqual(["AbortClient.abort"])
      expect(spans.spans[0]!.exit?._tag).toBe("Failure")
    })
  )
})
