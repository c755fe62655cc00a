/**
 * Issue 35: the one-time warnings of the new limits, through the engine as the plugin runs it: a free
 * tier refused to pooled work, a gateway's upstream out of credit (named, not the gateway), and a
 * quota's reset stated beyond 7 days (the stated date, the 7-day cap). Each once per provider (or
 * upstream) while its cooling lasts; the recorded lines replay to the same decisions.
 */
import { describe, expect, it } from "@effect/vitest"
import { initialEngineState, type EngineState } from "../../src/core/engine/state.js"
import { engineStep, type Applied, type EngineEvent } from "../../src/core/engine/step.js"
import type { PoolSnapshot } from "../../src/core/engine/snapshot.js"
import { decodeLine, InputError } from "../../src/core/trace/input.js"
import { replayText } from "../../src/core/trace/replay.js"
import { T0 } from "../helpers.js"

const EMPTY: PoolSnapshot = { peers: [], cooldowns: new Map() }

const step = (state: EngineState, event: EngineEvent, at: number): Applied => {
  const o = engineStep(state, event, at, EMPTY)
  if (o._tag !== "Applied") throw new Error("needs a snapshot")
  return o
}

/** The lines every step of a test recorded, for replay. */
let recorded: Array<unknown> = []

/** A pool over `models` with a pooled `explore` child `ses_c` on the first (its lines start `recorded` afresh). */
const pooled = (models: ReadonlyArray<string>): EngineState => {
  recorded = []
  const slots = models.map((model, i) => ({ index: i + 1, provider: model.slice(0, model.indexOf("/")), model, weight: 1 }))
  let s = initialEngineState()
  for (const [e, at] of [
    [{ type: "pool", slots, origin: "t", warnings: [] }, T0],
    [{ type: "spawn", owner: "ses_root", call: "call_1", base: "explore" }, T0 + 1],
    [{ type: "child", id: "ses_c", parent: "ses_root", agent: "explore-1" }, T0 + 2]
  ] as ReadonlyArray<readonly [EngineEvent, number]>) {
    const out = step(s, e, at)
    recorded.push(...out.lines)
    s = out.state
  }
  return s
}

/** A step whose lines join `recorded`. */
const record = (state: EngineState, event: EngineEvent, at: number): Applied => {
  const out = step(state, event, at)
  recorded.push(...out.lines)
  return out
}

/** `ocpool replay` of what was recorded decides the same coolings. */
const expectReplayed = (cools: ReadonlyArray<unknown>): void => {
  const replayed = replayText(recorded.map((l) => JSON.stringify(l)).join("\n"))
  expect(replayed.error).toBeUndefined()
  expect(replayed.decisions.filter((d) => d.type === "cool")).toEqual(cools)
}

const apiError = (status: number, body: unknown, url: string) => ({
  name: "APIError",
  data: { message: "x", statusCode: status, isRetryable: status === 429, responseBody: typeof body === "string" ? body : JSON.stringify(body), metadata: { url } }
})

const warnings = (out: Applied): ReadonlyArray<string> => out.logs.filter((l) => l.level === "warn").map((l) => l.message)

describe("issue 35: one warning per new limit", () => {
  it("US-44 a free tier refused to pooled work cools the provider for an hour and warns once, saying what to do", () => {
    const s = pooled(["opencode/big-pickle", "opencode/muse-spark-1.3-contributor-free", "groq/x"])
    const error = apiError(403, { type: "error", error: { type: "FreeTierError", message: "Error from provider (Console): OpenCode's free tier can only be used from within OpenCode" } }, "https://opencode.ai/zen/v1/responses")
    const first = record(s, { type: "error", session: "ses_c", error, model: "opencode/big-pickle" }, T0 + 10)
    expect(first.decisions.find((d) => d.type === "cool")).toMatchObject({ models: ["opencode/big-pickle", "opencode/muse-spark-1.3-contributor-free"], reason: "entitlement", until: T0 + 10 + 3_600_000 })
    expect(warnings(first)).toEqual([
      "provider opencode refused its free tier to pooled work (\"OpenCode's free tier can only be used from within OpenCode\"); 2 slot(s) cool until 10:00Z: update opencode, or give opencode a paid key (or credit), then `ocpool cool clear --provider opencode`"
    ])
    const again = record(first.state, { type: "error", session: "ses_other", error, model: "opencode/muse-spark-1.3-contributor-free" }, T0 + 60_000)
    expect(warnings(again)).toEqual([])
    expectReplayed([...first.decisions, ...again.decisions].filter((d) => d.type === "cool"))
  })

  it("US-45 a trace line whose peerCooling names the reason entitlement decodes; an unknown reason does not", () => {
    const base = { type: "spawn", at: T0, claim: "p:c1", base: "explore" }
    expect(decodeLine(JSON.stringify({ ...base, peerCooling: [{ model: "opencode/a", until: T0 + 5, reason: "entitlement" }] }))).not.toBeInstanceOf(InputError)
    expect(decodeLine(JSON.stringify({ ...base, peerCooling: [{ model: "opencode/a", until: T0 + 5, reason: "free_tier" }] }))).toBeInstanceOf(InputError)
  })

  it("US-44 an upstream out of credit behind a gateway is named, and the gateway is not said to be out of credit", () => {
    const s = pooled(["opencode-go/kimi-k2.6", "opencode-go/kimi-k2.5", "opencode-go/glm-5"])
    const body = {
      error: {
        message: "Error from provider: Provider returned error",
        code: 429,
        metadata: { raw: JSON.stringify({ error: { message: "Your account org-1 <ak-1> is suspended due to insufficient balance", type: "exceeded_current_quota_error" } }), provider_name: "Moonshot AI", is_byok: true }
      }
    }
    const out = record(s, { type: "error", session: "ses_c", error: apiError(429, body, "https://opencode.ai/zen/go/v1/chat/completions"), model: "opencode-go/kimi-k2.6" }, T0 + 10)
    expect(out.decisions.find((d) => d.type === "cool")).toMatchObject({ models: ["opencode-go/kimi-k2.6", "opencode-go/kimi-k2.5"], reason: "quota" })
    expect(warnings(out)).toEqual([
      "upstream Moonshot AI behind provider opencode-go is out of credit; opencode-go/kimi-k2.6, opencode-go/kimi-k2.5 cool until you top up there or 10:00Z (the provider's other models still route)"
    ])
    expect(warnings(out).some((w) => w.startsWith("provider opencode-go is out of credit"))).toBe(false)
    expectReplayed(out.decisions.filter((d) => d.type === "cool"))
  })

  it("US-48 a monthly plan reset 10 days away cools for the 7-day cap and warns once with the stated date", () => {
    const s = pooled(["opencode-go/glm-5", "opencode-go/kimi-k2.6"])
    const error = apiError(429, "Monthly usage limit reached. It will reset in 10 days 19 hours.", "https://opencode.ai/zen/go/v1/chat/completions")
    const first = record(s, { type: "error", session: "ses_c", error, model: "opencode-go/glm-5" }, T0 + 10)
    expect(first.decisions.find((d) => d.type === "cool")).toMatchObject({ models: ["opencode-go/glm-5", "opencode-go/kimi-k2.6"], reason: "quota", until: T0 + 10 + 604_800_000 })
    // T0 is 2026-12-01T09:00Z: 10 days 19 hours later is 2026-12-12T04:00Z; the cap ends 2026-12-08T09:00Z
    expect(warnings(first)).toEqual([
      "provider opencode-go stated its limit resets 2026-12-12 04:00Z (11 days away); opencode-go/glm-5, opencode-go/kimi-k2.6 cool until 2026-12-08 09:00Z, the 7-day cap, and are tried once then"
    ])
    const again = record(first.state, { type: "error", session: "ses_other", error, model: "opencode-go/kimi-k2.6" }, T0 + 60_000)
    expect(warnings(again)).toEqual([])
    expectReplayed([...first.decisions, ...again.decisions].filter((d) => d.type === "cool"))
  })

  it("US-48 a reset stated within 7 days warns nothing", () => {
    const s = pooled(["opencode-go/glm-5", "opencode-go/kimi-k2.6"])
    const error = apiError(429, "weekly usage limit reached. It will reset in 5 days 10 hours.", "https://opencode.ai/zen/go/v1/chat/completions")
    const out = record(s, { type: "error", session: "ses_c", error, model: "opencode-go/glm-5" }, T0 + 10)
    expect(out.decisions.find((d) => d.type === "cool")).toMatchObject({ until: T0 + 10 + 130 * 3_600_000 })
    expect(warnings(out)).toEqual([])
  })
})
