/** The lines the sweeps leave in the data directory, exactly as SPEC §5.6 lists them (US-32, US-33). */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { memoryLines } from "../../src/layers/retention/RetentionLogMemory.js"
import { readArchiveLine } from "../../src/core/retention/records.js"
import { tempDb, type TempDb } from "./opencodeDb.js"
import { DAY, HOUR, NOW, runEvents, runSessions } from "./run.js"

const withDb = <A, E, R>(body: (t: TempDb) => Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => tempDb()),
    body,
    (t) => Effect.sync(() => t.dispose())
  )

const SESSION_RUN_KEYS = [
  "ts",
  "days",
  "graceHours",
  "directory",
  "limit",
  "cutoffCreated",
  "cutoffUpdated",
  "roots",
  "sessions",
  "protected",
  "remainingRoots",
  "rows",
  "noEvents",
  "dryRun",
  "vacuumed",
  "elapsedMs"
]

describe("retention records (SPEC §5.6)", () => {
  it.effect("US-32.9 an archive line has the spec's keys in order, and created, updated and retiredAt are epoch ms", () =>
    withDb((t) =>
      Effect.gen(function* () {
        const root = t.db.session({ created: NOW - 40 * DAY, updated: NOW - 39 * DAY, title: "old work", directory: "/work/x" })
        const child = t.db.session({ created: NOW - 40 * DAY + 5, parentId: root, title: "sub" })
        const lines = memoryLines()
        yield* runSessions(t.path, {}, { lines })
        const records = lines.archive.map((l) => JSON.parse(l) as Record<string, unknown>)
        expect(records.map((r) => r.id)).toEqual([child, root])
        for (const r of records) expect(Object.keys(r)).toEqual(["id", "title", "directory", "projectID", "parentID", "created", "updated", "retiredAt"])
        expect(records[1]).toEqual({ id: root, title: "old work", directory: "/work/x", projectID: "global", parentID: null, created: NOW - 40 * DAY, updated: NOW - 39 * DAY, retiredAt: NOW })
        expect(records[0]).toMatchObject({ parentID: root, created: NOW - 40 * DAY + 5, retiredAt: NOW })
      })
    )
  )

  it.effect("US-32 a session run line has exactly the spec's keys in the spec's order, with the cutoffs, noEvents and vacuumed", () =>
    withDb((t) =>
      Effect.gen(function* () {
        t.db.session({ created: NOW - 40 * DAY })
        t.db.session({ created: NOW - 41 * DAY })
        const lines = memoryLines()
        yield* runSessions(t.path, { withEvents: false, limit: 1, directory: "/work/proj" }, { lines })
        yield* runSessions(t.path, { dryRun: true, days: 1.5, graceHours: 0.5 }, { lines })
        const [real, dry] = lines.runs["session-retire"].map((l) => JSON.parse(l) as Record<string, unknown>)
        expect(Object.keys(real!)).toEqual(SESSION_RUN_KEYS)
        expect(Object.keys(dry!)).toEqual(SESSION_RUN_KEYS)
        expect(real).toEqual({
          ts: new Date(NOW).toISOString(),
          days: 30,
          graceHours: 24,
          directory: "/work/proj",
          limit: 1,
          cutoffCreated: new Date(NOW - 30 * DAY).toISOString(),
          cutoffUpdated: new Date(NOW - 24 * HOUR).toISOString(),
          roots: 1,
          sessions: 1,
          protected: 0,
          remainingRoots: 1,
          rows: { session: 1 },
          noEvents: true,
          dryRun: false,
          vacuumed: false,
          elapsedMs: 0
        })
        expect(dry).toMatchObject({
          cutoffCreated: new Date(NOW - 1.5 * DAY).toISOString(),
          cutoffUpdated: new Date(NOW - 0.5 * HOUR).toISOString(),
          noEvents: false,
          dryRun: true,
          vacuumed: false,
          limit: null,
          directory: null
        })
      })
    )
  )

  it.effect("US-32 vacuumed is true in the run line when the vacuum ran", () =>
    withDb((t) =>
      Effect.gen(function* () {
        t.db.session({ created: NOW - 40 * DAY })
        const lines = memoryLines()
        yield* runSessions(t.path, { vacuum: true, force: true }, { lines })
        expect(JSON.parse(lines.runs["session-retire"][0]!)).toMatchObject({ roots: 1, vacuumed: true })
      })
    )
  )

  it.effect("US-33.12 an event run line has exactly the spec's keys in order, ts and cutoff ISO strings", () =>
    withDb((t) =>
      Effect.gen(function* () {
        const s = t.db.session({ created: NOW - 20 * DAY })
        t.db.events(s, [NOW - 20 * DAY, NOW - 19 * DAY])
        const lines = memoryLines()
        yield* runEvents(t.path, { days: 2000 }, { lines })
        const line = JSON.parse(lines.runs["event-prune"][0]!) as Record<string, unknown>
        expect(Object.keys(line)).toEqual(["ts", "days", "graceHours", "cutoff", "rows", "bytes", "aggregates", "dryRun", "elapsedMs"])
        expect(line).toMatchObject({ ts: new Date(NOW).toISOString(), days: 68_719_476_736 / DAY, graceHours: 1, cutoff: new Date(NOW - 68_719_476_736).toISOString(), rows: 0 })
      })
    )
  )

  it("US-32.9 an archive line reads back whether its times are epoch ms or ISO strings (older archives)", () => {
    const now = { id: "ses_1", title: "t", directory: "/d", projectID: "global", parentID: null, created: NOW - DAY, updated: NOW - HOUR, retiredAt: NOW }
    const old = { ...now, created: new Date(NOW - DAY).toISOString(), updated: new Date(NOW - HOUR).toISOString(), retiredAt: new Date(NOW).toISOString() }
    const expected = { id: "ses_1", title: "t", directory: "/d", projectId: "global", parentId: null, timeCreated: NOW - DAY, timeUpdated: NOW - HOUR, retiredAt: NOW }
    expect(readArchiveLine(JSON.stringify(now))).toEqual(expected)
    expect(readArchiveLine(JSON.stringify(old))).toEqual(expected)
    for (const bad of ["", "{", "[]", "null", JSON.stringify({ ...now, created: "yesterday" }), JSON.stringify({ ...now, id: 5 }), JSON.stringify({ ...now, created: 1e300 })]) {
      expect(readArchiveLine(bad)).toBeUndefined()
    }
  })
})
