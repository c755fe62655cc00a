/** The context map's persisted record (epic G, US-20): file names, encoding, and a decoding that keeps what it can. */
import { describe, expect, it } from "@effect/vitest"
import { PENDING_MAX } from "../../../src/core/context/map.js"
import {
  decodeQueued,
  decodeRecord,
  emptyRecord,
  encodeQueued,
  encodeRecord,
  projectFileKey,
  queueFileName,
  recordFileName,
  type ContextRecord
} from "../../../src/core/context/record.js"
import { STATE_FILE_MAX_BYTES } from "../../../src/core/readLimits.js"

const T = Date.parse("2026-12-01T12:00:00Z")

const FULL: ContextRecord = {
  root: "/home/u/proj",
  writtenAt: T,
  pending: ["src/a.ts", "src/b.ts"],
  dropped: 3,
  lastStartedAt: T - 60_000,
  inFlight: { run: "r2", kind: "update", session: "ses_x", startedAt: T - 5000, paths: ["src/c.ts"], host: "devbox", pid: 4242 },
  lastRun: { run: "r1", kind: "bootstrap", startedAt: T - 900_000, endedAt: T - 800_000, outcome: "failed", paths: 4, reason: "session error" },
  maxBytes: 40_000
}

const json = (over: Record<string, unknown>): string => JSON.stringify({ ...JSON.parse(encodeRecord(FULL)), ...over })

describe("context record: names", () => {
  it("US-20 one record and one marker per project, named by the root encoded as cooldown files encode a model", () => {
    expect(recordFileName("/home/u/proj")).toBe("context._2fhome_2fu_2fproj.json")
    expect(queueFileName("/home/u/proj")).toBe("context._2fhome_2fu_2fproj.queued")
    expect(recordFileName("/home/u/my proj")).toBe("context._2fhome_2fu_2fmy_20proj.json")
    expect(recordFileName("/a")).not.toBe(recordFileName("/b"))
  })

  it("US-20 a root too long for a file name is cut and ends with its hash: distinct roots stay distinct, names stay under 255 bytes", () => {
    const deep = (leaf: string) => `/${"very-long-directory-name/".repeat(12)}${leaf}`
    const a = recordFileName(deep("a"))
    const b = recordFileName(deep("b"))
    expect(a).not.toBe(b)
    expect(`${a}.tmp`.length).toBeLessThanOrEqual(255)
    expect(projectFileKey(deep("a"))).toMatch(/-[0-9a-f]{8}$/)
    expect(projectFileKey(deep("a"))).toBe(projectFileKey(deep("a")))
  })

  it("US-20 the names use only the characters of the state directory's other per-key files (any root, any byte)", () => {
    expect(recordFileName("/home/ü/p r")).toMatch(/^context\.[A-Za-z0-9._-]+\.json$/)
    expect(queueFileName("/home/ü/p r")).toMatch(/^context\.[A-Za-z0-9._-]+\.queued$/)
    expect(recordFileName("/tmp/\u0007\n/..")).toMatch(/^context\.[A-Za-z0-9._-]+\.json$/)
  })
})

describe("context record: encode and decode", () => {
  it("US-20 a record round-trips; the body carries version 1 and every field", () => {
    expect(decodeRecord(encodeRecord(FULL))).toEqual(FULL)
    expect(JSON.parse(encodeRecord(FULL))).toMatchObject({ version: 1, root: "/home/u/proj", dropped: 3 })
    expect(decodeRecord(encodeRecord(emptyRecord("/p")))).toEqual(emptyRecord("/p"))
    const { reason: _r, ...noReason } = FULL.lastRun!
    expect(decodeRecord(encodeRecord({ ...FULL, lastRun: noReason }))?.lastRun).toEqual(noReason)
  })

  it.each([
    ["not JSON", "{nope"],
    ["an array", "[]"],
    ["no root", JSON.stringify({ version: 1, pending: ["a"] })],
    ["a relative root", JSON.stringify({ root: "proj" })],
    ["an empty root", JSON.stringify({ root: "" })],
    ["a root that is a number", JSON.stringify({ root: 7 })],
    ["empty text", ""]
  ])("US-20 an unusable file (%s) is no record", (_what, text) => {
    expect(decodeRecord(text)).toBeUndefined()
  })

  it.each<[string, Record<string, unknown>, Partial<ContextRecord>]>([
    ["a bad writtenAt", { writtenAt: "soon" }, { writtenAt: 0 }],
    ["a writtenAt beyond the date range", { writtenAt: 1e300 }, { writtenAt: 0 }],
    ["pending not an array", { pending: "src/a.ts" }, { pending: [] }],
    ["pending with junk, empties and repeats", { pending: ["a", 3, "", null, "b", "a"] }, { pending: ["a", "b"] }],
    ["a negative dropped", { dropped: -1 }, { dropped: 0 }],
    ["a fractional dropped", { dropped: 1.5 }, { dropped: 0 }],
    ["a bad lastStartedAt", { lastStartedAt: "x" }, { lastStartedAt: null }],
    ["inFlight without a run id", { inFlight: { kind: "update", startedAt: T } }, { inFlight: null }],
    ["inFlight of an unknown kind", { inFlight: { run: "r", kind: "later", startedAt: T } }, { inFlight: null }],
    ["inFlight not an object", { inFlight: 5 }, { inFlight: null }],
    ["lastRun with an unknown outcome", { lastRun: { ...FULL.lastRun, outcome: "meh" } }, { lastRun: null }],
    ["lastRun without endedAt", { lastRun: { run: "r", kind: "update", startedAt: T, outcome: "ok" } }, { lastRun: null }]
  ])("US-20 a bad field (%s) takes its default, the rest is kept", (_what, over, expected) => {
    expect(decodeRecord(json(over))).toEqual({ ...FULL, ...expected })
  })

  it("US-20 inFlight's optional fields take their defaults: no session, no paths, unknown host and pid (0)", () => {
    const r = decodeRecord(json({ inFlight: { run: "r9", kind: "bootstrap", startedAt: T, session: 4, paths: "x", host: null, pid: -2 } }))
    expect(r?.inFlight).toEqual({ run: "r9", kind: "bootstrap", session: null, startedAt: T, paths: [], host: "", pid: 0 })
    const l = decodeRecord(json({ lastRun: { run: "r", kind: "update", startedAt: T, endedAt: T + 1, outcome: "unchanged", paths: "many", reason: 7 } }))
    expect(l?.lastRun).toEqual({ run: "r", kind: "update", startedAt: T, endedAt: T + 1, outcome: "unchanged", paths: 0 })
  })

  it("US-20 pending paths beyond PENDING_MAX are counted as dropped, the oldest kept", () => {
    const many = Array.from({ length: PENDING_MAX + 7 }, (_, i) => `f${i}`)
    const r = decodeRecord(json({ pending: many, dropped: 2 }))
    expect(r?.pending).toHaveLength(PENDING_MAX)
    expect(r?.pending[0]).toBe("f0")
    expect(r?.dropped).toBe(9)
  })

  it("US-20 a record too large for the state-file cap loses its newest pending paths, counted in dropped, and stays readable", () => {
    const long = (i: number) => `src/${"deep/".repeat(40)}file-${i}.ts`
    const pending = Array.from({ length: PENDING_MAX }, (_, i) => long(i))
    const text = encodeRecord({ ...FULL, pending, dropped: 0 })
    expect(new TextEncoder().encode(text).length).toBeLessThanOrEqual(STATE_FILE_MAX_BYTES)
    const back = decodeRecord(text)!
    expect(back.pending.length).toBeLessThan(PENDING_MAX)
    expect(back.pending).toEqual(pending.slice(0, back.pending.length))
    expect(back.dropped).toBe(PENDING_MAX - back.pending.length)
    expect(back.inFlight).toEqual(FULL.inFlight)
  })
})

describe("context record: the refresh marker", () => {
  it("US-22 the marker holds when the refresh was asked for; an unusable body reads as undefined", () => {
    expect(decodeQueued(encodeQueued(T))).toBe(T)
    expect(encodeQueued(T)).toBe(`{"at":${T}}`)
    for (const bad of ["", "{}", '{"at":"now"}', "[1]", '{"at":1e300}']) expect(decodeQueued(bad)).toBeUndefined()
  })
})
