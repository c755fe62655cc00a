/**
 * Budgets a provider will tell when asked, in the plugin (issue 35, US-48): the hooks over the file
 * layers on the TestClock, OpenRouter's key endpoint scripted. A stated `:free` budget at its reserve
 * cools every `:free` slot before any 429, the next spawn goes elsewhere, and `ocpool quota` shows the
 * budget as the provider stated it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { runCli } from "../../src/cli/app.js"
import { captureStream, type CliIo } from "../../src/cli/output.js"
import { DAY_MS } from "../../src/core/constants.js"
import { KEY_TICK_MS } from "../../src/core/quota/keySchedule.js"
import { KeyEndpointMemory, type KeyCall } from "../../src/layers/quota/KeyEndpointMemory.js"
import { cooldownIn, quotaIn } from "../support/stateDb.js"
import { bootsPerTest, sleep, spawn } from "./boot.js"

const FREE_A = "openrouter/qwen/qwen3-coder:free"
const FREE_B = "openrouter/deepseek/deepseek-r1:free"
const POOL = { slots: [{ model: FREE_A }, { model: FREE_B }, { model: "zen/alpha" }] }
const CONFIG = { provider: { openrouter: { options: { apiKey: "sk-or-v1-plugin-test" } } } }

const P = <A>(f: () => Promise<A>) => Effect.promise(f)

/** `ocpool quota` (the command tree, in this process) over `dir`. */
const quotaCli = (args: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const stdout = captureStream(false)
    const stderr = captureStream(false)
    const io: CliIo = { stdout, stderr, stdinIsTTY: false, env: {} }
    const code = yield* runCli(["node", "ocpool", "quota", ...args], io)
    return { code, stdout: stdout.text, stderr: stderr.text }
  })

describe("budgets a provider tells when asked, in the plugin (US-48)", () => {
  const { start } = bootsPerTest()

  it.effect("US-48 a stated :free budget at its reserve cools the :free slots before any 429; the next spawn goes to the paid slot; ocpool quota shows the budget as stated", () =>
    Effect.gen(function* () {
      // the plugin's clock at the wall clock: the record is fresh for the CLI too
      const t0 = Date.now()
      yield* TestClock.setTime(t0)
      const midnight = Math.floor(t0 / DAY_MS) * DAY_MS + DAY_MS
      const clock = yield* TestClock.testClock()
      const calls: Array<KeyCall> = []
      const b = yield* P(() =>
        start({ models: POOL }, ["ok"], {}, 0, clock, ["ok"], { keyEndpoint: KeyEndpointMemory([{ _tag: "Budget", budget: { remaining: 1, limit: 50, resetAt: midnight } }], calls) })
      )
      yield* P(() => b.hooks.config!(structuredClone(CONFIG) as never))
      // nothing claimed yet: no read however long it waits
      yield* TestClock.adjust(3 * KEY_TICK_MS)
      yield* P(() => sleep(20))
      expect(calls).toEqual([])

      expect(yield* P(() => spawn(b, "ses_root", "call_1"))).toBe("explore-1")
      yield* TestClock.adjust(KEY_TICK_MS)
      for (let i = 0; i < 100 && cooldownIn(b.stateDir, FREE_B) === undefined; i++) yield* P(() => sleep(10))
      expect(calls).toEqual([{ provider: "openrouter", url: "https://openrouter.ai/api/v1/key", apiKey: "sk-or-v1-plugin-test" }])
      for (const model of [FREE_A, FREE_B]) {
        expect(cooldownIn(b.stateDir, model)).toMatchObject({ model, reason: "quota_low", strikes: 0, until: midnight })
        expect(quotaIn(b.stateDir, model)).toMatchObject({ model, requests: { remaining: 1, limit: 50, resetAt: midnight } })
      }
      expect(cooldownIn(b.stateDir, "zen/alpha")).toBeUndefined()
      expect(b.logs.map((l) => l.message)).toContainEqual(expect.stringMatching(/^cooling openrouter\/qwen\/qwen3-coder:free quota_low strike 0 for \d+s until /))
      expect(b.logs.some((l) => l.message.includes("sk-or-v1-plugin-test"))).toBe(false)
      // before any 429: the next spawn skips both :free slots
      expect(yield* P(() => spawn(b, "ses_root", "call_2"))).toBe("explore-3")

      const text = yield* quotaCli(["--state-dir", b.stateDir])
      expect([text.code, text.stderr]).toEqual([0, ""])
      const lines = text.stdout.trim().split("\n")
      expect(lines).toEqual([
        expect.stringMatching(/^openrouter\/deepseek\/deepseek-r1:free {2}requests 1\/50 \(2%\) reset 00:00:00Z \(in [0-9hms]+\) {2}seen \d+s ago$/),
        expect.stringMatching(/^openrouter\/qwen\/qwen3-coder:free {2}requests 1\/50 \(2%\) reset 00:00:00Z \(in [0-9hms]+\) {2}seen \d+s ago$/)
      ])
      const json = yield* quotaCli(["--json", "--state-dir", b.stateDir])
      expect(JSON.parse(json.stdout)).toMatchObject({ models: [{ model: FREE_B, requests: { remaining: 1, limit: 50, resetAt: midnight } }, { model: FREE_A, requests: { remaining: 1, limit: 50, resetAt: midnight } }] })
    })
  )

  it.effect("US-48 option keyBudgets:false: no endpoint is ever read, even with a :free slot claimed and a key", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.now())
      const clock = yield* TestClock.testClock()
      const calls: Array<KeyCall> = []
      const b = yield* P(() =>
        start({ models: POOL, keyBudgets: false }, ["ok"], { OPENROUTER_API_KEY: "sk-or-env" }, 0, clock, ["ok"], { keyEndpoint: KeyEndpointMemory([{ _tag: "NoBudget" }], calls) })
      )
      yield* P(() => b.hooks.config!(structuredClone(CONFIG) as never))
      expect(yield* P(() => spawn(b, "ses_root", "call_1"))).toBe("explore-1")
      for (let i = 0; i < 30; i++) {
        yield* TestClock.adjust(KEY_TICK_MS)
        yield* P(() => sleep(2))
      }
      expect(calls).toEqual([])
    })
  )
})
