import { describe, expect, it } from "@effect/vitest"
import type { Claim } from "../../src/core/pool/claims.js"
import type { CooldownTable } from "../../src/core/pool/cooldown.js"
import type { Slot } from "../../src/core/pool/pool.js"
import { renderStatus, statusView, type ProcessSnapshot } from "../../src/core/status.js"
import { makeClaim, pool, run, T0, trace } from "../helpers.js"

const NOW = T0
const slot = (index: number, model: string, weight: number): Slot => ({ index, model, provider: model.split("/")[0]!, weight })
const claim = (key: string, model: string, base = "explore", heartbeatAt = NOW): Claim => makeClaim(key, model, base, NOW - 1_000, heartbeatAt)
const proc = (pid: number, claims: ReadonlyArray<Claim>, reaped = 0, self = false): ProcessSnapshot => ({ pid, host: "devbox", reaped, claims, self })
const view = (slots: ReadonlyArray<Slot>, processes: ReadonlyArray<ProcessSnapshot>, cooldowns: CooldownTable = new Map()) =>
  statusView({ origin: "presets/free-tier.json", slots, processes, cooldowns, now: NOW, warnings: [] })

describe("status view (SPEC §9)", () => {
  it("US-6 loads sum over processes, byBase splits them, and every process is listed", () => {
    const v = view([slot(1, "zen/a", 3), slot(2, "go/b", 1)], [proc(10, [claim("p:1", "zen/a"), claim("p:2", "zen/a", "implement")]), proc(11, [claim("q:1", "zen/a"), claim("q:2", "go/b", "context")], 2)])
    expect(v.slots.map((s) => [s.load, s.cap, s.byBase])).toEqual([
      [3, 6, { explore: 2, implement: 1 }],
      [1, 2, { context: 1 }]
    ])
    expect(v.processes).toEqual([
      { pid: 10, host: "devbox", claims: 2, reaped: 0 },
      { pid: 11, host: "devbox", claims: 2, reaped: 2 }
    ])
    expect(v.claims).toBe(4)
    expect(v.reaped).toBe(2)
  })

  it("US-6 a model cooling at strike 2 shows the reason, strike, reset time and remaining seconds", () => {
    const cooldowns: CooldownTable = new Map([["zen/a", { model: "zen/a", reason: "rate_limit", strikes: 2, scope: "model", since: NOW, until: NOW + 120_000, source: "backoff" }]])
    const v = view([slot(1, "zen/a", 1), slot(2, "go/b", 1)], [], cooldowns)
    expect(v.slots[0]!.cooling).toEqual({ until: NOW + 120_000, reason: "rate_limit", strikes: 2 })
    const text = renderStatus(v, { now: NOW, processes: [] })
    expect(text).toContain("COOLING rate_limit strike 2 until 09:02:00Z (2m00s)")
    expect(text).toMatch(/2\. go\/b .* <- next \(first pass\)/)
  })

  it("US-6 next: [1,1] with 4 claims is slot 1 overflow, with 2 claims slot 1 second; [2,1] with loads [4,1] is slot 2 second", () => {
    const ab = [slot(1, "zen/a", 1), slot(2, "go/b", 1)]
    const four = [claim("1", "zen/a"), claim("2", "zen/a"), claim("3", "go/b"), claim("4", "go/b")]
    expect(view(ab, [proc(1, four)]).next).toEqual({ slot: 1, model: "zen/a", pass: "overflow" })
    expect(view(ab, [proc(1, [four[0]!, four[2]!])]).next).toEqual({ slot: 1, model: "zen/a", pass: "second" })
    const loads41 = [claim("1", "zen/a"), claim("2", "zen/a"), claim("3", "zen/a"), claim("4", "zen/a"), claim("5", "go/b")]
    expect(view([slot(1, "zen/a", 2), slot(2, "go/b", 1)], [proc(1, loads41)]).next).toEqual({ slot: 2, model: "go/b", pass: "second" })
  })

  it("US-6 asking for the status 5 times before a spawn does not change its route", () => {
    const P = pool(T0, ["zen/a", 2], ["go/b", 1])
    const spawns = [1, 2, 3].map((i) => ({ at: T0 + i, type: "spawn", claim: `c${i}`, base: "explore" }))
    const without = run(trace(P, ...spawns))
    const statuses = [1, 2, 3, 4, 5].map(() => ({ at: T0 + 2, type: "status" }))
    const withStatus = run(trace(P, spawns[0]!, spawns[1]!, ...statuses, spawns[2]!)).filter((d) => d.type === "route")
    expect(withStatus).toEqual(without)
  })

  it("US-6 claims past their TTL are not counted; the text view marks this process and shows the reaper line", () => {
    const v = view([slot(1, "zen/a", 1)], [proc(7, [claim("p:1", "zen/a", "explore", NOW - 11 * 60_000)], 0, true)])
    expect(v.slots[0]!.load).toBe(0)
    const text = renderStatus(v, { now: NOW, processes: [proc(7, [], 0, true)], reaper: { intervalMs: 30_000, lastSweepAt: undefined } })
    expect(text).toContain("pool from presets/free-tier.json; bases explore, implement, context")
    expect(text).toContain("process 7@devbox (this process): 0 claims, reaped 0")
    expect(text).toContain("reaper: every 30s, last sweep never, reaped 0")
  })

  it("US-44 unavailable and auth cooldowns read UNAVAILABLE and AUTH FAILED with their reset time", () => {
    const cd = (model: string, reason: "unavailable" | "auth", until: number) => [model, { model, reason, strikes: 0, scope: "model" as const, since: NOW, until, source: "flat" as const }] as const
    const v = view([slot(1, "zen/a", 1), slot(2, "go/b", 1)], [], new Map([cd("zen/a", "unavailable", NOW + 6 * 3_600_000), cd("go/b", "auth", NOW + 900_000)]))
    const text = renderStatus(v, { now: NOW, processes: [] })
    expect(text).toContain("UNAVAILABLE until 15:00:00Z (6h00m)")
    expect(text).toContain("AUTH FAILED until 09:15:00Z (15m00s)")
    expect(text).toMatch(/1\. zen\/a .* <- next \(overflow\)/)
  })

  it("US-44 a free tier refused to pooled work reads REFUSED (free tier) with its end, and no strike (issue 35)", () => {
    const entry = ["opencode/big-pickle", { model: "opencode/big-pickle", reason: "entitlement" as const, strikes: 0, scope: "provider" as const, since: NOW, until: NOW + 3_600_000, source: "flat" as const }] as const
    const text = renderStatus(view([slot(1, "opencode/big-pickle", 1)], [], new Map([entry])), { now: NOW, processes: [] })
    expect(text).toContain("REFUSED (free tier) until 10:00:00Z (1h00m)")
    expect(text).not.toContain("strike")
  })
})

describe("status text from hostile state files", () => {
  it("US-6 claim keys, sessions, hosts and warnings from files reach the terminal with no escape sequence or control character", () => {
    const hostile = { ...claim("\u001b]0;pwned\u0007key\u0085", "zen/a"), targetSession: "ses_\u001b[2J\u0000" }
    const p: ProcessSnapshot = { pid: 9, host: "evil\u001b[31mhost", reaped: 0, claims: [hostile] }
    const v = statusView({ origin: "pool\u009b31m.txt", slots: [slot(1, "zen/a", 1)], processes: [p], cooldowns: new Map(), now: NOW, warnings: ["bad \u0007 bell"] })
    const text = renderStatus(v, { now: NOW, processes: [p] })
    // eslint-disable-next-line no-control-regex
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/)
    expect(text).toContain("    key\\x85  explore-1 zen/a  ses_\\x00  age")
    expect(text).toContain("process 9@evilhost:")
    expect(text).toContain("warning: bad \\x07 bell")
  })
})
