/** `sweep events` on databases built from opencode 1.18.33's schema (US-33). */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, TestClock } from "effect"
import Database from "better-sqlite3"
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { sweepEvents } from "../../src/cli/sweep/events.js"
import { sweepExitCode } from "../../src/cli/sweep/outcome.js"
import { DbHostProc } from "../../src/layers/retention/DbHostProc.js"
import { RetentionLogFile } from "../../src/layers/retention/RetentionLogFile.js"
import { memoryLines } from "../../src/layers/retention/RetentionLogMemory.js"
import { RetentionSqlite } from "../../src/layers/retention/RetentionSqlite.js"
import { SqliteNode } from "../../src/layers/opencodeDb/SqliteNode.js"
import { ID_ERA_MS } from "../../src/core/constants.js"
import { tempDb, type TempDb } from "./opencodeDb.js"
import { DAY, HOUR, NOW, runEvents } from "./run.js"

const withDb = <A, E, R>(body: (t: TempDb) => Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => tempDb()),
    body,
    (t) => Effect.sync(() => t.dispose())
  )

/** An ordinary session created long ago and quiet since, with events at the given ages. */
const quietSession = (t: TempDb, ages: ReadonlyArray<number>, extra: { workspaceId?: string; updated?: number } = {}) => {
  const created = NOW - 60 * DAY
  const id = t.db.session({ created, updated: extra.updated ?? created, ...(extra.workspaceId === undefined ? {} : { workspaceId: extra.workspaceId }) })
  const events = t.db.events(id, ages.map((age) => NOW - age))
  return { id, events }
}

const remaining = (t: TempDb) => new Set(t.db.ids("event"))

describe("sweep events (SPEC §11.4)", () => {
  it.effect("US-33.1 an 8 d old event goes, a 6 d old one stays", () =>
    withDb((t) =>
      Effect.gen(function* () {
        const { events } = quietSession(t, [8 * DAY, 6 * DAY])
        const report = yield* runEvents(t.path)
        expect(remaining(t)).toEqual(new Set([events[1]]))
        expect(report).toMatchObject({ candidates: 1, rows: 1, aggregates: 1, remaining: 0, chunks: 1, stoppedBy: null, clamped: false, days: 7, graceHours: 1 })
        expect(report.cutoff).toBe(new Date(NOW - 7 * DAY).toISOString())
        expect(report.bytes).toBe('{"type":"x"}'.length)
      })
    )
  )

  it.effect("US-33.2 a session in sync (owner_id) or in a workspace keeps its 30 d old events", () =>
    withDb((t) =>
      Effect.gen(function* () {
        const synced = quietSession(t, [30 * DAY])
        t.db.owner(synced.id)
        const inWorkspace = quietSession(t, [30 * DAY], { workspaceId: t.db.workspace() })
        const plain = quietSession(t, [30 * DAY])
        const report = yield* runEvents(t.path)
        expect(remaining(t)).toEqual(new Set([...synced.events, ...inWorkspace.events]))
        expect(report.rows).toBe(1)
        void plain
      })
    )
  )

  it.effect("US-33.2 a session that goes into sync while the sweep runs keeps the events it still has", () =>
    withDb((t) =>
      Effect.gen(function* () {
        const first = quietSession(t, Array.from({ length: 1500 }, (_, i) => 30 * DAY - i * 1000))
        const late = quietSession(t, Array.from({ length: 700 }, (_, i) => 20 * DAY - i * 1000))
        // After the first chunk (the oldest 1000 events, all of `first`), `late` goes into sync.
        const report = yield* runEvents(t.path, { onProgress: (done) => Effect.sync(() => void (done === 1000 && t.db.owner(late.id))) })
        expect(t.db.count("event", `aggregate_id = '${first.id}'`)).toBe(0)
        expect(t.db.count("event", `aggregate_id = '${late.id}'`)).toBe(700)
        expect(report.rows).toBe(1500)
        expect(report.aggregates).toBe(1)
        expect(report.warnings.join()).toMatch(/kept the events of 1 session\(s\) that went into sync/)
      })
    )
  )

  it.effect("US-33 while another connection writes, each chunk is followed by a short pause; on a quiet database none", () =>
    withDb((t) =>
      Effect.gen(function* () {
        quietSession(t, Array.from({ length: 3500 }, (_, i) => 10 * DAY + i * 1000))
        const live = t.db.session({ created: NOW - DAY, updated: NOW })
        // opencode at work: after the first chunk, another connection commits a row.
        const busy = yield* runEvents(t.path, { onProgress: (done) => Effect.sync(() => void (done === 1000 && t.db.events(live, [NOW]))) })
        // The write is seen after chunk 2; chunks 2 and 3 pause, the last one does not.
        expect(busy).toMatchObject({ rows: 3500, chunks: 4, politePauses: 2 })
        quietSession(t, Array.from({ length: 2500 }, (_, i) => 10 * DAY + i * 1000))
        const quiet = yield* runEvents(t.path)
        expect(quiet).toMatchObject({ rows: 2500, chunks: 3, politePauses: 0 })
      })
    )
  )

  it.effect("US-33.6 US-33.10 with a small memory cap the sweep works in rounds: still oldest first, every candidate counted, the limit kept", () =>
    withDb((t) =>
      Effect.gen(function* () {
        // Written newest first (ages growing), so the scan order is the reverse of the deletion order.
        const { events } = quietSession(t, Array.from({ length: 2600 }, (_, i) => 10 * DAY + i * 1000))
        const limited = yield* runEvents(t.path, { roundCandidates: 700, limit: 2000 })
        expect(limited).toMatchObject({ candidates: 2600, rows: 2000, remaining: 600, stoppedBy: null })
        // The 2000 oldest went: the last 2000 written.
        expect(remaining(t)).toEqual(new Set(events.slice(0, 600)))
        const rest = yield* runEvents(t.path, { roundCandidates: 250 })
        expect(rest).toMatchObject({ candidates: 600, rows: 600, remaining: 0 })
        expect(t.db.count("event")).toBe(0)
      })
    )
  )

  it.effect("US-33.3 a session updated 30 min ago keeps its 30 d old events", () =>
    withDb((t) =>
      Effect.gen(function* () {
        const active = quietSession(t, [30 * DAY], { updated: NOW - 30 * 60_000 })
        const report = yield* runEvents(t.path)
        expect(remaining(t)).toEqual(new Set(active.events))
        expect(report.candidates).toBe(0)
      })
    )
  )

  it.effect("US-33.4 30 d old events of a missing session that is not in sync are deleted; in sync they stay", () =>
    withDb((t) =>
      Effect.gen(function* () {
        const orphan = t.db.events("ses_ffffffffffffGoneGoneGone01", [NOW - 30 * DAY, NOW - 31 * DAY])
        const syncedOrphan = t.db.events("ses_ffffffffffffGoneGoneGone02", [NOW - 30 * DAY])
        t.db.owner("ses_ffffffffffffGoneGoneGone02")
        const report = yield* runEvents(t.path)
        expect(remaining(t)).toEqual(new Set(syncedOrphan))
        expect(report.rows).toBe(orphan.length)
        expect(t.db.count("event_sequence")).toBe(2)
      })
    )
  )

  it.effect("US-33.5 --dry-run deletes nothing, reports the counts, and appends exactly one dryRun line", () =>
    withDb((t) =>
      Effect.gen(function* () {
        quietSession(t, [10 * DAY, 11 * DAY, 12 * DAY, 13 * DAY, 14 * DAY])
        const lines = memoryLines()
        const report = yield* runEvents(t.path, { dryRun: true }, { lines })
        expect(t.db.count("event")).toBe(5)
        expect(report).toMatchObject({ dryRun: true, candidates: 5, rows: 5, aggregates: 1, remaining: 0, chunks: 0 })
        expect(lines.runs["event-prune"]).toHaveLength(1)
        expect(JSON.parse(lines.runs["event-prune"][0]!)).toMatchObject({ dryRun: true, rows: 5 })
      })
    )
  )

  it.effect("US-33.6 --limit 3 deletes the 3 oldest and reports 2 remaining", () =>
    withDb((t) =>
      Effect.gen(function* () {
        // Written out of age order, so the order comes from the decoded times.
        const { events } = quietSession(t, [12 * DAY, 30 * DAY, 9 * DAY, 20 * DAY, 15 * DAY])
        const report = yield* runEvents(t.path, { limit: 3 })
        expect(remaining(t)).toEqual(new Set([events[0], events[2]]))
        expect(report).toMatchObject({ candidates: 5, rows: 3, remaining: 2 })
      })
    )
  )

  it.effect("US-33.7 --days 2000 is clamped to the id era with a warning, and keeps 10 d and 400 d old rows", () =>
    withDb((t) =>
      Effect.gen(function* () {
        quietSession(t, [10 * DAY])
        const ancient = t.db.session({ created: NOW - 401 * DAY })
        t.db.events(ancient, [NOW - 400 * DAY])
        const lines = memoryLines()
        const report = yield* runEvents(t.path, { days: 2000 }, { lines })
        expect(t.db.count("event")).toBe(2)
        expect(report.clamped).toBe(true)
        expect(report.warnings).toContain("window clamped to the id era (795.36 days)")
        expect(report.days).toBeCloseTo(795.36, 2)
        expect(JSON.parse(lines.runs["event-prune"][0]!).days).toBe(ID_ERA_MS / DAY)
      })
    )
  )

  it.effect("US-33.8 an event written 10 d ago, before the id era wrapped, decodes as 10 d old and goes", () =>
    withDb((t) =>
      Effect.gen(function* () {
        const eraStart = 27 * ID_ERA_MS // 2028-10-17T20:04:31.872Z
        const now = eraStart + 3 * DAY
        const created = now - 11 * DAY
        const id = t.db.session({ created })
        const [wrapped] = t.db.events(id, [now - 10 * DAY])
        const [fresh] = t.db.events(id, [now - 1 * DAY])
        // The time field of the old id is near the top of its 36 bits; the fresh one has wrapped past 0.
        expect(parseInt(wrapped!.slice(4, 13), 16)).toBeGreaterThan(parseInt(fresh!.slice(4, 13), 16))
        const report = yield* runEvents(t.path, {}, { now })
        expect(remaining(t)).toEqual(new Set([fresh]))
        expect(report.rows).toBe(1)
      })
    )
  )

  it.effect("US-33.9 with the write lock held throughout, the sweep retries 5 times, stops busy (exit 75) and reports the remainder", () =>
    withDb((t) =>
      Effect.gen(function* () {
        quietSession(t, Array.from({ length: 2500 }, (_, i) => 10 * DAY + i * 1000))
        const holder = new Database(t.path)
        holder.exec("BEGIN IMMEDIATE")
        try {
          const fiber = yield* Effect.fork(runEvents(t.path, {}, { busyTimeoutMs: 5 }))
          const start = NOW
          // Each back-off sleep waits on the TestClock; step it until the sweep gives up.
          for (let i = 0; i < 40 && fiber.unsafePoll() === null; i++) {
            yield* Effect.yieldNow()
            yield* TestClock.adjust(250)
          }
          const report = yield* Fiber.join(fiber)
          expect(report).toMatchObject({ stoppedBy: "busy", rows: 0, chunks: 0, candidates: 2500, remaining: 2500 })
          expect(sweepExitCode(report)).toBe(75)
          // 250 + 500 + 1000 + 2000 + 4000 ms of back-off went by on the clock.
          expect((yield* TestClock.currentTimeMillis) - start).toBeGreaterThanOrEqual(7750)
        } finally {
          holder.exec("ROLLBACK")
          holder.close()
        }
        expect(t.db.count("event")).toBe(2500)
      })
    )
  )

  it.effect("US-33.10 2 500 candidates go in 3 transactions of 1 000, 1 000 and 500 rows", () =>
    withDb((t) =>
      Effect.gen(function* () {
        quietSession(t, Array.from({ length: 2500 }, (_, i) => 10 * DAY + i * 1000))
        const progress: Array<number> = []
        const report = yield* runEvents(t.path, { onProgress: (done) => Effect.sync(() => void progress.push(done)) })
        expect(progress).toEqual([1000, 2000, 2500])
        expect(report).toMatchObject({ chunks: 3, rows: 2500, remaining: 0 })
        expect(t.db.count("event")).toBe(0)
      })
    )
  )

  it.effect("US-33.11 event_sequence and session are identical before and after a run", () =>
    withDb((t) =>
      Effect.gen(function* () {
        quietSession(t, [8 * DAY, 9 * DAY, 1 * DAY])
        const synced = quietSession(t, [30 * DAY])
        t.db.owner(synced.id)
        t.db.events("ses_ffffffffffffGoneGoneGone03", [NOW - 30 * DAY])
        const before = { seq: t.db.dump("event_sequence"), session: t.db.dump("session") }
        const report = yield* runEvents(t.path)
        expect(report.rows).toBe(3)
        expect({ seq: t.db.dump("event_sequence"), session: t.db.dump("session") }).toEqual(before)
      })
    )
  )

  it.effect("US-33.12 two runs leave two run-log lines with exactly the documented keys", () =>
    withDb((t) =>
      Effect.gen(function* () {
        quietSession(t, [8 * DAY])
        const dataDir = mkdtempSync(join(tmpdir(), "ocpool-data-"))
        const live = Layer.mergeAll(RetentionSqlite().pipe(Layer.provide(SqliteNode(t.path))), RetentionLogFile(dataDir), DbHostProc)
        const once = (dryRun: boolean) =>
          sweepEvents({ db: t.path, days: 7, graceHours: 1, dryRun, vacuum: false, force: false }).pipe(Effect.provide(live))
        yield* TestClock.setTime(NOW)
        yield* once(true)
        yield* once(false)
        const lines = readFileSync(join(dataDir, "runs", "event-prune.jsonl"), "utf8").trim().split("\n")
        rmSync(dataDir, { recursive: true, force: true })
        expect(lines).toHaveLength(2)
        for (const line of lines) expect(Object.keys(JSON.parse(line))).toEqual(["ts", "days", "graceHours", "cutoff", "rows", "bytes", "aggregates", "dryRun", "elapsedMs"])
        expect(lines.map((l) => JSON.parse(l).dryRun)).toEqual([true, false])
        expect(JSON.parse(lines[0]!)).toMatchObject({ ts: new Date(NOW).toISOString(), cutoff: new Date(NOW - 7 * DAY).toISOString(), days: 7, rows: 1 })
      })
    )
  )

  it.effect("US-33.13 ids that decode to more than 24 h before their session was created stop the run: exit 1, nothing deleted", () =>
    withDb((t) =>
      Effect.gen(function* () {
        const id = t.db.session({ created: NOW - 10 * DAY })
        t.db.events(id, [NOW - 20 * DAY, NOW - 19 * DAY])
        const failure = yield* runEvents(t.path).pipe(Effect.flip)
        expect(failure._tag).toBe("IdEncodingUnknown")
        expect(t.db.count("event")).toBe(2)
      })
    )
  )

  it.effect("US-33.14 --vacuum is refused (exit 75, deletions kept) while another process holds the database, or the disk is short", () =>
    withDb((t) =>
      Effect.gen(function* () {
        quietSession(t, [8 * DAY, 9 * DAY])
        const held = yield* runEvents(t.path, { vacuum: true }, { host: { freeBytes: 1e12, openBy: [4242] } })
        expect(held.rows).toBe(2)
        expect(held.vacuum).toMatchObject({ requested: true, ran: false, refused: true })
        expect(held.vacuum.reason).toMatch(/open in another process \(pid 4242\)/)
        expect(sweepExitCode(held)).toBe(75)
        quietSession(t, [8 * DAY])
        const short = yield* runEvents(t.path, { vacuum: true }, { host: { freeBytes: 10, openBy: [] } })
        expect(short.rows).toBe(1)
        expect(short.vacuum.reason).toMatch(/free disk space \(10 bytes\) is smaller than the database/)
        expect(sweepExitCode(short)).toBe(75)
        const unknown = yield* runEvents(t.path, { vacuum: true }, { host: { freeBytes: 1e12, openBy: undefined } })
        expect(unknown.vacuum.refused).toBe(true)
      })
    )
  )

  it.live("US-33.14 a real process holding the database open is seen through /proc, and the vacuum is refused", () =>
    withDb((t) =>
      Effect.gen(function* () {
        if (process.platform !== "linux") return
        quietSession(t, [Date.now() - NOW + 8 * DAY])
        t.db.close()
        const child = spawn(process.execPath, ["-e", `require("fs").openSync(${JSON.stringify(t.path)}, "r"); console.log("ready"); setInterval(() => {}, 1000)`], {
          stdio: ["ignore", "pipe", "inherit"]
        })
        yield* Effect.async<void>((resume) => void child.stdout!.once("data", () => resume(Effect.void)))
        try {
          const report = yield* sweepEvents({ db: t.path, days: 7, graceHours: 1, dryRun: false, vacuum: true, force: false }).pipe(
            Effect.provide(Layer.mergeAll(RetentionSqlite().pipe(Layer.provide(SqliteNode(t.path))), RetentionLogFile(t.dir), DbHostProc))
          )
          expect(report.vacuum.refused).toBe(true)
          expect(report.vacuum.reason).toContain(`pid ${child.pid}`)
        } finally {
          child.kill("SIGKILL")
        }
      })
    )
  )

  it.effect("US-33.15 --vacuum --force runs the vacuum anyway, and no free page is left", () =>
    withDb((t) =>
      Effect.gen(function* () {
        const big = "x".repeat(4000)
        const id = t.db.session({ created: NOW - 60 * DAY })
        t.db.events(id, Array.from({ length: 300 }, (_, i) => NOW - 10 * DAY - i), `{"blob":"${big}"}`)
        t.db.close()
        const report = yield* runEvents(t.path, { vacuum: true, force: true }, { host: { freeBytes: 0, openBy: [1] } })
        expect(report.rows).toBe(300)
        expect(report.vacuum).toMatchObject({ requested: true, ran: true, refused: false })
        expect(report.vacuum.bytesAfter!).toBeLessThan(report.vacuum.bytesBefore!)
        const check = new Database(t.path, { readonly: true })
        expect(check.pragma("freelist_count", { simple: true })).toBe(0)
        check.close()
        expect(sweepExitCode(report)).toBe(0)
      })
    )
  )

  it.effect("US-33.16 --vacuum --dry-run leaves the file unchanged and says the vacuum would have run", () =>
    withDb((t) =>
      Effect.gen(function* () {
        quietSession(t, [8 * DAY, 9 * DAY])
        t.db.db.pragma("wal_checkpoint(TRUNCATE)")
        const before = readFileSync(t.path)
        const report = yield* runEvents(t.path, { vacuum: true, dryRun: true })
        expect(readFileSync(t.path).equals(before)).toBe(true)
        expect(report.vacuum).toMatchObject({ requested: true, ran: false, refused: false, reason: "dry run: the vacuum would have run" })
        expect(t.db.count("event")).toBe(2)
      })
    )
  )

  it.effect("US-33.1 a page-sized scan finds candidates across pages in decoded-time order", () =>
    withDb((t) =>
      Effect.gen(function* () {
        // 45 000 events over three sessions, written interleaved, more than two scan pages.
        const ids = [quietSession(t, []).id, quietSession(t, []).id, quietSession(t, []).id]
        const insert = t.db.db.transaction(() => {
          for (let i = 0; i < 15_000; i++) for (const id of ids) t.db.events(id, [NOW - 30 * DAY + i * 10])
        })
        insert()
        const progress: Array<number> = []
        const report = yield* runEvents(t.path, { limit: 40_000, onProgress: (done) => Effect.sync(() => void progress.push(done)) })
        expect(report).toMatchObject({ candidates: 45_000, rows: 40_000, remaining: 5_000, aggregates: 3 })
        expect(t.db.count("event")).toBe(5_000)
        expect(progress.at(-1)).toBe(40_000)
        void HOUR
      })
    )
  )
})
