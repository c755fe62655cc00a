/**
 * The plugin and `ocpool replay` agree: random interleavings of spawns, bindings, activity, releases,
 * limit errors, retries, sweeps and abort outcomes (ok, fail, slow: still in flight while other events
 * arrive) are driven through the engine (memory layers, TestClock, an abort client the test answers).
 * The recorded decisions are exactly what replaying the recorded trace decides, and the plugin's actions
 * (routes, abort calls, cooldowns, claims, reaped) are exactly the machine's.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, FastCheck as fc, Layer, TestClock } from "effect"
import { resolvePool } from "../../src/core/source.js"
import { formatDecision } from "../../src/core/trace/format.js"
import { decodeLine, InputError } from "../../src/core/trace/input.js"
import { initialState, step } from "../../src/core/trace/machine.js"
import { replayText } from "../../src/core/trace/replay.js"
import { AppLogMemory } from "../../src/layers/opencode/AppLogMemory.js"
import { memoryState } from "../../src/layers/state/MemoryState.js"
import { PoolConfigMemory } from "../../src/layers/pool/PoolConfigMemory.js"
import { TraceRecorderMemory } from "../../src/layers/pool/TraceRecorderMemory.js"
import { AbortFailed } from "../../src/services/opencode/AbortClient.js"
import { answeredAborts, engineOn, quiesce } from "./testEngine.js"

const T0 = 1_796_115_600_000
const POOL = resolvePool([{ kind: "file", origin: "test", text: "zen/alpha 2\nzen/beta 1\ngo/gamma 1\n" }], 4)

type Op =
  | { readonly op: "spawn"; readonly owner: number }
  | { readonly op: "bind"; readonly n: number }
  | { readonly op: "activity"; readonly n: number }
  | { readonly op: "token"; readonly n: number }
  | { readonly op: "release"; readonly n: number }
  | { readonly op: "idle"; readonly n: number }
  | { readonly op: "error"; readonly n: number; readonly kind: number }
  | { readonly op: "retry"; readonly n: number; readonly kind: number }
  | { readonly op: "sweep" }
  | { readonly op: "outcome"; readonly n: number; readonly ok: boolean }
  | { readonly op: "wait"; readonly ms: number }

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ op: fc.constant("spawn" as const), owner: fc.integer({ min: 0, max: 2 }) }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant("bind" as const), n: fc.nat(20) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant("activity" as const), n: fc.nat(20) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("token" as const), n: fc.nat(20) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("release" as const), n: fc.nat(20) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("idle" as const), n: fc.nat(20) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("error" as const), n: fc.nat(20), kind: fc.nat(5) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("retry" as const), n: fc.nat(20), kind: fc.nat(3) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("sweep" as const) }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant("outcome" as const), n: fc.nat(20), ok: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant("wait" as const), ms: fc.constantFrom(1_000, 15_000, 61_000, 200_000, 400_000) }) }
)

const ERRORS: ReadonlyArray<unknown> = [
  { name: "APIError", data: { statusCode: 429, message: "Slow down", responseHeaders: { "retry-after": "120" } } },
  { name: "UnknownError", data: { message: '{"message":"limit reached"}' } },
  { name: "APIError", data: { statusCode: 503, message: "Service Unavailable" } },
  { name: "UnknownError", data: { message: '{"message":"context limit reached"}' } },
  { name: "ProviderModelNotFoundError", data: { message: "Model not found" } },
  { name: "MessageAbortedError", data: { message: "aborted" } }
]
const RETRIES: ReadonlyArray<readonly [string, number]> = [
  ["Rate limit exceeded", 3_000],
  ["Free usage exceeded, subscribe to Go", 3_000],
  ["Internal Server Error", 4 * 3_600_000],
  ["Service Unavailable", 5_000]
]

/** Which aborts the machine requested, in order, when it replays the recorded lines. */
const requestedSessions = (lines: ReadonlyArray<Record<string, unknown>>): Array<string> => {
  let state = initialState
  const out: Array<string> = []
  for (const l of lines) {
    const input = decodeLine(JSON.stringify(l))
    if (input instanceof InputError) throw new Error(input.message)
    const r = step(state, input)
    if (r._tag === "Invalid") throw new Error(r.message)
    state = r.state
    for (const q of r.requests) out.push(q.session)
  }
  return out
}

describe("the plugin and replay agree", () => {
  it.effect.prop(
    "US-45 over random interleavings with aborts in flight, failing and succeeding, the decisions file is the replay of the trace and the plugin did what it says",
    { ops: fc.array(opArb, { minLength: 5, maxLength: 80 }) },
    ({ ops }) =>
      Effect.gen(function* () {
        yield* TestClock.setTime(T0)
        const shared = memoryState()
        const { calls, pending, layer: answering } = answeredAborts()
        // one memory process on the memory backend of the shared-state port
        const layer = Layer.mergeAll(AppLogMemory([]), answering, TraceRecorderMemory(shared), PoolConfigMemory(POOL))
        const { raw: engine } = yield* engineOn(layer, { timing: { hangMinAgeMs: 300_000, hangSilenceMs: 180_000, firstTokenMs: 90_000 }, reapMs: 30_000 }, shared, 1)
        yield* engine.applyPool(POOL)
        const routed: Array<string> = []
        const tasks: Array<{ owner: string; call: string; agent: string; child?: string }> = []
        const pick = (n: number) => tasks[n % Math.max(1, tasks.length)]
        let count = 0
        for (const o of ops) {
          switch (o.op) {
            case "spawn": {
              const owner = `own${o.owner}`
              const call = `call${count++}`
              const args: Record<string, unknown> = { subagent_type: "explore" }
              yield* engine.beforeTask(owner, call, args).pipe(Effect.orDie)
              routed.push(args.subagent_type as string)
              tasks.push({ owner, call, agent: args.subagent_type as string })
              break
            }
            case "bind": {
              const t = tasks.filter((x) => x.child === undefined)[o.n % Math.max(1, tasks.length)]
              if (t === undefined) break
              t.child = `child${tasks.indexOf(t)}`
              yield* engine.apply({ type: "child", id: t.child, parent: t.owner, agent: t.agent })
              yield* engine.apply({ type: "busy", session: t.child })
              break
            }
            case "activity": {
              const t = pick(o.n)
              if (t?.child !== undefined) yield* engine.apply({ type: "activity", session: t.child })
              break
            }
            case "token": {
              // a model request starts and streams its first token (issue 35)
              const t = pick(o.n)
              if (t?.child !== undefined) {
                yield* engine.apply({ type: "activity", session: t.child, assistant: true })
                yield* engine.apply({ type: "output", session: t.child })
              }
              break
            }
            case "release": {
              const t = pick(o.n)
              if (t !== undefined) yield* engine.apply({ type: "taskEnd", claim: `${t.owner}:${t.call}`, ok: true })
              break
            }
            case "idle": {
              const t = pick(o.n)
              if (t?.child !== undefined) yield* engine.apply({ type: "idle", session: t.child })
              break
            }
            case "error": {
              const t = pick(o.n)
              if (t?.child !== undefined) yield* engine.apply({ type: "error", session: t.child, error: ERRORS[o.kind % ERRORS.length] })
              break
            }
            case "retry": {
              const t = pick(o.n)
              const [message, inMs] = RETRIES[o.kind % RETRIES.length]!
              const now = yield* TestClock.currentTimeMillis
              if (t?.child !== undefined) yield* engine.apply({ type: "retry", session: t.child, message, next: now + inMs })
              break
            }
            case "sweep":
              yield* engine.sweep
              break
            case "outcome": {
              if (pending.length === 0) break
              const [done] = pending.splice(o.n % pending.length, 1)
              yield* o.ok ? Deferred.succeed(done!, undefined) : Deferred.fail(done!, new AbortFailed({ problem: "http", call: "abort", status: 500 }))
              break
            }
            case "wait":
              yield* TestClock.adjust(o.ms)
              break
          }
          yield* quiesce
        }
        const text = shared.trace.map((l) => JSON.stringify(l)).join("\n") + "\n"
        const replay = replayText(text)
        expect(replay.error).toBeUndefined()
        // the decisions file is the machine's output as it happened, and replay reproduces it
        expect(replay.decisions.map(formatDecision)).toEqual(shared.decisions)
        // what the plugin did is what the machine decided
        expect(replay.decisions.flatMap((d) => (d.type === "route" ? [d.agent] : []))).toEqual(routed)
        expect(requestedSessions(shared.trace)).toEqual(calls)
        const now = yield* TestClock.currentTimeMillis
        for (const slot of POOL.slots) {
          const mine = shared.cooldowns.get(slot.model)
          const theirs = replay.state.cooldowns.get(slot.model)
          expect(mine !== undefined && now < mine.until ? [mine.reason, mine.until, mine.strikes] : null).toEqual(
            theirs !== undefined && now < theirs.until ? [theirs.reason, theirs.until, theirs.strikes] : null
          )
        }
        const published = shared.processes.get(1)
        expect((published?.claims ?? []).map((c) => c.key)).toEqual(replay.state.claims.map((c) => c.key))
        expect(published?.reaped ?? 0).toBe(replay.state.reaped)
        // and the in-flight aborts are the ones the test has not answered yet
        expect(replay.state.claims.filter((c) => c.abortInFlight).length).toBe(yield* engine.aborting)
      }),
    { fastCheck: { numRuns: 80 } }
  )
})
