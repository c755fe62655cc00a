/** The fallback records of the backends (issue 12, US-50): one row per root session, shown until its original recovers. */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { decodeFallback, encodeFallback, type FallbackRecord } from "../../src/core/quota/fallbackRecord.js"
import { renderStatus, statusView } from "../../src/core/status.js"
import { fallbacksInMemory } from "../../src/layers/state/memoryRecords.js"
import type { SqliteDb } from "../../src/layers/state/sqliteDriver.js"
import { sqlFallbacks } from "../../src/layers/state/sqlRecords.js"
import { execOnDb, migratedDb } from "../support/sqliteParts.js"

const NOW = Date.parse("2026-12-01T12:00:00Z")
const onDb = (db: SqliteDb) => sqlFallbacks(execOnDb(db))

const REC: FallbackRecord = { session: "ses_a", original: "zen/a", active: "go/b", until: NOW + 300_000, at: NOW }

describe("fallback records in the state database (issue 32)", () => {
  it.effect("US-50 a switch round-trips through its row and is shown until the original recovers", () =>
    Effect.gen(function* () {
      const s = onDb(migratedDb())
      yield* s.write([REC])
      expect(yield* s.readAll(NOW + 1000)).toEqual([REC])
      expect(yield* s.readAll(NOW + 300_000)).toEqual([])
    })
  )

  it.effect("US-50 remove forgets the session; unreadable rows are skipped", () =>
    Effect.gen(function* () {
      const db = migratedDb()
      const s = onDb(db)
      yield* s.write([REC, { ...REC, session: "ses_b" }])
      db.run("INSERT INTO fallbacks (session, body, until) VALUES (?, ?, ?)", ["ses_g", "{not json", NOW + 1000])
      yield* s.remove("ses_a")
      expect((yield* s.readAll(NOW)).map((r) => r.session)).toEqual(["ses_b"])
    })
  )

  it.effect("US-50 in the memory backend the records live in the process, over ones hidden", () =>
    Effect.gen(function* () {
      const s = fallbacksInMemory()
      yield* s.write([REC, { ...REC, session: "ses_old", until: NOW - 1 }])
      expect(yield* s.readAll(NOW)).toEqual([REC])
      yield* s.remove("ses_a")
      expect(yield* s.readAll(NOW)).toEqual([])
    })
  )

  it("US-50 decoding is tolerant: a bad file is undefined, never a throw", () => {
    expect(decodeFallback(encodeFallback(REC))).toEqual(REC)
    for (const bad of ["", "null", "[]", '{"session":1}', '{"session":"s","original":"a","active":"b","until":"x","at":1}']) expect(decodeFallback(bad)).toBeUndefined()
  })

  it("US-50 ocpool status shows each root session on a fallback, with the original's reset, in text and JSON", () => {
    const view = statusView({ origin: "t", slots: [], processes: [], cooldowns: new Map(), now: NOW, warnings: [], fallbacks: [REC, { ...REC, session: "ses_old", until: NOW - 1 }] })
    expect(view.fallbacks).toEqual([{ session: "ses_a", original: "zen/a", active: "go/b", until: NOW + 300_000 }])
    expect(renderStatus(view, { now: NOW, processes: [] }).split("\n")).toContain("  ses_a  zen/a → go/b  until 12:05:00Z (5m00s)")
    expect(statusView({ origin: "t", slots: [], processes: [], cooldowns: new Map(), now: NOW, warnings: [] }).fallbacks).toBeUndefined()
  })
})
