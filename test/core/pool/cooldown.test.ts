import { describe, expect, it } from "@effect/vitest"
import { applyCool, clearOnSuccess, type Cooldown, type CooldownTable, decideLimit, isCooling, mergePeer, nextStrike, planCool } from "../../../src/core/pool/cooldown.js"
import type { Slot } from "../../../src/core/pool/pool.js"

const NOW = Date.parse("2026-12-01T12:00:00Z")
const slots: ReadonlyArray<Slot> = [
  { index: 1, model: "zen/alpha", provider: "zen", weight: 2 },
  { index: 2, model: "zen/beta", provider: "zen", weight: 1 },
  { index: 3, model: "go/gamma", provider: "go", weight: 1 }
]
const record = (model: string, fields: Partial<Cooldown>): Cooldown => ({
  model,
  reason: "rate_limit",
  strikes: 1,
  scope: "model",
  since: NOW - 60_000,
  until: NOW,
  source: "backoff",
  ...fields
})

/** Handles a limit text on a model and returns the new table and the cool plan. */
const hit = (table: CooldownTable, text: string, now: number, extra: { status?: number; model?: string; provider?: string; headers?: Record<string, unknown> } = {}) => {
  const d = decideLimit(slots, table, { text, model: "zen/alpha", ...extra }, now)
  if (d._tag !== "Cool") return { table, plan: undefined }
  return { table: applyCool(table, d.plan, now), plan: d.plan }
}

describe("cooldowns (SPEC §7.5)", () => {
  it("US-4 a 429 'Slow down' cools the model: reason rate_limit, strike 1, until now + 60 s", () => {
    const { plan, table } = hit(new Map(), '{"name":"APIError","data":{"statusCode":429,"message":"Slow down"}}', NOW, { status: 429 })
    expect(plan).toMatchObject({ reason: "rate_limit", strike: 1, until: NOW + 60_000, scope: "model", models: ["zen/alpha"] })
    expect(table.get("zen/alpha")).toMatchObject({ reason: "rate_limit", strikes: 1, until: NOW + 60_000 })
  })

  it("US-4 five hits with no time passing give 60, 120, 240, 480, 900 s, and a sixth 900 s", () => {
    let table: CooldownTable = new Map()
    const windows: Array<number> = []
    for (let i = 0; i < 6; i++) {
      const r = hit(table, "Rate limit exceeded", NOW)
      table = r.table
      windows.push((r.plan!.until - NOW) / 1000)
    }
    expect(windows).toEqual([60, 120, 240, 480, 900, 900])
    expect(table.get("zen/alpha")?.strikes).toBe(6)
  })

  it("US-4 strike-2 cooldowns that ended 31 and 29 min ago give strikes 1 and 3", () => {
    expect(nextStrike(record("a", { strikes: 2, until: NOW - 31 * 60_000 }), NOW)).toBe(1)
    expect(nextStrike(record("b", { strikes: 2, until: NOW - 29 * 60_000 }), NOW)).toBe(3)
    expect(nextStrike(record("c", { strikes: 2, until: NOW - 30 * 60_000 }), NOW)).toBe(3)
  })

  it("US-4 a success after the cooldown ended resets the strikes; during the cooldown it does not", () => {
    const table: CooldownTable = new Map([["zen/alpha", record("zen/alpha", { strikes: 3, until: NOW + 1_000 })]])
    expect(clearOnSuccess(table, "zen/alpha", NOW)).toBe(table)
    const cleared = clearOnSuccess(table, "zen/alpha", NOW + 2_000)
    expect(cleared.has("zen/alpha")).toBe(false)
    expect(hit(cleared, "Rate limit exceeded", NOW + 3_000).plan?.strike).toBe(1)
  })

  it("US-31 an outage cools for exactly 30 s at strike 0, and the next real limit after it starts at strike 1", () => {
    const outage = hit(new Map(), "503 Service Unavailable", NOW, { status: 503 })
    expect(outage.plan).toMatchObject({ reason: "outage", strike: 0, until: NOW + 30_000 })
    expect(outage.table.get("zen/alpha")?.strikes).toBe(0)
    const limit = hit(outage.table, "Rate limit exceeded", NOW + 40_000)
    expect(limit.plan).toMatchObject({ reason: "rate_limit", strike: 1, until: NOW + 100_000 })
  })

  it("US-44 a model cooling from a 2-hour stated reset keeps its until through an outage or auth signal", () => {
    const stated = hit(new Map(), "Rate limited, resets in 2 hours", NOW)
    const until = stated.table.get("zen/alpha")!.until
    expect(until).toBe(NOW + 7_200_000)
    const afterOutage = hit(stated.table, "overloaded", NOW + 1_000)
    expect(afterOutage.table.get("zen/alpha")!.until).toBe(until)
    const afterAuth = hit(afterOutage.table, "x", NOW + 2_000, { status: 401 })
    expect(afterAuth.table.get("zen/alpha")).toMatchObject({ until, reason: "rate_limit" })
    // the other zen slot had no cooldown: auth cools it for 15 min
    expect(afterAuth.table.get("zen/beta")).toMatchObject({ reason: "auth", until: NOW + 2_000 + 900_000, strikes: 0 })
  })

  it("US-8 a hang never shortens or re-strikes a cooling model; it applies only to a model that is not cooling", () => {
    const stated = hit(new Map(), "Rate limit: resets in 30min", NOW).table
    expect(stated.get("zen/alpha")?.until).toBe(NOW + 1_800_000)
    const hang = planCool(stated, ["zen/alpha"], "model", "hang", NOW + 60_000, undefined)
    expect(hang).toMatchObject({ strike: 0, until: NOW + 660_000 })
    const after = applyCool(stated, hang, NOW + 60_000)
    expect(after.get("zen/alpha")).toEqual(stated.get("zen/alpha"))
    const fresh = applyCool(new Map(), hang, NOW + 60_000)
    expect(fresh.get("zen/alpha")).toMatchObject({ reason: "hang", strikes: 0, until: NOW + 660_000 })
  })

  it("US-4 an escalating limit keeps a longer live cooldown's end but records the new strike", () => {
    const long = hit(new Map(), "Too many requests; resets in 2 hours", NOW).table
    const again = hit(long, "Rate limit exceeded", NOW + 1_000)
    expect(again.plan?.until).toBe(NOW + 1_000 + 120_000)
    expect(again.table.get("zen/alpha")).toMatchObject({ strikes: 2, until: NOW + 7_200_000 })
  })

  it("US-4 a peer cooldown replaces a live record that ends earlier with strikes 0; an ended one is ignored", () => {
    const table: CooldownTable = new Map([["zen/alpha", record("zen/alpha", { strikes: 2, until: NOW + 10_000 })]])
    expect(mergePeer(table, { model: "zen/alpha", until: NOW, reason: "quota" }, NOW)).toBe(table)
    expect(mergePeer(table, { model: "zen/alpha", until: NOW + 5_000, reason: "quota" }, NOW)).toBe(table)
    const merged = mergePeer(table, { model: "zen/alpha", until: NOW + 50_000, reason: "quota" }, NOW)
    expect(merged.get("zen/alpha")).toMatchObject({ reason: "quota", strikes: 0, until: NOW + 50_000 })
    expect(isCooling(merged.get("zen/alpha"), NOW + 49_999)).toBe(true)
    expect(isCooling(merged.get("zen/alpha"), NOW + 50_000)).toBe(false)
  })
})
