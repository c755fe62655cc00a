/** `sweep sessions` on databases built from opencode 1.18.33's schema (US-32). */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { readFileSync } from "node:fs"
import Database from "better-sqlite3"
import { memoryLines } from "../../src/layers/retention/RetentionLogMemory.js"
import { RetentionLog } from "../../src/services/retention/RetentionLog.js"
import { sweepSessions } from "../../src/cli/sweep/sessions.js"
import { tempDb, type TempDb } from "./opencodeDb.js"
import { DAY, HOUR, NOW, layers, runSessions } from "./run.js"
import { DbHostMemory } from "../../src/layers/retention/DbHostMemory.js"
import { RetentionSqlite } from "../../src/layers/retention/RetentionSqlite.js"
import { SqliteNode } from "../../src/layers/opencodeDb/SqliteNode.js"
import { Fiber, TestClock } from "effect"

/** A session with a message (2 parts), a todo, a share and 3 events, all at its creation time. */
const fullSession = (t: TempDb, seed: Parameters<TempDb["db"]["session"]>[0]) => {
  const id = t.db.session(seed)
  t.db.message(id, seed.created)
  t.db.todo(id, 0, seed.created)
  t.db.share(id, seed.created)
  t.db.events(id, [seed.created, seed.created + 1, seed.created + 2])
  return id
}

const sessionIds = (t: TempDb) => new Set(t.db.ids("session"))

const integrity = (t: TempDb) => {
  expect(t.db.db.pragma("integrity_check", { simple: true })).toBe("ok")
  expect(t.db.db.pragma("foreign_key_check")).toEqual([])
  for (const table of ["message", "part", "todo", "session_share"]) expect(t.db.count(table, "session_id NOT IN (SELECT id FROM session)")).toBe(0)
  expect(t.db.count("session", "parent_id IS NOT NULL AND parent_id NOT IN (SELECT id FROM session)")).toBe(0)
}

const withDb = <A, E, R>(body: (t: TempDb) => Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => tempDb()),
    body,
    (t) => Effect.sync(() => t.dispose())
  )

describe("sweep sessions (SPEC §11.3)", () => {
  it.effect("US-32.1 only the old, quiet session goes, with its messages, parts, todos, shares and events", () =>
    withDb((t) =>
      Effect.gen(function* () {
        const old = fullSession(t, { created: NOW - 40 * DAY })
        const young = fullSession(t, { created: NOW - 10 * DAY })
        const touched = fullSession(t, { created: NOW - 40 * DAY, updated: NOW - 2 * HOUR })
        const report = yield* runSessions(t.path)
        expect(sessionIds(t)).toEqual(new Set([young, touched]))
        expect(report.roots).toBe(1)
        expect(report.rows).toEqual({ part: 2, message: 1, session_share: 1, todo: 1, event: 3, event_sequence: 1, session: 1 })
        for (const table of ["message", "part", "todo", "session_share"]) expect(t.db.count(table, `session_id = '${old}'`)).toBe(0)
        expect(t.db.count("event", `aggregate_id = '${old}'`)).toBe(0)
        expect(t.db.count("event_sequence", `aggregate_id = '${old}'`)).toBe(0)
        expect(t.db.count("event")).toBe(6)
        integrity(t)
      })
    )
  )

  it.effect("US-32.2 the defaults: 31 d and 25 h-quiet go, 29 d and 23 h-quiet stay", () =>
    withDb((t) =>
      Effect.gen(function* () {
        const d29 = t.db.session({ created: NOW - 29 * DAY })
        const d31 = t.db.session({ created: NOW - 31 * DAY })
        const h23 = t.db.session({ created: NOW - 40 * DAY, updated: NOW - 23 * HOUR })
        const h25 = t.db.session({ created: NOW - 40 * DAY, updated: NOW - 25 * HOUR })
        const report = yield* runSessions(t.path)
        expect(sessionIds(t)).toEqual(new Set([d29, h23]))
        expect(report.sessions).toBe(2)
        expect(report.cutoffCreated).toBe(new Date(NOW - 30 * DAY).toISOString())
        expect(report.cutoffUpdated).toBe(new Date(NOW - 24 * HOUR).toISOString())
        void d31
        void h25
      })
    )
  )

  it.effect("US-32.3 --directory takes the parent's child from another directory along, leaving no dangling row", () =>
    withDb((t) =>
      Effect.gen(function* () {
        const parent = fullSession(t, { created: NOW - 40 * DAY, directory: "/work/a" })
        fullSession(t, { created: NOW - 40 * DAY, parentId: parent, directory: "/elsewhere/b" })
        const other = fullSession(t, { created: NOW - 40 * DAY, directory: "/work/c" })
        const report = yield* runSessions(t.path, { directory: "/work/a" })
        expect(sessionIds(t)).toEqual(new Set([other]))
        expect(report.roots).toBe(1)
        expect(report.sessions).toBe(2)
        expect(report.directory).toBe("/work/a")
        integrity(t)
      })
    )
  )

  it.effect("US-32.4 an old parent whose child was updated 1 h ago stays, child and all", () =>
    withDb((t) =>
      Effect.gen(function* () {
        const parent = t.db.session({ created: NOW - 40 * DAY })
        const child = t.db.session({ created: NOW - 40 * DAY, updated: NOW - HOUR, parentId: parent })
        const report = yield* runSessions(t.path)
        expect(sessionIds(t)).toEqual(new Set([parent, child]))
        expect(report.roots).toBe(0)
      })
    )
  )

  it.effect("US-32.5 --directory D retires D's session and leaves E's", () =>
    withDb((t) =>
      Effect.gen(function* () {
        t.db.session({ created: NOW - 40 * DAY, directory: "/work/D" })
        const e = t.db.session({ created: NOW - 40 * DAY, directory: "/work/E" })
        const report = yield* runSessions(t.path, { directory: "/work/D" })
        expect(sessionIds(t)).toEqual(new Set([e]))
        expect(report.remainingRoots).toBe(0)
      })
    )
  )

  it.effect("US-32.6 --limit 1 takes the oldest root and its two children; 2 roots remain", () =>
    withDb((t) =>
      Effect.gen(function* () {
        const oldest = t.db.session({ created: NOW - 50 * DAY })
        t.db.session({ created: NOW - 50 * DAY + 1, parentId: oldest })
        const grandchild = t.db.session({ created: NOW - 50 * DAY + 2, parentId: oldest })
        t.db.session({ created: NOW - 50 * DAY + 3, parentId: grandchild })
        const r2 = t.db.session({ created: NOW - 45 * DAY })
        const r3 = t.db.session({ created: NOW - 40 * DAY })
        const report = yield* runSessions(t.path, { limit: 1 })
        expect(sessionIds(t)).toEqual(new Set([r2, r3]))
        expect(report.roots).toBe(1)
        expect(report.sessions).toBe(4)
        expect(report.remainingRoots).toBe(2)
        expect(report.limit).toBe(1)
      })
    )
  )

  it.effect("US-32.7 --dry-run leaves the database bytes as they were, archives nothing, and logs dryRun: true", () =>
    withDb((t) =>
      Effect.gen(function* () {
        fullSession(t, { created: NOW - 40 * DAY })
        fullSession(t, { created: NOW - 41 * DAY })
        t.db.db.pragma("wal_checkpoint(TRUNCATE)")
        const before = readFileSync(t.path)
        const lines = memoryLines()
        const report = yield* runSessions(t.path, { dryRun: true }, { lines })
        expect(readFileSync(t.path).equals(before)).toBe(true)
        expect(t.db.count("session")).toBe(2)
        expect(report.roots).toBe(2)
        expect(report.rows.message).toBe(2)
        expect(report.archived).toBe(0)
        expect(lines.archive).toEqual([])
        expect(lines.runs["session-retire"]).toHaveLength(1)
        expect(JSON.parse(lines.runs["session-retire"][0]!).dryRun).toBe(true)
      })
    )
  )

  it.effect("US-32.8 --no-events keeps the retired session's event and event_sequence rows", () =>
    withDb((t) =>
      Effect.gen(function* () {
        const id = fullSession(t, { created: NOW - 40 * DAY })
        const report = yield* runSessions(t.path, { withEvents: false })
        expect(t.db.count("session")).toBe(0)
        expect(t.db.count("event", `aggregate_id = '${id}'`)).toBe(3)
        expect(t.db.count("event_sequence", `aggregate_id = '${id}'`)).toBe(1)
        expect(report.rows.event).toBeUndefined()
      })
    )
  )

  it.effect("US-32.9 the archive has one line per retired session, written and on disk before its rows go", () =>
    withDb((t) =>
      Effect.gen(function* () {
        const root = t.db.session({ created: NOW - 40 * DAY, title: "old work", directory: "/work/x" })
        const child = t.db.session({ created: NOW - 40 * DAY + 5, parentId: root, title: "sub" })
        const seenAtArchive: Array<number> = []
        const archived: Array<string> = []
        // An archive that looks at the database, through its own connection, when it is written.
        const spy = Layer.succeed(RetentionLog, {
          archivePath: "<spy>",
          runPath: () => "<spy>",
          archive: (lines) =>
            Effect.sync(() => {
              const peek = new Database(t.path, { readonly: true })
              seenAtArchive.push((peek.prepare("SELECT count(*) AS n FROM session").get() as { n: number }).n)
              peek.close()
              archived.push(...lines)
            }),
          run: () => Effect.void
        })
        yield* TestClock.setTime(NOW)
        yield* sweepSessions({ db: t.path, days: 30, graceHours: 24, dryRun: false, withEvents: true, vacuum: false, force: false }).pipe(
          Effect.provide(Layer.mergeAll(RetentionSqlite().pipe(Layer.provide(SqliteNode(t.path))), spy, DbHostMemory({})))
        )
        expect(seenAtArchive).toEqual([2])
        expect(t.db.count("session")).toBe(0)
        const records = archived.map((l) => JSON.parse(l) as Record<string, unknown>)
        expect(records.map((r) => r.id).sort()).toEqual([root, child].sort())
        for (const r of records) expect(Object.keys(r)).toEqual(["id", "title", "directory", "projectID", "parentID", "created", "updated", "retiredAt"])
        const rootRecord = records.find((r) => r.id === root)!
        expect(rootRecord).toMatchObject({ title: "old work", directory: "/work/x", projectID: "global", parentID: null, created: NOW - 40 * DAY, retiredAt: NOW })
        expect(records.find((r) => r.id === child)!.parentID).toBe(root)
      })
    )
  )

  it.effect("US-32.10 a tree with a workspace session or a session in sync is kept and counted as protected", () =>
    withDb((t) =>
      Effect.gen(function* () {
        const ws = t.db.workspace()
        const inWorkspace = t.db.session({ created: NOW - 40 * DAY })
        t.db.session({ created: NOW - 40 * DAY, parentId: inWorkspace, workspaceId: ws })
        const synced = t.db.session({ created: NOW - 40 * DAY })
        t.db.events(synced, [NOW - 40 * DAY])
        t.db.owner(synced)
        t.db.session({ created: NOW - 40 * DAY })
        const report = yield* runSessions(t.path)
        expect(report.protected).toBe(2)
        expect(report.roots).toBe(1)
        expect(t.db.count("session")).toBe(3)
        expect(t.db.count("event", `aggregate_id = '${synced}'`)).toBe(1)
      })
    )
  )

  it.effect("US-32.10 a session that becomes active between planning and its transaction keeps its tree", () =>
    withDb((t) =>
      Effect.gen(function* () {
        const a = t.db.session({ created: NOW - 40 * DAY })
        const b = t.db.session({ created: NOW - 39 * DAY })
        const lines = memoryLines()
        // Right after the first tree is done, opencode "touches" the second one.
        const report = yield* runSessions(
          t.path,
          { onProgress: (done) => Effect.sync(() => void (done === 1 && t.db.db.prepare("UPDATE session SET time_updated = ? WHERE id = ?").run(NOW, b))) },
          { lines }
        )
        expect(sessionIds(t)).toEqual(new Set([b]))
        expect(report.roots).toBe(1)
        expect(report.warnings.join()).toMatch(new RegExp(`kept ${b}: a session of the tree was updated`))
        // Only the tree that went is in the archive.
        expect(lines.archive.map((l) => JSON.parse(l).id)).toEqual([a])
        expect(report.archived).toBe(1)
      })
    )
  )

  it.effect("US-32.10 a tree touched between its archive line and its transaction is kept; the warning says its lines stay", () =>
    withDb((t) =>
      Effect.gen(function* () {
        const id = t.db.session({ created: NOW - 40 * DAY })
        const archived: Array<string> = []
        // opencode touches the session in the instant the archive is being written.
        const touching = Layer.succeed(RetentionLog, {
          archivePath: "<x>",
          runPath: () => "<x>",
          archive: (l) =>
            Effect.sync(() => {
              archived.push(...l)
              t.db.db.prepare("UPDATE session SET time_updated = ? WHERE id = ?").run(NOW, id)
            }),
          run: () => Effect.void
        })
        yield* TestClock.setTime(NOW)
        const report = yield* sweepSessions({ db: t.path, days: 30, graceHours: 24, dryRun: false, withEvents: true, vacuum: false, force: false }).pipe(
          Effect.provide(Layer.mergeAll(RetentionSqlite().pipe(Layer.provide(SqliteNode(t.path))), touching, DbHostMemory({}))),
          Effect.fork,
          Effect.flatMap((fiber) => Effect.zipRight(TestClock.adjust(1_000), Fiber.join(fiber)))
        )
        expect(t.db.count("session")).toBe(1)
        expect(report.roots).toBe(0)
        expect(archived.map((l) => JSON.parse(l).id)).toEqual([id])
        expect(report.warnings).toEqual([`kept ${id}: a session of the tree was updated or moved into a workspace since the sweep started (its archive lines stay)`])
      })
    )
  )

  it.effect("US-32.9 when the archive cannot be written, the tree is not deleted and the sweep stops with an error", () =>
    withDb((t) =>
      Effect.gen(function* () {
        t.db.session({ created: NOW - 40 * DAY })
        const lines = memoryLines()
        lines.failWith = "ENOSPC"
        const report = yield* runSessions(t.path, {}, { lines })
        expect(t.db.count("session")).toBe(1)
        expect(report).toMatchObject({ roots: 0, archived: 0, stoppedBy: "error", remainingRoots: 1 })
        expect(report.stopReason).toMatch(/archive not written \(archive: ENOSPC\); nothing of this tree was deleted/)
      })
    )
  )

  it.effect("US-32.6 sessions whose parent row is missing are roots of their own", () =>
    withDb((t) =>
      Effect.gen(function* () {
        const orphan = t.db.session({ created: NOW - 40 * DAY, parentId: "ses_gone" })
        t.db.session({ created: NOW - 40 * DAY, parentId: orphan })
        const report = yield* runSessions(t.path)
        expect(report.roots).toBe(1)
        expect(report.sessions).toBe(2)
        expect(t.db.count("session")).toBe(0)
      })
    )
  )
})

export { layers }
