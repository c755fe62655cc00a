/**
 * The fake provider's hidden budgets (issue 35, item 6; `test/support/hiddenBudgets.mjs`): the one
 * arithmetic the e2e fake and the simulations share.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { DAY_MS, MINUTE_MS, makeHiddenBudgets, type Refusal } from "./support/hiddenBudgets.mjs"

const FREE = ["a:free", "b:free", "c:free", "d:free", "e:free", "f:free"]
const DAY = Date.UTC(2026, 11, 5)
const at = (h: number, m: number, s = 0, ms = 0): number => DAY + ((h * 60 + m) * 60 + s) * 1000 + ms

const freeTier = (stated: "retry-after" | "body" | "none" = "retry-after") =>
  makeHiddenBudgets({ groups: [{ name: "free-models", models: FREE, perMinute: 20, perDay: 200, stated }] })

const refused = (a: ReturnType<ReturnType<typeof freeTier>["answer"]>): Refusal => {
  if (a.ok) throw new Error("expected a 429")
  return a
}

describe("hidden budgets", () => {
  it("US-48 six models share one budget of 20 a minute: the 21st request of the minute is a 429, whichever model", () => {
    const b = freeTier()
    for (let i = 0; i < 20; i++) expect(b.answer({ key: "k1", model: FREE[i % 6]!, now: at(10, 0, i) })).toEqual({ ok: true, group: "free-models" })
    const r = refused(b.answer({ key: "k1", model: "f:free", now: at(10, 0, 30) }))
    expect(r.status).toBe(429)
    expect(r.window).toBe("minute")
    expect(r.resetAt).toBe(at(10, 1))
  })

  it("US-48 minute windows are fixed calendar minutes: the budget is back at :00 of the next minute, not 60 s after the first request", () => {
    const b = freeTier()
    for (let i = 0; i < 20; i++) expect(b.answer({ key: "k", model: "a:free", now: at(10, 0, 50) }).ok).toBe(true)
    expect(b.answer({ key: "k", model: "a:free", now: at(10, 0, 59, 999) }).ok).toBe(false)
    expect(b.answer({ key: "k", model: "a:free", now: at(10, 1, 0) }).ok).toBe(true)
  })

  it("US-48 a refused request counts in no window", () => {
    const b = makeHiddenBudgets({ groups: [{ name: "g", models: ["m"], perMinute: 2, perDay: 3 }] })
    b.answer({ key: "k", model: "m", now: at(1, 0) })
    b.answer({ key: "k", model: "m", now: at(1, 0) })
    for (let i = 0; i < 5; i++) expect(b.answer({ key: "k", model: "m", now: at(1, 0, 10) }).ok).toBe(false)
    expect(b.answer({ key: "k", model: "m", now: at(1, 1) }).ok).toBe(true)
    expect(b.counts()).toEqual([
      { key: "k", group: "g", minute: { start: at(1, 1), used: 1 }, day: { start: DAY, used: 3 }, granted: 3, refused: 5, refusedMinute: 5, refusedDay: 0 }
    ])
  })

  it("US-48 the day budget of 200 ends at 00:00 UTC, and a spent day is what the 429 names even in a fresh minute", () => {
    const b = freeTier()
    let granted = 0
    for (let minute = 0; minute < 10; minute++) for (let i = 0; i < 20; i++) granted += b.answer({ key: "k", model: FREE[i % 6]!, now: at(8, minute, i) }).ok ? 1 : 0
    expect(granted).toBe(200)
    const r = refused(b.answer({ key: "k", model: "a:free", now: at(8, 30) }))
    expect(r.window).toBe("day")
    expect(r.resetAt).toBe(DAY + DAY_MS)
    expect(b.answer({ key: "k", model: "b:free", now: DAY + DAY_MS - 1 }).ok).toBe(false)
    expect(b.answer({ key: "k", model: "b:free", now: DAY + DAY_MS })).toEqual({ ok: true, group: "free-models" })
  })

  it("US-48 budgets are per API key and per group; a model in no group is never refused nor counted", () => {
    const b = makeHiddenBudgets({
      groups: [
        { name: "free", models: ["a:free"], perMinute: 1 },
        { name: "paid", models: ["big"], perMinute: 1 }
      ]
    })
    expect(b.answer({ key: "k1", model: "a:free", now: at(0, 0) }).ok).toBe(true)
    expect(b.answer({ key: "k1", model: "a:free", now: at(0, 0) }).ok).toBe(false)
    expect(b.answer({ key: "k2", model: "a:free", now: at(0, 0) }).ok).toBe(true)
    expect(b.answer({ key: "k1", model: "big", now: at(0, 0) }).ok).toBe(true)
    for (let i = 0; i < 50; i++) expect(b.answer({ key: "k1", model: "other", now: at(0, 0) })).toEqual({ ok: true })
    expect(b.counts().map((c) => `${c.key}/${c.group}`)).toEqual(["k1/free", "k2/free", "k1/paid"])
  })

  it("US-48 a 429 states its reset as the group says: retry-after in whole seconds, OpenRouter's body-carried reset, or nothing", () => {
    const spend = (stated: "retry-after" | "body" | "none") => {
      const b = freeTier(stated)
      for (let i = 0; i < 20; i++) b.answer({ key: "k", model: "a:free", now: at(9, 0, 1) })
      return refused(b.answer({ key: "k", model: "a:free", now: at(9, 0, 17, 400) }))
    }
    const ra = spend("retry-after")
    expect(ra.headers).toEqual({ "content-type": "application/json", "retry-after": "43" })
    expect(ra.body).toEqual({ error: { message: "Rate limit exceeded: free-models-per-min.", code: 429 } })
    const body = spend("body")
    expect(body.headers).toEqual({ "content-type": "application/json" })
    expect(body.body.error.metadata).toEqual({ headers: { "X-RateLimit-Reset": String(at(9, 1)) } })
    const none = spend("none")
    expect(none.headers).toEqual({ "content-type": "application/json" })
    expect(JSON.stringify(none.body)).not.toMatch(/reset|retry|\d{4,}/i)
  })

  it("US-48 bad groups are refused with the problem named", () => {
    expect(() => makeHiddenBudgets({ groups: [{ name: "", models: ["m"] }] })).toThrow(/needs a name/)
    expect(() => makeHiddenBudgets({ groups: [{ name: "g", models: [] }] })).toThrow(/list of model ids/)
    expect(() => makeHiddenBudgets({ groups: [{ name: "g", models: ["m"], perMinute: 1.5 }] })).toThrow(/whole numbers/)
    expect(() => makeHiddenBudgets({ groups: [{ name: "g", models: ["m"], stated: "header" as "none" }] })).toThrow(/stated is/)
    expect(() =>
      makeHiddenBudgets({
        groups: [
          { name: "g", models: ["m"] },
          { name: "h", models: ["m"] }
        ]
      })
    ).toThrow(/model m is in groups g and h/)
    const b = freeTier()
    expect(() => b.answer({ key: "k", model: "a:free", now: Number.NaN })).toThrow(/finite/)
  })

  it.effect("US-48 driven by the TestClock: an hour of 4 callers at one request every 10 s each gets 20 in each of the first 10 minutes, then nothing until 00:00 UTC", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(at(23, 0))
      const b = freeTier("none")
      const perMinute = new Map<number, number>()
      for (let tick = 0; tick < 360; tick++) {
        const now = yield* TestClock.currentTimeMillis
        for (let caller = 0; caller < 4; caller++) {
          const a = b.answer({ key: "k", model: FREE[(tick + caller) % 6]!, now })
          if (a.ok) perMinute.set(Math.floor(now / MINUTE_MS), (perMinute.get(Math.floor(now / MINUTE_MS)) ?? 0) + 1)
        }
        yield* TestClock.adjust("10 seconds")
      }
      const [row] = b.counts()
      expect(row!.granted).toBe(200)
      expect(row!.refused).toBe(4 * 360 - 200)
      // the 10th minute's last 4 find the day spent (200 granted), the first 9 minutes' last 4 the minute
      expect(row!.refusedDay).toBe(4 * 300 + 4)
      expect(row!.refusedMinute).toBe(4 * 9)
      expect([...perMinute.values()]).toEqual(Array(10).fill(20))
      expect(yield* TestClock.currentTimeMillis).toBe(DAY + DAY_MS)
      expect(b.answer({ key: "k", model: "a:free", now: yield* TestClock.currentTimeMillis }).ok).toBe(true)
    })
  )
})

describe("hidden budgets in the e2e fake (test/e2e/fake-llm.mjs over HTTP)", () => {
  const chat = (url: string, model: string, key: string) =>
    fetch(`${url}/openrouter/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ model, stream: false, messages: [{ role: "user", content: "hi" }] })
    })

  it("US-48 POST /_fake/budgets: granted answers carry no rate-limit header, the request over the budget is a 429 stating its reset, per key", async () => {
    const { startFakeLlm } = await import("./e2e/fake.js")
    const fake = await startFakeLlm()
    try {
      await fake.setBudgets([{ name: "free-models", models: ["a:free", "b:free"], perDay: 2, stated: "body" }])
      const ok1 = await chat(fake.url, "a:free", "k1")
      const ok2 = await chat(fake.url, "b:free", "k1")
      for (const r of [ok1, ok2]) {
        expect(r.status).toBe(200)
        expect([...r.headers.keys()].filter((h) => /ratelimit|retry-after/i.test(h))).toEqual([])
      }
      const over = await chat(fake.url, "a:free", "k1")
      const body = (await over.json()) as { error: { message: string; metadata: { headers: Record<string, string> } } }
      {
        expect(over.status).toBe(429)
        expect(over.headers.get("retry-after")).toBeNull()
        expect(body.error.message).toBe("Rate limit exceeded: free-models-per-day.")
        // the day's end, 00:00 UTC (a per-day budget, so the test holds whatever the minute)
        expect(Number(body.error.metadata.headers["X-RateLimit-Reset"]) % DAY_MS).toBe(0)
        expect((await chat(fake.url, "a:free", "k2")).status).toBe(200)
        expect((await chat(fake.url, "other", "k1")).status).toBe(200)
        const records = await fake.requests()
        expect(records.map((r) => [r.behavior, r.budgetGroup ?? r.budget?.group])).toEqual([
          ["text", "free-models"],
          ["text", "free-models"],
          ["budget-429", "free-models"],
          ["text", "free-models"],
          ["text", undefined]
        ])
        expect((await fake.budgets()).counts.map((c) => [c.key, c.granted, c.refused])).toEqual([
          ["k1", 2, 1],
          ["k2", 1, 0]
        ])
      }
      await expect(fake.setBudgets([{ name: "g", models: [] }])).rejects.toThrow(/list of model ids/)
      await fake.reset()
      expect((await fake.budgets()).groups).toEqual([])
    } finally {
      await fake.stop()
    }
  })
})
