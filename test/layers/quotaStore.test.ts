/** The quota records of the file backend (issue 12, US-48): `quota.<enc>.json` files shared by every process, written as given (the throttle is core/state/quotaMemo.ts), stale ones hidden. */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { QuotaObservation } from "../../src/core/quota/headers.js"
import { decodeQuota, encodeQuota, quotaFileName, recordOf, type QuotaRecord } from "../../src/core/quota/record.js"
import { quotaFilesOn, quotaInMemory } from "../../src/layers/state/quotaFiles.js"
import type { QuotaRecords } from "../../src/layers/state/sharedStateOver.js"

const NOW = Date.parse("2026-12-01T12:00:00Z")
const stateDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "ocpool-quota-"))
  chmodSync(dir, 0o700)
  return dir
}
const onDir = (dir: string | undefined, _pid = 1, trusted = true): QuotaRecords => quotaFilesOn(dir, trusted)

const requests = (remaining: number, limit = 100, resetAt: number | undefined = NOW + 600_000): QuotaObservation => ({
  requests: { remaining, limit, resetAt },
  tokens: undefined,
  retryAt: undefined
})

/** What one process writes for one response, unthrottled (the throttle is not the records' job). */
const record = (q: QuotaRecords, model: string, observation: QuotaObservation, now: number) => q.write([recordOf(model, observation, now)].filter((r) => r !== undefined))

describe("quota records in files", () => {
  it.live("US-48 a record round-trips through its file, written 0600 under the cooldown-style name", () => {
    const dir = stateDir()
    return Effect.gen(function* () {
      const q = onDir(dir)
      yield* record(q, "fakeB/pool-b", requests(3), NOW)
      const path = join(dir, "quota.fakeB_2fpool-b.json")
      expect(statSync(path).mode & 0o777).toBe(0o600)
      expect(decodeQuota(readFileSync(path, "utf8"))).toEqual({ model: "fakeB/pool-b", requests: { remaining: 3, limit: 100, resetAt: NOW + 600_000 }, seenAt: NOW })
      expect(yield* q.readAll(NOW + 1000)).toEqual([{ model: "fakeB/pool-b", requests: { remaining: 3, limit: 100, resetAt: NOW + 600_000 }, seenAt: NOW }])
      expect(readdirSync(dir).filter((n) => n.endsWith(".tmp"))).toEqual([])
    })
  })

  it.live("US-48 every record given is written: throttling is decided before (core/state/quotaMemo.ts)", () => {
    const dir = stateDir()
    return Effect.gen(function* () {
      const q = onDir(dir)
      const seen = () => decodeQuota(readFileSync(join(dir, quotaFileName("m/x")), "utf8"))
      yield* record(q, "m/x", requests(55), NOW)
      yield* record(q, "m/x", requests(51), NOW + 1000)
      expect(seen()?.requests?.remaining).toBe(51)
      // an observation with no figures is no record: nothing written
      yield* record(q, "other/y", { requests: undefined, tokens: undefined, retryAt: NOW + 5000 }, NOW)
      expect(existsSync(join(dir, quotaFileName("other/y")))).toBe(false)
    })
  })

  it.live("US-48 stale records are hidden and deleted in a trusted dir, left alone in an untrusted one", () => {
    const dir = stateDir()
    const passed: QuotaRecord = { model: "a/passed", requests: { remaining: 0, limit: 10, resetAt: NOW - 1 }, seenAt: NOW - 60_000 }
    const undated: QuotaRecord = { model: "b/undated", tokens: { remaining: 5 }, seenAt: NOW - 11 * 60_000 }
    const fresh: QuotaRecord = { model: "c/fresh", tokens: { remaining: 5 }, seenAt: NOW - 60_000 }
    for (const r of [passed, undated, fresh]) writeFileSync(join(dir, quotaFileName(r.model)), encodeQuota(r))
    return Effect.gen(function* () {
      expect(yield* onDir(undefined).readAll(NOW)).toEqual([])
      expect(yield* onDir(dir, 2, false).readAll(NOW)).toEqual([fresh])
      expect(readdirSync(dir).sort()).toEqual([quotaFileName(passed.model), quotaFileName(undated.model), quotaFileName(fresh.model)].sort())
      expect(yield* onDir(dir, 3, true).readAll(NOW)).toEqual([fresh])
      expect(readdirSync(dir)).toEqual([quotaFileName(fresh.model)])
    })
  })

  it.live("US-48 a garbage file, a directory under a quota name and other models' files under a wrong name are ignored", () => {
    const dir = stateDir()
    const good: QuotaRecord = { model: "z/good", requests: { remaining: 7, limit: 10 }, seenAt: NOW }
    writeFileSync(join(dir, quotaFileName("z/good")), encodeQuota(good))
    writeFileSync(join(dir, "quota.garbage.json"), "\u0000not json{")
    writeFileSync(join(dir, "quota.elsewhere.json"), encodeQuota({ ...good, model: "z/other" }))
    writeFileSync(join(dir, "cooldown.z_2fgood.json"), "{}")
    mkdirSync(join(dir, "quota.dir.json"))
    return Effect.gen(function* () {
      expect(yield* onDir(dir, 1, false).readAll(NOW)).toEqual([good])
    })
  })

  it.live("US-48 two processes' writes are both visible to each, sorted by model", () => {
    const dir = stateDir()
    return Effect.gen(function* () {
      yield* record(onDir(dir, 1), "zen/alpha", requests(80), NOW)
      yield* record(onDir(dir, 2), "go/gamma", { requests: undefined, tokens: { remaining: 9000, limit: 10_000, resetAt: undefined }, retryAt: undefined }, NOW)
      for (const pid of [1, 2]) expect((yield* onDir(dir, pid).readAll(NOW + 100)).map((r) => r.model)).toEqual(["go/gamma", "zen/alpha"])
    })
  })

  it.live("US-48 a state dir that cannot be written: the write does not fail", () => {
    const dir = join(stateDir(), "gone")
    return Effect.gen(function* () {
      const q = onDir(dir)
      yield* record(q, "m/x", requests(50), NOW)
      expect(yield* q.readAll(NOW)).toEqual([])
    })
  })

  it.effect("US-48 without a state dir the records live in the process, stale ones hidden", () =>
    Effect.gen(function* () {
      const q = onDir(undefined)
      yield* record(q, "m/x", requests(50, 100, NOW + 1000), NOW)
      yield* record(q, "a/y", requests(5, 10, undefined), NOW)
      expect((yield* q.readAll(NOW + 10)).map((r) => r.model)).toEqual(["a/y", "m/x"])
      expect((yield* q.readAll(NOW + 1000)).map((r) => r.model)).toEqual(["a/y"])
    })
  )
})

describe("quota records in memory", () => {
  it.effect("US-48 two processes on one table see each other's records", () => {
    const table = new Map<string, QuotaRecord>()
    return Effect.gen(function* () {
      yield* record(quotaInMemory(table), "m/x", requests(55), NOW)
      yield* record(quotaInMemory(table), "n/y", requests(1, 10, NOW + 50), NOW)
      expect((yield* quotaInMemory(table).readAll(NOW + 20)).map((r) => r.model)).toEqual(["m/x", "n/y"])
      expect((yield* quotaInMemory(table).readAll(NOW + 50)).map((r) => r.model)).toEqual(["m/x"])
    })
  })
})
