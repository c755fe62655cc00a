/** The permits file's encoding and tolerant decoding, and how a commit's changes apply to its entries. */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import type { PermitEntry } from "../../../src/core/permits/types.js"
import { decodePermits, encodePermits, PERMIT_NAME_MAX, PERMIT_REASON_MAX, PERMITS_MAX_ENTRIES } from "../../../src/layers/state/permitCodec.js"
import { applyPermitChanges } from "../../../src/layers/state/permitJudge.js"

const entry = (id: string, seq: number, more: Partial<PermitEntry> = {}): PermitEntry => ({
  id,
  token: `t-${id}`,
  budget: "heavy",
  weight: 1,
  reason: "cargo build",
  holder: { host: "h", pid: 7, startToken: "100", via: "plugin" },
  seq,
  requestedAt: 1_000,
  ...more
})

const ids = (text: string) => {
  const d = decodePermits(text)
  return d._tag === "Entries" ? d.entries.map((e) => e.id) : d.reason
}

const arbEntry: fc.Arbitrary<PermitEntry> = fc
  .record({
    id: fc.string({ minLength: 1, maxLength: 20 }),
    token: fc.string({ minLength: 1, maxLength: 40 }),
    budget: fc.constantFrom("heavy", "gpu", "network"),
    weight: fc.integer({ min: 1, max: 64 }),
    reason: fc.string({ maxLength: 40 }),
    host: fc.string({ maxLength: 30 }),
    pid: fc.integer({ min: 1, max: 4_194_304 }),
    startToken: fc.option(fc.stringMatching(/^\d{1,12}$/), { nil: null }),
    session: fc.option(fc.string({ minLength: 1, maxLength: 30 }), { nil: undefined }),
    group: fc.option(fc.record({ pgid: fc.integer({ min: 2, max: 4_194_304 }), startToken: fc.option(fc.stringMatching(/^\d{1,12}$/), { nil: null }) }), { nil: undefined }),
    via: fc.constantFrom("plugin" as const, "run" as const, "mcp" as const),
    seq: fc.nat(),
    requestedAt: fc.integer({ min: 0, max: 2e12 }),
    grantedAt: fc.option(fc.integer({ min: 0, max: 2e12 }), { nil: undefined }),
    seenAt: fc.option(fc.integer({ min: 0, max: 2e12 }), { nil: undefined }),
    ahead: fc.option(fc.nat(), { nil: undefined }),
    headSince: fc.option(fc.integer({ min: 0, max: 2e12 }), { nil: undefined })
  })
  .map(({ host, pid, startToken, session, group, via, grantedAt, seenAt, ahead, headSince, ...rest }) => ({
    ...rest,
    holder: { host, pid, startToken, via, ...(session !== undefined ? { session } : {}), ...(group !== undefined ? { group } : {}) },
    ...(grantedAt !== undefined ? { grantedAt } : {}),
    ...(seenAt !== undefined ? { seenAt } : {}),
    ...(ahead !== undefined ? { ahead } : {}),
    ...(headSince !== undefined ? { headSince } : {})
  }))

describe("permits.json", () => {
  it("US-51 every entry within its bounds reads back exactly as written (distinct ids)", () =>
    fc.assert(
      fc.property(fc.uniqueArray(arbEntry, { selector: (e) => e.id, maxLength: 8 }), (entries) => {
        expect(decodePermits(encodePermits(entries))).toEqual({ _tag: "Entries", entries })
      })
    ))

  it("US-51 a view's `gone` and fields the file does not know are not written", () => {
    const view = { ...entry("a", 1), gone: true, extra: 1 } as PermitEntry
    expect(JSON.parse(encodePermits([view])).entries[0]).toEqual(entry("a", 1))
  })

  it("US-51 a long reason is cut; an id, token or budget over its bound makes the entry invalid", () => {
    const long = "x".repeat(PERMIT_REASON_MAX + 50)
    const decoded = decodePermits(JSON.stringify({ v: 1, entries: [entry("a", 1, { reason: long })] }))
    expect(decoded._tag === "Entries" ? decoded.entries[0]?.reason : undefined).toBe(long.slice(0, PERMIT_REASON_MAX))
    const over = "y".repeat(PERMIT_NAME_MAX + 1)
    const text = JSON.stringify({ v: 1, entries: [entry(over, 1), entry("b", 2, { token: over }), entry("c", 3, { budget: over }), entry("ok", 4)] })
    expect(ids(text)).toEqual(["ok"])
  })

  it("US-51 invalid entries are skipped: bad weight, pid, seq, time, via, group; a second entry with the same id", () => {
    const bad = [
      entry("w0", 1, { weight: 0 }),
      entry("w.5", 1, { weight: 1.5 }),
      { ...entry("pid", 1), holder: { ...entry("pid", 1).holder, pid: 0 } },
      entry("seq", -1),
      entry("time", 1, { requestedAt: 1e16 }),
      { ...entry("via", 1), holder: { ...entry("via", 1).holder, via: "shell" } },
      { ...entry("group", 1), holder: { ...entry("group", 1).holder, group: { pgid: "x", startToken: null } } },
      null,
      "p-1"
    ]
    expect(ids(JSON.stringify({ v: 1, entries: [entry("a", 1), ...bad, entry("a", 9, { reason: "second" }), entry("b", 2)] }))).toEqual(["a", "b"])
  })

  it("US-51 a file that is not a version-1 permits file is unusable, with a one-line reason", () => {
    for (const text of ["", "{", "[]", '{"v":2,"entries":[]}', '{"v":1}', '{"v":1,"entries":{}}', `{"v":1,"entries":${"[".repeat(100)}${"]".repeat(100)}}`]) {
      const d = decodePermits(text)
      expect(d._tag).toBe("Unusable")
      expect(d._tag === "Unusable" ? d.reason : "").not.toMatch(/\n/)
    }
  })

  it("US-51 at most 10,000 entries are read", () => {
    const many = Array.from({ length: PERMITS_MAX_ENTRIES + 5 }, (_, i) => entry(`p-${i}`, i))
    const d = decodePermits(encodePermits(many))
    expect(d._tag === "Entries" ? [d.entries.length, d.entries.at(-1)?.id] : d).toEqual([PERMITS_MAX_ENTRIES, `p-${PERMITS_MAX_ENTRIES - 1}`])
  })
})

describe("applyPermitChanges", () => {
  const table = [entry("a", 1), entry("b", 2), entry("c", 3)]

  it("US-51 nothing to write when there are no puts and no remove names an entry", () => {
    expect(applyPermitChanges(table, { put: [], remove: [] })).toBeUndefined()
    expect(applyPermitChanges(table, { put: [], remove: ["zz"] })).toBeUndefined()
  })

  it("US-51 puts replace by id or add; removes take away; the result is in seq order", () => {
    const next = applyPermitChanges(table, { put: [entry("d", 0), entry("c", 3, { grantedAt: 5 })], remove: ["a"] })
    expect(next?.map((e) => [e.id, e.grantedAt])).toEqual([
      ["d", undefined],
      ["b", undefined],
      ["c", 5]
    ])
  })

  it("US-51 past 10,000 entries the newest (highest seq) are not kept", () => {
    const full = Array.from({ length: PERMITS_MAX_ENTRIES }, (_, i) => entry(`p-${i}`, i + 1))
    const next = applyPermitChanges(full, { put: [entry("first", 0), entry("last", PERMITS_MAX_ENTRIES + 1)], remove: [] })
    expect([next?.length, next?.[0]?.id, next?.at(-1)?.id]).toEqual([PERMITS_MAX_ENTRIES, "first", `p-${PERMITS_MAX_ENTRIES - 2}`])
  })
})
