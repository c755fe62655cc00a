/** The quota records (issue 12, US-48): rows of the state database shared by every process, written as given (the throttle is core/state/quotaMemo.ts), stale ones hidden. */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { QuotaObservation } from "../../src/core/quota/headers.js"
import { decodeQuota, encodeQuota, recordOf, type QuotaRecord } from "../../src/core/quota/record.js"
import { quotaInMemory } from "../../src/layers/state/memoryRecords.js"
import { sqlQuota } from "../../src/layers/state/sqlRecords.js"
import { execOnDb, migratedDb } from "../support/sqliteParts.js"
import type { SqliteDb } from "../../src/layers/state/sqliteDriver.js"
import type { QuotaRecords } from "../../src/layers/state/sharedStateOver.js"

const NOW = Date.parse("2026-12-01T12:00:00Z")
const onDb = (db: SqliteDb): QuotaRecords => sqlQuota(execOnDb(db))

const requests = (remaining: number, limit = 100, resetAt: number | undefined = NOW + 600_000): QuotaObservation => ({
  requests: { remaining, limit, resetAt },
  tokens: undefined,
  retryAt: undefined
})

/** What one process writes for one response, unthrottled (the throttle is not the records' job). */
const record = (q: QuotaRecords, model: string, observation: QuotaObservation, now: number) => q.write([recordOf(model, observation, now)].filter((r) => r !== undefined))

describe("quota records in the state database (issue 32)", () => {
  it.effect("US-48 a record round-trips through its row, as its encoding", () =>
    Effect.gen(function* () {
      const db = migratedDb()
      const q = onDb(db)
      yield* record(q, "fakeB/pool-b", requests(3), NOW)
      const rows = db.all<{ model: string; body: string }>("SELECT model, body FROM quota")
      expect(rows.map((r) => [r.model, decodeQuota(r.body)])).toEqual([["fakeB/pool-b", { model: "fakeB/pool-b", requests: { remaining: 3, limit: 100, resetAt: NOW + 600_000 }, seenAt: NOW }]])
      expect(yield* q.readAll(NOW + 1000)).toEqual([{ model: "fakeB/pool-b", requests: { remaining: 3, limit: 100, resetAt: NOW + 600_000 }, seenAt: NOW }])
    })
  )

  it.effect("US-48 every record given is written: throttling is decided before (core/state/quotaMemo.ts)", () =>
    Effect.gen(function* () {
      const db = migratedDb()
      const q = onDb(db)
      yield* record(q, "m/x", requests(55), NOW)
      yield* record(q, "m/x", requests(51), NOW + 1000)
      expect((yield* q.readAll(NOW + 1000)).map((r) => r.requests?.remaining)).toEqual([51])
      // an observation with no figures is no record: nothing written
      yield* record(q, "other/y", { requests: undefined, tokens: undefined, retryAt: NOW + 5000 }, NOW)
      expect(db.all("SELECT model FROM quota")).toEqual([{ model: "m/x" }])
    })
  )

  it.effect("US-48 stale records are hidden; a garbage row and a record under another model's key are ignored", () =>
    Effect.gen(function* () {
      const db = migratedDb()
      const passed: QuotaRecord = { model: "a/passed", requests: { remaining: 0, limit: 10, resetAt: NOW - 1 }, seenAt: NOW - 60_000 }
      const undated: QuotaRecord = { model: "b/undated", tokens: { remaining: 5 }, seenAt: NOW - 11 * 60_000 }
      const fresh: QuotaRecord = { model: "c/fresh", tokens: { remaining: 5 }, seenAt: NOW - 60_000 }
      yield* onDb(db).write([passed, undated, fresh])
      db.run("INSERT INTO quota (model, body, seen_at) VALUES (?, ?, ?)", ["z/garbage", "\u0000not json{", NOW])
      db.run("INSERT INTO quota (model, body, seen_at) VALUES (?, ?, ?)", ["z/elsewhere", encodeQuota({ ...fresh, model: "z/other" }), NOW])
      expect(yield* onDb(db).readAll(NOW)).toEqual([fresh])
    })
  )

  it.effect("US-48 two processes' writes are both visible to each, sorted by model", () =>
    Effect.gen(function* () {
      const db = migratedDb()
      yield* record(onDb(db), "zen/alpha", requests(80), NOW)
      yield* record(onDb(db), "go/gamma", { requests: undefined, tokens: { remaining: 9000, limit: 10_000, resetAt: undefined }, retryAt: undefined }, NOW)
      expect((yield* onDb(db).readAll(NOW + 100)).map((r) => r.model)).toEqual(["go/gamma", "zen/alpha"])
    })
  )

  it.effect("US-48 a database that cannot be written: the write does not fail, the read is empty", () =>
    Effect.gen(function* () {
      const db = migratedDb()
      db.exec("DROP TABLE quota")
      const q = onDb(db)
      yield* record(q, "m/x", requests(50), NOW)
      expect(yield* q.readAll(NOW)).toEqual([])
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
