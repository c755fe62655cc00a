/** The quota section of the status view (issue 12, US-48): shown only when a record is not stale; nothing changes without one. */
import { describe, expect, it } from "@effect/vitest"
import type { Slot } from "../../../src/core/pool/pool.js"
import type { QuotaRecord } from "../../../src/core/quota/record.js"
import { quotaEntry, quotaLine, renderStatus, statusView } from "../../../src/core/status.js"

const NOW = Date.parse("2026-12-01T15:25:50Z")
const slots: ReadonlyArray<Slot> = [{ index: 1, model: "fakeA/pool-a", provider: "fakeA", weight: 1 }]
const view = (quota?: ReadonlyArray<QuotaRecord>) =>
  statusView({ origin: "presets/free-tier.json", slots, processes: [], cooldowns: new Map(), now: NOW, warnings: ["w"], ...(quota !== undefined ? { quota } : {}) })
const B: QuotaRecord = {
  model: "fakeB/pool-b",
  requests: { remaining: 3, limit: 100, resetAt: Date.parse("2026-12-01T15:30:00Z") },
  tokens: { remaining: 9000, limit: 10_000 },
  seenAt: NOW - 12_000
}

describe("status: quota records", () => {
  it("US-48 one line per record: remaining/limit (percent), reset clock and countdown, seen ago", () => {
    expect(quotaLine(quotaEntry(B), NOW)).toBe("fakeB/pool-b  requests 3/100 (3%) reset 15:30:00Z (in 4m10s)  tokens 9000/10000 (90%)  seen 12s ago")
    expect(quotaLine(quotaEntry({ model: "m", tokens: { remaining: 7, resetAt: NOW - 1 }, seenAt: NOW }), NOW)).toBe("m  tokens 7 reset 15:25:49Z (passed)  seen 0s ago")
  })

  it("US-48 without records, or with only stale ones, the view and its text are exactly what they were", () => {
    const before = view()
    const stale: QuotaRecord = { ...B, requests: { remaining: 0, resetAt: NOW - 1 }, tokens: { remaining: 1, resetAt: NOW - 5 } }
    for (const quota of [[], [stale]]) {
      expect(view(quota)).toEqual(before)
      expect(Object.hasOwn(view(quota), "quota")).toBe(false)
      expect(renderStatus(view(quota), { now: NOW, processes: [] })).toBe(renderStatus(before, { now: NOW, processes: [] }))
    }
  })

  it("US-48 with a record, a quota: section follows the slots and the JSON gains a quota array", () => {
    const v = view([B])
    expect(v.quota).toEqual([{ model: "fakeB/pool-b", requests: { remaining: 3, limit: 100, resetAt: B.requests!.resetAt }, tokens: { remaining: 9000, limit: 10_000, resetAt: null }, seenAt: B.seenAt }])
    const lines = renderStatus(v, { now: NOW, processes: [] }).split("\n")
    const at = lines.indexOf("quota:")
    expect(lines[at - 1]).toMatch(/^ {2}1\. fakeA\/pool-a/)
    expect(lines[at + 1]).toBe("  fakeB/pool-b  requests 3/100 (3%) reset 15:30:00Z (in 4m10s)  tokens 9000/10000 (90%)  seen 12s ago")
    expect(lines[at + 2]).toBe("warning: w")
  })

  it("US-48 a limit of 0, a remaining above the limit or huge figures never print Infinity% or NaN%: the percent is left out", () => {
    const line = (f: { remaining: number; limit: number }) => quotaLine({ model: "m", requests: { ...f, resetAt: null }, tokens: null, seenAt: NOW }, NOW)
    expect(line({ remaining: 5, limit: 0 })).toBe("m  requests 5/0  seen 0s ago")
    expect(line({ remaining: 0, limit: 0 })).toBe("m  requests 0/0  seen 0s ago")
    expect(line({ remaining: 1.5e308, limit: 1.6e308 })).not.toMatch(/Infinity|NaN/)
    expect(line({ remaining: 150, limit: 100 })).toBe("m  requests 150/100  seen 0s ago")
    expect(line({ remaining: 100, limit: 100 })).toBe("m  requests 100/100 (100%)  seen 0s ago")
    expect(line({ remaining: 5, limit: 1e-300 })).not.toMatch(/%/)
  })

  it("US-48 a reset more than 7 days out is not printed; a record with one, or seen in the future, is stale and left out of the view", () => {
    const far = quotaLine({ model: "m", requests: { remaining: 3, limit: 100, resetAt: 8.64e15 }, tokens: null, seenAt: NOW }, NOW)
    expect(far).toBe("m  requests 3/100 (3%)  seen 0s ago")
    const garbage: ReadonlyArray<QuotaRecord> = [
      { ...B, requests: { remaining: 3, limit: 100, resetAt: 8.64e15 } },
      { ...B, model: "fakeC/c", seenAt: NOW + 60_000 }
    ]
    expect(view(garbage)).toEqual(view())
  })

  it("US-48 a model name with control characters is shown escaped", () => {
    const text = renderStatus(view([{ ...B, model: "evil/\u001b[31mred" }]), { now: NOW, processes: [] })
    expect(text).not.toContain("\u001b")
  })
})
