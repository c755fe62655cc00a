/**
 * Crash safety of the retention sweeps (SPEC §11.3, §11.4; US-32, US-33): the built CLI runs on a
 * database of 200 000+ events and is SIGKILLed at several points, some while deletions are in progress.
 * After every kill the file must be sound, every retired session archived, the deletions a clean prefix
 * of the sweep's order (whole chunks, whole trees); a later run then finishes the job.
 */
import { describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { existsSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import {
  archivePath,
  checkSound,
  cliReady,
  column,
  countOf,
  parentsOf,
  rowsPerSession,
  runSweep,
  sharedFixture,
  sleep,
  startSweep,
  type SweepKind
} from "./sweepCli.js"

/** Opens the database the way a reader does after the crash, without checkpointing the WAL the killed run left behind. */
const reader = (path: string): Database.Database => new Database(path, { readonly: true })

const shared = sharedFixture({ roots: 200, events: 200_000, eventBytes: 80, seed: 23 }, "ocpool-crash-", 60_000)
const copy = shared.copy

/** When to kill: a fixed delay after the spawn, or the moment a probe of the database (or the archive) says so. */
type KillPoint = { readonly label: string; readonly delayMs: number } | { readonly label: string; readonly when: (db: Database.Database) => boolean }

interface Kill {
  readonly label: string
  readonly atMs: number
  /** Rows (events) or trees the killed run removed. */
  readonly removed: number
  /** Some, but not all, of what was left was removed by the killed run. */
  readonly midDeletion: boolean
}

/** Spawns the sweep, kills it with SIGKILL at `point`, and waits for it to be gone. */
const killAt = async (kind: SweepKind, path: string, home: string, point: KillPoint) => {
  await cliReady()
  const probe = reader(path)
  const run = startSweep(kind, path, home)
  let atMs = -1
  try {
    while (!run.done()) {
      const elapsed = Date.now() - run.started
      if ("delayMs" in point ? elapsed >= point.delayMs : point.when(probe)) {
        atMs = elapsed
        run.child.kill("SIGKILL")
        break
      }
      if (elapsed > 40_000) break
      await sleep("delayMs" in point ? 2 : 4)
    }
  } finally {
    probe.close()
  }
  const exit = await run.exited
  expect(exit.signal, `${point.label}: the sweep was to be killed, it ended by itself (${exit.code}): ${exit.stderr}`).toBe("SIGKILL")
  return atMs
}

const runLines = (home: string, log: string): number => {
  const path = join(home, "opencode-pool", "runs", `${log}.jsonl`)
  return existsSync(path) ? readFileSync(path, "utf8").split("\n").filter((l) => l !== "").length : 0
}

const present = (db: Database.Database, table: string, column: string) => {
  const statement = db.prepare(`SELECT 1 FROM ${table} WHERE ${column} = ?`).pluck()
  return (id: string) => statement.get(id) !== undefined
}

/** A probe that holds `ms` after `probe` first held. */
const afterward = (probe: (db: Database.Database) => boolean, ms: number) => {
  let since = 0
  return (db: Database.Database) => {
    if (since === 0 && probe(db)) since = Date.now()
    return since > 0 && Date.now() - since >= ms
  }
}

const verbose = process.env.OCPOOL_CRASH_VERBOSE === "1"

describe("sweeps killed mid-run (SPEC §11.3, §11.4)", () => {
  it("US-33 crash safety: sweep events SIGKILLed at 7 points leaves a sound database with whole chunks deleted, oldest first; a later run finishes", async () => {
    const started = Date.now()
    const { path, home } = copy()
    const eligible = shared.fixture.eligibleEvents
    const eligibleIds = new Set(eligible.map((e) => e.id))
    const before = reader(path)
    const allEvents = column(before, "SELECT id FROM event")
    const keep = allEvents.filter((id) => !eligibleIds.has(id))
    const sessionsBefore = before.prepare("SELECT * FROM session ORDER BY id").all()
    const sequencesBefore = before.prepare("SELECT * FROM event_sequence ORDER BY aggregate_id").all()
    const shape = { sessions: new Set(column(before, "SELECT id FROM session")), parents: parentsOf(before) }
    before.close()
    expect(allEvents.length).toBeGreaterThanOrEqual(200_000)
    expect(eligible.length).toBeGreaterThan(190_000)

    /** How many eligible events are gone: the sweep deletes oldest first, so that is a prefix. */
    let deleted = 0
    /** Probe: the eligible event `ahead` places past the ones already deleted is gone. */
    const gone = (ahead: (left: number) => number) => (db: Database.Database) => !present(db, "event", "id")(eligible[deleted + ahead(eligible.length - deleted)]!.id)
    const points: Array<KillPoint> = [
      { label: "50 ms", delayMs: 50 },
      { label: "150 ms", delayMs: 150 },
      { label: "400 ms", delayMs: 400 },
      { label: "first chunk committed", when: gone(() => 0) },
      { label: "first chunk committed + 120 ms", when: afterward(gone(() => 0), 120) },
      { label: "a quarter of the rest deleted", when: gone((left) => Math.floor(left / 4)) },
      { label: "a third of the rest deleted", when: gone((left) => Math.floor(left / 3)) }
    ]
    const kills: Array<Kill> = []
    for (const point of points) {
      const atMs = await killAt("events", path, home, point)
      const db = reader(path)
      try {
        checkSound(db, shape, home)
        // Deleted events are exactly a prefix of the eligible ones in (decoded time, id) order: whole chunks, oldest first.
        const has = present(db, "event", "id")
        let prefix = deleted
        while (prefix < eligible.length && !has(eligible[prefix]!.id)) prefix++
        const stillThere = eligible.slice(prefix).filter((e) => !has(e.id)).length
        expect(stillThere, `${point.label}: eligible events deleted out of order`).toBe(0)
        expect(countOf(db, "SELECT count(*) FROM event"), `${point.label}: events other than the eligible prefix deleted`).toBe(allEvents.length - prefix)
        // event_sequence and session are never changed (US-33.11).
        expect(db.prepare("SELECT * FROM session ORDER BY id").all()).toEqual(sessionsBefore)
        expect(db.prepare("SELECT * FROM event_sequence ORDER BY aggregate_id").all()).toEqual(sequencesBefore)
        const removed = prefix - deleted
        kills.push({ label: point.label, atMs, removed, midDeletion: removed > 0 && prefix < eligible.length })
        deleted = prefix
      } finally {
        db.close()
      }
    }
    expect(kills.some((k) => k.midDeletion), `no kill landed mid-deletion: ${JSON.stringify(kills)}`).toBe(true)
    expect(deleted).toBeLessThan(eligible.length)

    const final = await runSweep("events", path, home)
    expect(final.code, final.stderr).toBe(0)
    expect(final.report).toMatchObject({ candidates: eligible.length - deleted, rows: eligible.length - deleted, remaining: 0, stoppedBy: null })
    const db = reader(path)
    try {
      checkSound(db, shape, home)
      expect(new Set(column(db, "SELECT id FROM event"))).toEqual(new Set(keep))
      expect(db.prepare("SELECT * FROM event_sequence ORDER BY aggregate_id").all()).toEqual(sequencesBefore)
    } finally {
      db.close()
    }
    // Killed runs never reached their run-log line; the finished one wrote its own.
    expect(runLines(home, "event-prune")).toBe(1)
    if (verbose) console.info(JSON.stringify({ sweep: "events", ms: Date.now() - started, finalMs: final.ms, kills }))
  }, 90_000)

  it("US-32 crash safety: sweep sessions SIGKILLed at 7 points retires whole trees only, oldest first, each archived before it goes; a later run finishes", async () => {
    const started = Date.now()
    const { path, home } = copy()
    const trees = shared.fixture.trees
    const eligible = trees.filter((t) => t.eligible)
    const before = reader(path)
    const rowsBefore = rowsPerSession(before)
    const shape = { sessions: new Set(column(before, "SELECT id FROM session")), parents: parentsOf(before) }
    expect(countOf(before, "SELECT count(*) FROM event")).toBeGreaterThanOrEqual(200_000)
    before.close()

    let retired = 0
    const rootGone = (ahead: (left: number) => number) => (db: Database.Database) => !present(db, "session", "id")(eligible[retired + ahead(eligible.length - retired)]!.root)
    let archiveSize = 0
    const points: Array<KillPoint> = [
      { label: "50 ms", delayMs: 50 },
      { label: "150 ms", delayMs: 150 },
      { label: "the archive grows", when: () => existsSync(archivePath(home)) && statSync(archivePath(home)).size > archiveSize },
      { label: "400 ms", delayMs: 400 },
      { label: "first tree retired", when: rootGone(() => 0) },
      { label: "a quarter of the rest retired", when: rootGone((left) => Math.floor(left / 4)) },
      { label: "a third of the rest retired", when: rootGone((left) => Math.floor(left / 3)) }
    ]
    const kills: Array<Kill> = []
    for (const point of points) {
      archiveSize = existsSync(archivePath(home)) ? statSync(archivePath(home)).size : 0
      const atMs = await killAt("sessions", path, home, point)
      const db = reader(path)
      try {
        const { sessions } = checkSound(db, shape, home)
        // Whole trees, oldest root first: the trees gone are a prefix of the eligible ones.
        const whole = trees.map((t) => t.ids.filter((id) => sessions.has(id)).length)
        trees.forEach((t, i) => expect([0, t.ids.length], `${point.label}: tree ${t.root} half retired`).toContain(whole[i]))
        const goneFlags = eligible.map((t) => !sessions.has(t.root))
        const prefix = goneFlags.indexOf(false) === -1 ? eligible.length : goneFlags.indexOf(false)
        expect(goneFlags.slice(prefix).some(Boolean), `${point.label}: trees retired out of order`).toBe(false)
        expect(
          trees.filter((t) => !t.eligible && !sessions.has(t.root)).map((t) => t.root),
          `${point.label}: kept trees retired`
        ).toEqual([])
        // A session that stayed has all its rows; one that went left none behind (events included).
        const rowsAfter = rowsPerSession(db)
        const changed = [...rowsBefore].filter(([id, rows]) => (sessions.has(id) || !shape.sessions.has(id) ? rowsAfter.get(id) !== rows : rowsAfter.has(id)))
        expect(changed.slice(0, 3), `${point.label}: rows of a kept session changed, or rows of a retired one left`).toEqual([])
        const removed = prefix - retired
        kills.push({ label: point.label, atMs, removed, midDeletion: removed > 0 && prefix < eligible.length })
        retired = prefix
      } finally {
        db.close()
      }
    }
    expect(kills.some((k) => k.midDeletion), `no kill landed mid-deletion: ${JSON.stringify(kills)}`).toBe(true)
    expect(retired).toBeLessThan(eligible.length)

    const final = await runSweep("sessions", path, home)
    expect(final.code, final.stderr).toBe(0)
    expect(final.report).toMatchObject({ roots: eligible.length - retired, remainingRoots: 0, stoppedBy: null, protected: 2 })
    const db = reader(path)
    try {
      const { sessions, archive } = checkSound(db, shape, home)
      expect(sessions).toEqual(new Set(trees.filter((t) => !t.eligible).flatMap((t) => t.ids)))
      const rowsAfter = rowsPerSession(db)
      for (const [id, rows] of rowsBefore) if (sessions.has(id) || !shape.sessions.has(id)) expect(rowsAfter.get(id), id).toBe(rows)
      // Every eligible session is in the archive (some twice: archived by a run killed before its transaction).
      expect(eligible.flatMap((t) => t.ids).filter((id) => !archive.ids.has(id))).toEqual([])
      expect(archive.ids.size).toBe(eligible.flatMap((t) => t.ids).length)
      expect(runLines(home, "session-retire")).toBe(1)
      if (verbose) console.info(JSON.stringify({ sweep: "sessions", ms: Date.now() - started, finalMs: final.ms, archiveLines: archive.lines, archivedTwice: archive.lines - archive.ids.size, torn: archive.torn.length, kills }))
    } finally {
      db.close()
    }
  }, 90_000)
})
