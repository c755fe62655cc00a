/**
 * Budgets a provider will tell when asked (issue 35, US-48), on the TestClock: the reads the layer makes
 * of a scripted endpoint while the real engine (memory backend) holds claims, and what reaches the engine.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, TestClock } from "effect"
import { resolvePool } from "../../../src/core/source.js"
import { KEY_READ_EVERY_MS, KEY_TICK_MS } from "../../../src/core/quota/keySchedule.js"
import { AbortClientMemory } from "../../../src/layers/opencode/AbortClientMemory.js"
import { AppLogMemory, type MemoryLine } from "../../../src/layers/opencode/AppLogMemory.js"
import { PoolConfigMemory } from "../../../src/layers/pool/PoolConfigMemory.js"
import { TraceRecorderMemory } from "../../../src/layers/pool/TraceRecorderMemory.js"
import { KeyBudgetsShell } from "../../../src/layers/quota/KeyBudgetsShell.js"
import { KeyEndpointMemory, type KeyCall, type KeyOutcome } from "../../../src/layers/quota/KeyEndpointMemory.js"
import { memoryState } from "../../../src/layers/state/MemoryState.js"
import { PoolEngine } from "../../../src/services/pool/PoolEngine.js"
import { KeyBudgets } from "../../../src/services/quota/KeyBudgets.js"
import { KeyReadRefused, KeyReadTimeout } from "../../../src/services/quota/KeyEndpoint.js"
import { engineOn } from "../../plugin/testEngine.js"

const MIN = 60_000
const T0 = Date.UTC(2026, 11, 1, 9, 0, 0)
const MIDNIGHT = Date.UTC(2026, 11, 2)
const FREE_POOL = "openrouter/qwen/qwen3-coder:free 1\nopenrouter/deepseek/deepseek-r1:free 1\nopenrouter/anthropic/claude-sonnet-4 1\nzen/alpha 1\n"
const CONFIG = { provider: { openrouter: { options: { apiKey: "sk-or-test-key" } } } }
const budget = (remaining: number): KeyOutcome => ({ _tag: "Budget", budget: { remaining, limit: 50, resetAt: MIDNIGHT } })

/** The real engine of one memory process with `poolText`, and the budget reads over a scripted endpoint, on the TestClock. */
const setup = (poolText: string, outcomes: ReadonlyArray<KeyOutcome>, env: Record<string, string | undefined> = {}, config: Record<string, unknown> = CONFIG) =>
  Effect.gen(function* () {
    yield* TestClock.setTime(T0)
    const shared = memoryState()
    const pool = resolvePool([{ kind: "file", origin: "test", text: poolText }], 4)
    const logs: Array<MemoryLine> = []
    const rest = Layer.mergeAll(AppLogMemory(logs), AbortClientMemory(["ok"], []), TraceRecorderMemory(shared), PoolConfigMemory(pool))
    const engine = yield* engineOn(rest, { timing: { hangMinAgeMs: 5 * MIN, hangSilenceMs: 3 * MIN }, reapMs: 30_000 }, shared, 1)
    yield* engine.applyPool(pool)
    const calls: Array<KeyCall> = []
    const budgets = yield* Layer.build(
      KeyBudgetsShell({ reserve: 0.02, env }).pipe(Layer.provide(Layer.mergeAll(Layer.succeed(PoolEngine, engine.raw), KeyEndpointMemory(outcomes, calls), AppLogMemory(logs))))
    ).pipe(Effect.map((ctx) => Context.get(ctx, KeyBudgets)))
    yield* budgets.configure(config)
    const spawn = (call: string) =>
      Effect.gen(function* () {
        const args: Record<string, unknown> = { subagent_type: "explore" }
        yield* engine.beforeTask("root", call, args).pipe(Effect.orDie)
        return args.subagent_type as string
      })
    /** Time passes on the TestClock, tick by tick, each tick's read finished before the next. */
    const pass = (ms: number) =>
      Effect.gen(function* () {
        for (let t = 0; t < ms; t += KEY_TICK_MS) {
          yield* TestClock.adjust(Math.min(KEY_TICK_MS, ms - t))
          for (let i = 0; i < 5; i++) yield* Effect.yieldNow()
        }
      })
    return { engine, calls, logs, spawn, pass, shared }
  })

describe("budget reads on the TestClock (US-48)", () => {
  it.scoped("US-48 a provider is read only while a :free slot of it is claimed, at most once a minute, with the config's key; its budget reaches every :free slot", () =>
    Effect.gen(function* () {
      const t = yield* setup(FREE_POOL, [budget(38)])
      yield* t.pass(3 * MIN)
      // in the pool, nothing claimed: no read
      expect(t.calls).toEqual([])
      expect(yield* t.spawn("c1")).toBe("explore-1")
      yield* t.pass(KEY_TICK_MS)
      expect(t.calls).toEqual([{ provider: "openrouter", url: "https://openrouter.ai/api/v1/key", apiKey: "sk-or-test-key" }])
      const quotas = (yield* t.engine.raw.state).quotas
      expect(quotas.get("openrouter/qwen/qwen3-coder:free")?.requests).toEqual({ remaining: 38, limit: 50, resetAt: MIDNIGHT })
      expect(quotas.get("openrouter/deepseek/deepseek-r1:free")?.requests).toEqual({ remaining: 38, limit: 50, resetAt: MIDNIGHT })
      expect(quotas.has("openrouter/anthropic/claude-sonnet-4")).toBe(false)
      // a minute of ticks while the claim lasts: one more read, not twelve
      yield* t.pass(KEY_READ_EVERY_MS - KEY_TICK_MS)
      expect(t.calls).toHaveLength(1)
      yield* t.pass(KEY_TICK_MS)
      expect(t.calls).toHaveLength(2)
      yield* t.pass(4 * MIN)
      expect(t.calls).toHaveLength(6)
      // the claim ends: no read any more
      yield* t.engine.release("root:c1", true)
      yield* t.pass(5 * MIN)
      expect(t.calls).toHaveLength(6)
    })
  )

  it.scoped("US-48 a provider not in the pool, or only its paid models claimed, is never read", () =>
    Effect.gen(function* () {
      const none = yield* setup("zen/alpha 1\ngo/gamma 1\n", [budget(38)], { OPENROUTER_API_KEY: "sk-or-env" })
      yield* none.spawn("c1")
      yield* none.spawn("c2")
      yield* none.pass(5 * MIN)
      expect(none.calls).toEqual([])
      const paid = yield* setup("openrouter/anthropic/claude-sonnet-4 1\nopenrouter/qwen/qwen3-coder:free 1\n", [budget(38)])
      expect(yield* paid.spawn("c1")).toBe("explore-1")
      yield* paid.pass(5 * MIN)
      expect(paid.calls).toEqual([])
    })
  )

  it.scoped("US-48 at the reserve every :free slot cools as quota_low until 00:00 UTC before any 429; the next spawn goes to a paid slot", () =>
    Effect.gen(function* () {
      const t = yield* setup(FREE_POOL, [budget(1)])
      expect(yield* t.spawn("c1")).toBe("explore-1")
      yield* t.pass(KEY_TICK_MS)
      const cooling = [...t.shared.cooldowns.values()].map((c) => [c.model, c.reason, c.until])
      expect(cooling).toEqual([
        ["openrouter/qwen/qwen3-coder:free", "quota_low", MIDNIGHT],
        ["openrouter/deepseek/deepseek-r1:free", "quota_low", MIDNIGHT]
      ])
      expect(yield* t.spawn("c2")).toBe("explore-3")
    })
  )

  it.scoped("US-48 a failed read is logged once per kind, never with the key; the reads go on once a minute and say when they work again", () =>
    Effect.gen(function* () {
      const refused = new KeyReadRefused({ provider: "openrouter", status: 401 })
      const t = yield* setup(FREE_POOL, [refused, refused, new KeyReadTimeout({ provider: "openrouter", ms: 5_000 }), budget(20)])
      yield* t.spawn("c1")
      yield* t.pass(4 * MIN)
      expect(t.calls).toHaveLength(4)
      const lines = t.logs.filter((l) => l.message.startsWith("openrouter budget"))
      expect(lines.map((l) => [l.level, l.message])).toEqual([
        ["warn", "openrouter budget not read (HTTP 401: the key was refused); its :free requests today are known only from its answers"],
        ["warn", "openrouter budget not read (no answer within 5000 ms); its :free requests today are known only from its answers"],
        ["info", "openrouter budget read again: 20/50 :free requests today, until 00:00Z"]
      ])
      expect(t.logs.some((l) => l.message.includes("sk-or-test-key"))).toBe(false)
    })
  )

  it.scoped("US-48 without a key in the config or the environment nothing is requested, and that is said once; OPENROUTER_API_KEY is used when the config has none", () =>
    Effect.gen(function* () {
      const t = yield* setup(FREE_POOL, [budget(38)], {}, { provider: { openrouter: { options: {} } } })
      yield* t.spawn("c1")
      yield* t.pass(3 * MIN)
      expect(t.calls).toEqual([])
      expect(t.logs.filter((l) => l.message.startsWith("openrouter budget")).map((l) => [l.level, l.message])).toEqual([
        ["info", "openrouter budget not read (no API key: neither provider.openrouter.options.apiKey nor OPENROUTER_API_KEY is set); its :free requests today are known only from its answers"]
      ])
      const env = yield* setup(FREE_POOL, [budget(38)], { OPENROUTER_API_KEY: "sk-or-env" }, {})
      yield* env.spawn("c1")
      yield* env.pass(KEY_TICK_MS)
      expect(env.calls.map((c) => c.apiKey)).toEqual(["sk-or-env"])
    })
  )
})
