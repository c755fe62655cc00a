/** Coaching (issue 12, US-49): GO / THROTTLE / STOP from measured quota, and when it is said again. */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import type { Cooldown } from "../../../src/core/pool/cooldown.js"
import { initialEngineState } from "../../../src/core/engine/state.js"
import { engineStep, type Applied } from "../../../src/core/engine/step.js"
import { effectOf } from "../../../src/core/engine/effects.js"
import { coach, type CoachInput } from "../../../src/core/quota/coach.js"
import { coachTarget } from "../../../src/plugin/events.js"
import { T0 } from "../../helpers.js"

const SLOTS = [1, 2, 3, 4].map((i) => ({ index: i, provider: "zen", model: `zen/m${i}`, weight: 1 }))
const cooling = (model: string, until = T0 + 60_000, reason: Cooldown["reason"] = "rate_limit"): [string, Cooldown] => [
  model,
  { model, reason, strikes: 1, scope: "model", since: T0, until, source: "backoff" }
]
const base: CoachInput = { model: "big/root", quota: undefined, slots: SLOTS, cooldowns: new Map(), fallbackLeft: false, now: T0 }
const quota = (remaining: number, limit?: number, resetAt?: number) => ({
  model: "big/root",
  requests: { remaining, ...(limit === undefined ? {} : { limit }), ...(resetAt === undefined ? {} : { resetAt }) },
  seenAt: T0
})

describe("coaching (US-49)", () => {
  it("US-49 plenty left and a healthy pool: GO, with the figures", () => {
    const c = coach({ ...base, quota: quota(80, 100, T0 + 3_600_000) })
    expect(c.verdict).toBe("GO")
    expect(c.line).toBe("opencode-pool quota: GO. big/root: 80/100 requests left (80%), resets 10:00Z; pool: 0 of 4 slot(s) cooling. Work normally; delegate bulk reading to the pooled subagents.")
  })

  it("US-49 the percentage left is the one ocpool status shows: 29/100 is 29 %, not 28 % (no float rounding)", () => {
    for (const [left, limit, pct] of [[29, 100, 29], [57, 100, 57], [1, 3, 33], [2, 3, 66]] as const) expect(coach({ ...base, quota: quota(left, limit) }).line).toContain(`${left}/${limit} requests left (${pct}%)`)
  })

  it("US-49 the root's model at or below 20 % left, or most pool slots cooling: THROTTLE", () => {
    expect(coach({ ...base, quota: quota(20, 100) }).verdict).toBe("THROTTLE")
    expect(coach({ ...base, quota: quota(21, 100) }).verdict).toBe("GO")
    expect(coach({ ...base, cooldowns: new Map([cooling("zen/m1"), cooling("zen/m2"), cooling("zen/m3")]) }).verdict).toBe("THROTTLE")
    expect(coach({ ...base, cooldowns: new Map([cooling("zen/m1"), cooling("zen/m2")]) }).verdict).toBe("GO")
  })

  it("US-49 the root's model exhausted (0 left, or cooling) with no fallback left: STOP; with a fallback left: THROTTLE", () => {
    const spent = coach({ ...base, quota: quota(0, 100, T0 + 600_000) })
    expect(spent.verdict).toBe("STOP")
    expect(spent.line).toContain("big/root: 0/100 requests left (0%), resets 09:10Z")
    expect(spent.line).toContain("Stop starting new work")
    const cooled = coach({ ...base, cooldowns: new Map([cooling("big/root", T0 + 120_000, "quota")]) })
    expect(cooled.verdict).toBe("STOP")
    expect(cooled.line).toContain("big/root is cooling (quota) until 09:02Z")
    expect(coach({ ...base, quota: quota(0, 100), fallbackLeft: true }).verdict).toBe("THROTTLE")
  })

  it("US-49 no quota stated and a healthy pool: GO saying so; a stale record counts as none", () => {
    expect(coach(base).line).toContain("big/root: no quota stated")
    expect(coach({ ...base, quota: quota(0, 100, T0 - 1) }).verdict).toBe("GO")
  })

  it.prop("US-49 the class changes whenever the verdict does, and stays within a tenth of the limit", [fc.nat(100), fc.nat(100)], ([a, b]) => {
    const x = coach({ ...base, quota: quota(a, 100) })
    const y = coach({ ...base, quota: quota(b, 100) })
    if (x.verdict !== y.verdict) expect(x.key).not.toBe(y.key)
    if (Math.floor(a / 10) === Math.floor(b / 10) && x.verdict === y.verdict) expect(x.key).toBe(y.key)
  })
})

describe("coaching in the engine (US-49)", () => {
  const applied = (o: ReturnType<typeof engineStep>): Applied => {
    if (o._tag !== "Applied") throw new Error("needs a snapshot")
    return o
  }
  const pooled = () => applied(engineStep(initialEngineState(), { type: "pool", slots: SLOTS, origin: "t", warnings: [] }, T0)).state

  it("US-49 a root session gets the line once; again only when the verdict or a figure changes class; a child never", () => {
    let state = pooled()
    const ask = (session: string, at: number) => {
      const out = applied(engineStep(state, { type: "coach", session, model: "zen/m1" }, at))
      state = out.state
      return effectOf(out, "Coach")?.line
    }
    expect(ask("ses_root", T0 + 1)).toMatch(/^opencode-pool quota: GO\. zen\/m1: no quota stated; pool: 0 of 4 slot\(s\) cooling\./)
    expect(ask("ses_root", T0 + 2)).toBeUndefined()
    // the root's model states its quota: 5 of 100 left
    state = applied(engineStep(state, { type: "response", headers: { "x-ratelimit-remaining-requests": "5", "x-ratelimit-limit-requests": "100" }, model: "zen/m1", reserve: 0.02 }, T0 + 3)).state
    expect(ask("ses_root", T0 + 4)).toMatch(/^opencode-pool quota: THROTTLE\. zen\/m1: 5\/100 requests left \(5%\)/)
    expect(ask("ses_root", T0 + 5)).toBeUndefined()
    state = applied(engineStep(state, { type: "child", id: "ses_child", parent: "ses_root", agent: "explore-1" }, T0 + 6)).state
    expect(ask("ses_child", T0 + 7)).toBeUndefined()
  })

  it("US-49 the title generator's request and a request without a session are not coached", () => {
    const model = { providerID: "zen", id: "m1" }
    expect(coachTarget({ sessionID: "ses_root", model }, { system: ["You are a title generator. You output ONLY a thread title."] })).toBeUndefined()
    expect(coachTarget({ model }, { system: [] })).toBeUndefined()
    expect(coachTarget({ sessionID: "ses_root", model }, { system: "x" })).toBeUndefined()
    expect(coachTarget({ sessionID: "ses_root", model }, { system: ["You are opencode"] })).toMatchObject({ session: "ses_root", model: "zen/m1" })
  })
})
