/**
 * The plugin and `ocpool replay` agree: random sessions of spawns, bindings, activity, releases,
 * limit errors, retries and sweeps are driven through the plugin's programs (memory layers, TestClock);
 * the trace they record is replayed by the state machine, and every route, abort and cooldown the plugin
 * made must be the one replay decides.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Layer, TestClock } from "effect"
import { resolvePool } from "../../src/core/source.js"
import { replayText } from "../../src/core/trace/replay.js"
import { AbortClientMemory } from "../../src/layers/AbortClientMemory.js"
import { AppLogMemory } from "../../src/layers/AppLogMemory.js"
import { ClaimStoreMemory } from "../../src/layers/ClaimStoreMemory.js"
import { CooldownStoreMemory } from "../../src/layers/CooldownStoreMemory.js"
import { memoryState } from "../../src/layers/MemoryState.js"
import { PoolConfigMemory } from "../../src/layers/PoolConfigMemory.js"
import { PoolLockMemory } from "../../src/layers/PoolLockMemory.js"
import { StateDirMemory } from "../../src/layers/StateDirMemory.js"
import { TraceRecorderMemory } from "../../src/layers/TraceRecorderMemory.js"
import { makeEngine } from "../../src/plugin/engine.js"
import { emptyState } from "../../src/plugin/state.js"

const T0 = 1_796_115_600_000
const POOL = resolvePool([{ kind: "file", origin: "test", text: "zen/alpha 2\nzen/beta 1\ngo/gamma 1\n" }], 4)

type Op =
  | { readonly op: "spawn"; readonly owner: number }
  | { readonly op: "bind"; readonly n: number }
  | { readonly op: "activity"; readonly n: number }
  | { readonly op: "release"; readonly n: number }
  | { readonly op: "error"; readonly n: number; readonly kind: number }
  | { readonly op: "retry"; readonly n: number; readonly kind: number }
  | { readonly op: "sweep" }
  | { readonly op: "wait"; readonly ms: number }

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ op: fc.constant("spawn" as const), owner: fc.integer({ min: 0, max: 2 }) }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant("bind" as const), n: fc.nat(20) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant("activity" as const), n: fc.nat(20) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant("release" as const), n: fc.nat(20) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("error" as const), n: fc.nat(20), kind: fc.nat(5) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("retry" as const), n: fc.nat(20), kind: fc.nat(3) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("sweep" as const) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant("wait" as const), ms: fc.constantFrom(1_000, 15_000, 61_000, 200_000, 400_000) }) }
)

const ERRORS: ReadonlyArray<unknown> = [
  { name: "APIError", data: { statusCode: 429, message: "Slow down", responseHeaders: { "retry-after": "120" } } },
  { name: "UnknownError", data: { message: '{"message":"limit reached"}' } },
  { name: "APIError", data: { statusCode: 503, message: "Service Unavailable" } },
  { name: "UnknownError", data: { message: '{"message":"context limit reached"}' } },
  { name: "ProviderModelNotFoundError", data: { message: "Model not found" } },
  { name: "APIError", data: { statusCode: 401, message: "Unauthorized" } }
]
const RETRIES: ReadonlyArray<readonly [string, number]> = [
  ["Rate limit exceeded", 3_000],
  ["Free usage exceeded, subscribe to Go", 3_000],
  ["Internal Server Error", 4 * 3_600_000],
  ["Service Unavailable", 5_000]
]

describe("the plugin and replay agree", () => {
  it.effect.prop(
    "US-45 routes, aborts and cooldowns of the plugin are exactly what replaying its own trace decides",
    { ops: fc.array(opArb, { minLength: 5, maxLength: 60 }) },
    ({ ops }) =>
      Effect.gen(function* () {
        yield* TestClock.setTime(T0)
        const shared = memoryState()
        const aborts: Array<string> = []
        const layer = Layer.mergeAll(
          AppLogMemory([]),
          StateDirMemory(1),
          ClaimStoreMemory(shared, 1),
          CooldownStoreMemory(shared),
          PoolLockMemory,
          AbortClientMemory(["ok"], aborts),
          TraceRecorderMemory(shared),
          PoolConfigMemory(POOL)
        )
        const state = emptyState()
        const engine = yield* makeEngine(state, { timing: { hangMinAgeMs: 300_000, hangSilenceMs: 180_000 }, reapMs: 30_000 }).pipe(Effect.provide(layer))
        yield* engine.applyPool(POOL)
        const routed: Array<string> = []
        /** Spawned tasks: owner, call, the agent they run as, and their child once created. */
        const tasks: Array<{ owner: string; call: string; agent: string; child?: string }> = []
        let calls = 0
        for (const o of ops) {
          switch (o.op) {
            case "spawn": {
              const owner = `own${o.owner}`
              const call = `call${calls++}`
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
              yield* engine.childCreated(t.child, t.owner, t.agent, undefined)
              break
            }
            case "activity": {
              const t = tasks[o.n % Math.max(1, tasks.length)]
              if (t?.child !== undefined) yield* engine.activity(t.child)
              break
            }
            case "release": {
              const t = tasks[o.n % Math.max(1, tasks.length)]
              if (t !== undefined) yield* engine.release(`${t.owner}:${t.call}`, true)
              break
            }
            case "error": {
              const t = tasks[o.n % Math.max(1, tasks.length)]
              if (t?.child !== undefined) yield* engine.onError(t.child, ERRORS[o.kind % ERRORS.length], undefined)
              break
            }
            case "retry": {
              const t = tasks[o.n % Math.max(1, tasks.length)]
              const [message, inMs] = RETRIES[o.kind % RETRIES.length]!
              const now = yield* TestClock.currentTimeMillis
              if (t?.child !== undefined) yield* engine.onRetry(t.child, message, now + inMs, undefined)
              break
            }
            case "sweep":
              yield* engine.timerSweep
              break
            case "wait":
              yield* TestClock.adjust(o.ms)
              break
          }
        }
        const text = shared.trace.map((l) => JSON.stringify(l)).join("\n") + "\n"
        const replay = replayText(text)
        expect(replay.error).toBeUndefined()
        const decided = replay.decisions
        expect(decided.flatMap((d) => (d.type === "route" ? [d.agent] : []))).toEqual(routed)
        expect(decided.flatMap((d) => (d.type === "abort" ? [d.session] : []))).toEqual(aborts)
        const now = yield* TestClock.currentTimeMillis
        for (const slot of POOL.slots) {
          const mine = shared.cooldowns.get(slot.model)
          const theirs = replay.state.cooldowns.get(slot.model)
          expect(mine !== undefined && now < mine.until ? [mine.reason, mine.until, mine.strikes] : null).toEqual(
            theirs !== undefined && now < theirs.until ? [theirs.reason, theirs.until, theirs.strikes] : null
          )
        }
        expect(replay.state.claims.map((c) => c.key)).toEqual(state.claims.map((c) => c.key))
        expect(replay.state.reaped).toBe(state.reaped)
      }),
    { fastCheck: { numRuns: 60 } }
  )
})
