/**
 * Learned budgets through the real engine (issue 35): four processes on one shared state route a day
 * of subagent traffic over six `:free` models of one provider, whose hidden budget (20 a minute and
 * 200 a day, shared by the six) states nothing on success, and a paid slot. Each request's outcome
 * comes from the fake provider's budgets (test/support/hiddenBudgets.mjs) on the TestClock; each
 * process's trace replays to its own decisions.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import { resolvePool } from "../../src/core/source.js"
import { formatDecision } from "../../src/core/trace/format.js"
import { replayText } from "../../src/core/trace/replay.js"
import { AppLogMemory } from "../../src/layers/opencode/AppLogMemory.js"
import { memoryState, type MemoryState } from "../../src/layers/state/MemoryState.js"
import { PoolConfigMemory } from "../../src/layers/pool/PoolConfigMemory.js"
import { TraceRecorderMemory } from "../../src/layers/pool/TraceRecorderMemory.js"
import { AbortClient } from "../../src/services/opencode/AbortClient.js"
import { makeHiddenBudgets, type Stated } from "../support/hiddenBudgets.mjs"
import { engineOn, type TestEngine } from "./testEngine.js"

const MIN = 60_000
const FREE = ["a", "b", "c", "d", "e", "f"].map((m) => `orf/${m}:free`)
const POOL = resolvePool([{ kind: "file", origin: "test", text: `${FREE.map((m) => `${m} 2`).join("\n")}\npaid/x 100\n` }], 8)
const DAY0 = Date.UTC(2026, 11, 5)
const PROCESSES = 4

interface Counts {
  /** 429s by the window the provider said was spent, keyed `minute:<start>` or `day:<start>`. */
  readonly limits: Map<string, number>
  /** Requests sent to a `:free` model, and granted. */
  sent: number
  granted: number
  /** Spawns the pool kept off the `:free` models (all cooling from a learned budget) while the hidden budget had room. */
  paced: number
}

/** One spawn of process `p`: routed, its one request answered by the hidden budgets, the task ended. */
const request = (p: TestEngine, pid: number, n: number, budgets: ReturnType<typeof makeHiddenBudgets>, counts: Counts, shared: MemoryState, now: number, learn: boolean) =>
  Effect.gen(function* () {
    const parent = `par${pid}`
    const call = `c${n}`
    const child = `ch${pid}-${n}`
    const args: Record<string, unknown> = { subagent_type: "explore" }
    yield* p.beforeTask(parent, call, args).pipe(Effect.orDie)
    const slot = Number(String(args.subagent_type).replace("explore-", ""))
    const model = POOL.slots[slot - 1]!.model
    yield* p.childCreated(child, parent, String(args.subagent_type), undefined)
    if (!model.endsWith(":free")) {
      // the pool kept this request off the free models: was the hidden budget spent?
      const c = budgets.counts().find((x) => x.group === "free")
      const minuteUsed = c === undefined || c.minute.start !== Math.floor(now / MIN) * MIN ? 0 : c.minute.used
      const dayUsed = c === undefined || c.day.start !== Math.floor(now / (24 * 60 * MIN)) * 24 * 60 * MIN ? 0 : c.day.used
      const learnedCooling = FREE.every((m) => shared.cooldowns.get(m)?.reason === "quota_low" && shared.cooldowns.get(m)!.until > now)
      if (learnedCooling && minuteUsed < 20 && dayUsed < 200) counts.paced++
      yield* p.release(`${parent}:${call}`, true)
      return
    }
    counts.sent++
    const answer = budgets.answer({ key: "k", model: model.slice("orf/".length), now })
    if (answer.ok) {
      counts.granted++
      if (learn) yield* p.raw.apply({ type: "sent", model, session: child, reserve: 0.02 })
      yield* p.settle
      yield* p.release(`${parent}:${call}`, true)
      return
    }
    const key = `${answer.window}:${answer.window === "minute" ? Math.floor(now / MIN) * MIN : answer.resetAt}`
    counts.limits.set(key, (counts.limits.get(key) ?? 0) + 1)
    const error = { name: "APIError", data: { message: answer.body.error.message, statusCode: 429, isRetryable: true, responseHeaders: answer.headers, responseBody: JSON.stringify(answer.body) } }
    yield* p.onError(child, error, model)
    yield* p.settle
    yield* p.release(`${parent}:${call}`, false)
  })

/**
 * A day from 00:00 UTC: during the first half hour `busy` spawns a minute, spread over the processes
 * in turn, then one every ten minutes; returns the counts, and each process's trace replays to its decisions.
 */
const day = (stated: Stated, busy: number, learn: boolean) =>
  Effect.gen(function* () {
    yield* TestClock.setTime(DAY0)
    const shared = memoryState()
    const budgets = makeHiddenBudgets({ groups: [{ name: "free", models: FREE.map((m) => m.slice("orf/".length)), perMinute: 20, perDay: 200, stated }] })
    const abort = Layer.succeed(AbortClient, { abort: () => Effect.void })
    const traces: Array<MemoryState> = []
    const processes: Array<TestEngine> = []
    for (let pid = 1; pid <= PROCESSES; pid++) {
      const own = memoryState()
      traces.push(own)
      const layer = Layer.mergeAll(AppLogMemory([]), abort, TraceRecorderMemory(own), PoolConfigMemory(POOL))
      const p = yield* engineOn(layer, { timing: { hangMinAgeMs: 60 * MIN, hangSilenceMs: 30 * MIN }, reapMs: 3_600_000 }, shared, pid)
      yield* p.applyPool(POOL)
      processes.push(p)
    }
    const counts: Counts = { limits: new Map(), sent: 0, granted: 0, paced: 0 }
    let n = 0
    for (let minute = 0; minute < 24 * 60; minute++) {
      // busy for half an hour (the day's budget is spent within it), then a spawn every ten minutes
      const perMinute = minute < 30 ? busy : minute % 10 === 0 ? 1 : 0
      for (let i = 0; i < perMinute; i++) {
        const now = DAY0 + minute * MIN + Math.floor((i * MIN) / perMinute)
        yield* TestClock.setTime(now)
        const pid = n % PROCESSES
        yield* request(processes[pid]!, pid + 1, n++, budgets, counts, shared, now, learn)
      }
    }
    for (const own of traces) {
      const replay = replayText(own.trace.map((l) => JSON.stringify(l)).join("\n") + "\n")
      expect(replay.error).toBeUndefined()
      expect(replay.decisions.map(formatDecision)).toEqual(own.decisions)
    }
    return counts
  })

/** 429s per window after the first 429 of that window's kind. */
const after = (counts: Counts, kind: "minute" | "day"): ReadonlyArray<number> => {
  const windows = [...counts.limits.entries()].filter(([k]) => k.startsWith(`${kind}:`)).sort(([a], [b]) => Number(a.split(":")[1]) - Number(b.split(":")[1]))
  return windows.slice(1).map(([, v]) => v)
}

describe("learned budgets through the engine (issue 35)", () => {
  it.effect(
    "US-48 a day of four processes' subagents over six :free models sharing 20/minute and 200/day: after the first 429 of each window kind, at most one more 429 per window; no spawn kept off the free models while the budget had room",
    () =>
      Effect.gen(function* () {
        const learned = yield* day("retry-after", 25, true)
        const blind = yield* day("retry-after", 25, false)
        // without learning (no request counted): a 429 in every busy minute until the day is spent
        expect(after(blind, "minute").length).toBeGreaterThan(3)
        expect(Math.max(...after(learned, "minute"), 0)).toBeLessThanOrEqual(1)
        expect(Math.max(...after(learned, "day"), 0)).toBeLessThanOrEqual(1)
        expect(learned.paced).toBe(0)
        // the day's 200 were used, and fewer requests were refused than without learning
        expect(learned.granted).toBe(200)
        const total = (c: Counts) => [...c.limits.values()].reduce((a, b) => a + b, 0)
        expect(total(learned)).toBeLessThan(total(blind))
        console.log(
          `learned budgets, a day (retry-after stated): ${total(learned)} 429s (minute windows after the first: ${after(learned, "minute").join(",") || "none"}; day: ${after(learned, "day").join(",") || "none"}), ${learned.paced} spawns paced while the budget had room; without learning ${total(blind)} 429s`
        )
      }),
    120_000
  )

  it.effect.each([["body"], ["none"]] as const)(
    "US-48 the same day when the 429 states its reset only in the body, or nothing at all: at most one more 429 per window after the first of its kind, none paced with room (%s)",
    ([stated]) =>
      Effect.gen(function* () {
        const learned = yield* day(stated, 25, true)
        expect(Math.max(...after(learned, "minute"), 0)).toBeLessThanOrEqual(1)
        expect(Math.max(...after(learned, "day"), 0)).toBeLessThanOrEqual(1)
        expect(learned.paced).toBe(0)
        expect(learned.granted).toBe(200)
      }),
    60_000
  )
})
