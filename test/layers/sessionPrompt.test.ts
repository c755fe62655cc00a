/** Continuing a session through the SDK (issue 12, US-50): the wait until opencode no longer runs it, and the prompt. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, TestClock } from "effect"
import { IDLE_WAIT_POLL } from "../../src/core/session/running.js"
import { SessionPromptSdk, type PromptClient } from "../../src/layers/opencode/SessionPromptSdk.js"
import { promptTarget, SessionPrompt } from "../../src/services/opencode/SessionPrompt.js"

type Reply = { data?: unknown; error?: unknown; response?: { status: number } }

/** A stub SDK client: each status read answers the next of `statuses` (the last repeats); the prompt answers `prompt`. */
const client = (statuses: Array<Record<string, { type: string }>>, prompt: () => Promise<Reply>, calls: Array<unknown>, create: () => Promise<Reply> = () => Promise.resolve({ data: { id: "ses_new" }, response: { status: 200 } })): PromptClient => ({
  session: {
    create: (o) => {
      calls.push(o)
      return create()
    },
    status: () => {
      calls.push("status")
      return Promise.resolve({ data: statuses.length > 1 ? statuses.shift() : statuses[0], response: { status: 200 } })
    },
    promptAsync: (o) => {
      calls.push(o)
      return prompt()
    }
  }
})

const layer = (c: PromptClient | undefined) => SessionPromptSdk(c, "/proj")

describe("SessionPromptSdk (US-50)", () => {
  it.effect("US-50 whenIdle polls every 250 ms until the session is no longer listed running (absent or idle)", () =>
    Effect.gen(function* () {
      const calls: Array<unknown> = []
      const c = client([{ ses_1: { type: "retry" } }, { ses_1: { type: "busy" } }, { ses_1: { type: "idle" } }], () => Promise.resolve({ response: { status: 204 } }), calls)
      const fiber = yield* Effect.fork(Effect.flatMap(SessionPrompt, (p) => p.whenIdle("ses_1")).pipe(Effect.provide(layer(c))))
      yield* TestClock.adjust(IDLE_WAIT_POLL.everyMs)
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust(IDLE_WAIT_POLL.everyMs)
      yield* Fiber.join(fiber)
      expect(calls).toEqual(["status", "status", "status"])
    })
  )

  it.effect("US-50 a session still running after 60 s is a failure with that reason", () =>
    Effect.gen(function* () {
      const c = client([{ ses_1: { type: "busy" } }], () => Promise.resolve({}), [])
      const fiber = yield* Effect.fork(Effect.either(Effect.flatMap(SessionPrompt, (p) => p.whenIdle("ses_1")).pipe(Effect.provide(layer(c)))))
      yield* TestClock.adjust(IDLE_WAIT_POLL.forMs + IDLE_WAIT_POLL.everyMs)
      expect(yield* Fiber.join(fiber)).toMatchObject({ _tag: "Left", left: { reason: "session still running after 60s" } })
    })
  )

  it.effect("US-50 the prompt carries the model, the agent and the text, for the instance's directory; an HTTP error or no client is a failure", () =>
    Effect.gen(function* () {
      const calls: Array<unknown> = []
      const ok = client([{}], () => Promise.resolve({ response: { status: 204 } }), calls)
      yield* Effect.flatMap(SessionPrompt, (p) => p.prompt("ses_1", promptTarget("openrouter/qwen/qwen3-coder:free"), "build", "continue")).pipe(Effect.provide(layer(ok)))
      expect(calls).toEqual([
        { path: { id: "ses_1" }, body: { model: { providerID: "openrouter", modelID: "qwen/qwen3-coder:free" }, agent: "build", parts: [{ type: "text", text: "continue" }] }, query: { directory: "/proj" } }
      ])
      const bad = client([{}], () => Promise.resolve({ error: { name: "BadRequest" }, response: { status: 400 } }), [])
      const r = yield* Effect.either(Effect.flatMap(SessionPrompt, (p) => p.prompt("ses_1", promptTarget("a/b"), undefined, "continue")).pipe(Effect.provide(layer(bad))))
      expect(r).toMatchObject({ _tag: "Left", left: { reason: "prompt: HTTP 400" } })
      const thrown = client([{}], () => Promise.reject(new Error("socket hang up")), [])
      const t = yield* Effect.either(Effect.flatMap(SessionPrompt, (p) => p.prompt("ses_1", promptTarget("a/b"), undefined, "continue")).pipe(Effect.provide(layer(thrown))))
      expect(t).toMatchObject({ _tag: "Left", left: { reason: "prompt: socket hang up" } })
      const none = yield* Effect.either(Effect.flatMap(SessionPrompt, (p) => p.whenIdle("ses_1")).pipe(Effect.provide(layer(undefined))))
      expect(none).toMatchObject({ _tag: "Left", left: { reason: "no server url" } })
    })
  )

  it.effect("US-20 create makes a titled session in the instance's directory and gives its id; an HTTP error or an answer without an id is a failure", () =>
    Effect.gen(function* () {
      const calls: Array<unknown> = []
      const id = yield* Effect.flatMap(SessionPrompt, (p) => p.create("context (auto update)")).pipe(Effect.provide(layer(client([{}], () => Promise.resolve({}), calls))))
      expect(id).toBe("ses_new")
      expect(calls).toEqual([{ body: { title: "context (auto update)" }, query: { directory: "/proj" } }])
      const bad = client([{}], () => Promise.resolve({}), [], () => Promise.resolve({ error: { name: "BadRequest" }, response: { status: 400 } }))
      expect(yield* Effect.either(Effect.flatMap(SessionPrompt, (p) => p.create("t")).pipe(Effect.provide(layer(bad))))).toMatchObject({ _tag: "Left", left: { reason: "create: HTTP 400" } })
      const noId = client([{}], () => Promise.resolve({}), [], () => Promise.resolve({ data: {}, response: { status: 200 } }))
      expect(yield* Effect.either(Effect.flatMap(SessionPrompt, (p) => p.create("t")).pipe(Effect.provide(layer(noId))))).toMatchObject({ _tag: "Left", left: { reason: "create: the answer names no session id" } })
    })
  )
})
