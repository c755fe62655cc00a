/**
 * Helpers for the process-level retention tests (crash safety, concurrency): a large database shaped like
 * opencode's, the built CLI in a child process, and the invariants a sweep must leave behind whatever
 * happens to it.
 */
import Database from "better-sqlite3"
import { execFileSync, spawn, type ChildProcess } from "node:child_process"
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterAll, beforeAll, expect } from "vitest"
import { readArchiveLine } from "../../src/core/retention/records.js"
import { seeded, tempDb, type TempDb } from "./opencodeDb.js"

export const DAY = 86_400_000
export const HOUR = 3_600_000
export const MINUTE = 60_000

export const root = new URL("../../", import.meta.url).pathname
export const cli = join(root, "bin/ocpool.js")

const bundle = join(root, "dist/cli.js")

/** The CLI is run as shipped (bundled); build it when the bundle is missing. */
export const ensureBuilt = (): void => {
  if (!existsSync(bundle)) execFileSync(process.execPath, [join(root, "scripts/build.mjs")], { cwd: root })
}

let snapshot: string | undefined

/**
 * Makes the CLI ready to spawn. A build running elsewhere empties dist/ first (scripts/build.mjs), which
 * would make a spawn fail to load now and then; so the bundle bin/ocpool.js loads is copied once, as is,
 * under node_modules/.cache (its `better-sqlite3` import still resolves from there) and that copy is run.
 */
export const cliReady = async (): Promise<void> => {
  if (snapshot !== undefined && existsSync(snapshot)) return
  for (let i = 0; i < 100 && !existsSync(bundle); i++) await sleep(100)
  ensureBuilt()
  const cache = join(root, "node_modules", ".cache")
  mkdirSync(cache, { recursive: true })
  const dir = mkdtempSync(join(cache, "ocpool-retention-cli-"))
  const file = join(dir, "cli.mjs")
  for (let attempt = 0; ; attempt++) {
    try {
      copyFileSync(bundle, file)
      break
    } catch (e) {
      if (attempt >= 50) throw e
      await sleep(100)
    }
  }
  snapshot = file
}

/** Removes the copy made by `cliReady`. */
export const cliDispose = (): void => {
  if (snapshot !== undefined) rmSync(dirname(snapshot), { recursive: true, force: true })
  snapshot = undefined
}

export const dataHome = (): string => mkdtempSync(join(tmpdir(), "ocpool-data-"))
/** A fresh copy of the fixture's database (its connection closed, so the file is complete) and a data directory; both are listed in `dirs` for removal. */
export const copyFixture = (fixture: Fixture, dirs: Array<string>, prefix: string): { readonly path: string; readonly home: string } => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  const home = dataHome()
  dirs.push(dir, home)
  const path = join(dir, "opencode.db")
  copyFileSync(fixture.t.path, path)
  return { path, home }
}

/**
 * One fixture database per test file: built once before the tests (after the CLI bundle is ready),
 * copied fresh for each run, and removed with every copy afterwards.
 */
export const sharedFixture = (options: FixtureOptions, prefix: string, buildTimeoutMs: number) => {
  let built: Fixture | undefined
  const dirs: Array<string> = []
  beforeAll(async () => {
    await cliReady()
    built = buildFixture(options)
  }, buildTimeoutMs)
  afterAll(() => {
    cliDispose()
    built?.t.dispose()
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  })
  return {
    get fixture(): Fixture {
      if (built === undefined) throw new Error("the fixture is built in beforeAll")
      return built
    },
    copy: () => copyFixture(built!, dirs, prefix)
  }
}

export const archivePath = (home: string): string => join(home, "opencode-pool", "archive", "retired-sessions.jsonl")

export type SweepKind = "events" | "sessions"

export interface Exited {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
  readonly ms: number
}

export interface Running {
  readonly child: ChildProcess
  readonly started: number
  readonly exited: Promise<Exited>
  /** Set once the process has exited. */
  readonly done: () => boolean
}

/** `ocpool sweep <kind> --db <path> --json`, with its data directory under `home`. */
export const startSweep = (kind: SweepKind, db: string, home: string, extra: ReadonlyArray<string> = []): Running => {
  const started = Date.now()
  const child = spawn(process.execPath, [snapshot ?? cli, "sweep", kind, "--db", db, "--json", ...extra], {
    env: { ...process.env, XDG_DATA_HOME: home },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  let finished = false
  child.stdout!.on("data", (b: Buffer) => (stdout += b.toString()))
  child.stderr!.on("data", (b: Buffer) => (stderr += b.toString()))
  const exited = new Promise<Exited>((resolve, reject) => {
    child.once("error", reject)
    child.once("close", (code, signal) => {
      finished = true
      resolve({ code, signal, stdout, stderr, ms: Date.now() - started })
    })
  })
  return { child, started, exited, done: () => finished }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Runs a sweep to its end and parses its JSON report. */
export const runSweep = async (kind: SweepKind, db: string, home: string, extra: ReadonlyArray<string> = []) => {
  await cliReady()
  const exit = await startSweep(kind, db, home, extra).exited
  let report: Record<string, unknown> | undefined
  try {
    report = JSON.parse(exit.stdout) as Record<string, unknown>
  } catch {
    report = undefined
  }
  return { ...exit, report }
}

// ---------------------------------------------------------------------------------------------------
// The fixture

export interface TreeInfo {
  readonly root: string
  readonly created: number
  /** Every session of the tree, root first. */
  readonly ids: ReadonlyArray<string>
  /** What `sweep sessions` must retire (SPEC §11.3). */
  readonly eligible: boolean
}

export interface EventInfo {
  readonly id: string
  readonly aggregate: string
  readonly time: number
}

export interface Fixture {
  readonly t: TempDb
  readonly now: number
  /** Ordered as `sweep sessions` takes them: root `time_created`, then id. */
  readonly trees: ReadonlyArray<TreeInfo>
  /** The events `sweep events` must delete, in its order: decoded time, then id. */
  readonly eligibleEvents: ReadonlyArray<EventInfo>
  /** A session updated minutes ago: its tree and its events are kept by both sweeps. */
  readonly live: string
}

export interface FixtureOptions {
  /** Eligible root sessions (each with 0–3 children and sometimes a grandchild). */
  readonly roots: number
  /** At least this many events, spread evenly over the sessions. */
  readonly events: number
  readonly seed?: number
  /** Bytes of `data` per event row. */
  readonly eventBytes?: number
}

/**
 * A database shaped like a long-used opencode install: many old session trees (eligible for both sweeps),
 * plus trees each sweep must keep (grace window, workspace, in sync, young, live), and a few event
 * aggregates whose session row is gone. Written in one transaction; the connection is closed after.
 * Times are relative to the real clock: the CLI decodes ids against its own `now`.
 */
export const buildFixture = (o: FixtureOptions): Fixture => {
  const seed = o.seed ?? 11
  const t = tempDb(seed)
  const rng = seeded(seed * 7919 + 1)
  const between = (from: number, to: number) => from + Math.floor(rng() * (to - from))
  const now = Date.now()
  const eventCutoff = now - 7 * DAY
  const db = t.db
  const trees: Array<TreeInfo> = []
  const events: Array<EventInfo & { readonly protectedAggregate: boolean }> = []
  const payload = JSON.stringify({ type: "message.updated", pad: "x".repeat(Math.max(0, (o.eventBytes ?? 120) - 40)) })

  /** A session to write; `parent` is the index of its parent in its tree (none for the root). */
  interface Member {
    readonly created: number
    readonly updated: number
    readonly workspace?: boolean
    readonly synced?: boolean
    readonly parent?: number
  }
  const planned: Array<{ readonly members: ReadonlyArray<Member>; readonly eligible: boolean }> = []

  // Old quiet trees: roots created 31–120 days ago, every member quiet for more than a day (most for more than 8).
  const span = 89 * DAY
  const quietUpdate = (created: number) => (rng() < 0.15 ? now - between(2 * DAY, 5 * DAY) : between(created + HOUR, now - 8 * DAY))
  for (let i = 0; i < o.roots; i++) {
    const rootCreated = now - 31 * DAY - Math.floor(((i + rng()) * span) / o.roots)
    const members: Array<Member> = [{ created: rootCreated, updated: quietUpdate(rootCreated) }]
    const kids = Math.floor(rng() * 4)
    for (let k = 0; k < kids; k++) {
      const created = rootCreated + between(MINUTE, DAY)
      // Mostly children of the root, sometimes a grandchild.
      members.push({ created, updated: quietUpdate(created), parent: rng() < 0.3 ? Math.floor(rng() * members.length) : 0 })
    }
    planned.push({ members, eligible: true })
  }
  // Kept by `sweep sessions`: a child updated 2 h ago (grace), a workspace, a session in sync, a young tree, and last a live one.
  planned.push(
    { members: [{ created: now - 60 * DAY, updated: now - 50 * DAY }, { created: now - 59 * DAY, updated: now - 2 * HOUR, parent: 0 }], eligible: false },
    { members: [{ created: now - 50 * DAY, updated: now - 45 * DAY, workspace: true }, { created: now - 49 * DAY, updated: now - 45 * DAY, parent: 0 }], eligible: false },
    { members: [{ created: now - 55 * DAY, updated: now - 44 * DAY, synced: true }], eligible: false },
    { members: [{ created: now - 10 * DAY, updated: now - 3 * DAY }, { created: now - 9 * DAY, updated: now - 4 * DAY, parent: 0 }], eligible: false },
    { members: [{ created: now - 40 * DAY, updated: now - 10 * MINUTE }], eligible: false }
  )
  const memberCount = planned.reduce((n, tree) => n + tree.members.length, 0)

  const orphanAggregates = 3
  const perAggregate = Math.max(1, Math.ceil(o.events / (memberCount + orphanAggregates)))

  /** Event times in [from, to], sorted, none within an hour of the 7-day cutoff. */
  const times = (from: number, to: number, n: number): Array<number> => {
    const out: Array<number> = []
    while (out.length < n) {
      const at = between(from, Math.max(from + 1, to))
      if (Math.abs(at - eventCutoff) < HOUR) continue
      out.push(at)
    }
    return out.sort((a, b) => a - b)
  }

  const pending: Array<{ readonly aggregate: string; readonly time: number; readonly protectedAggregate: boolean }> = []
  const synced = new Set<string>()
  db.db.transaction(() => {
    db.workspace("wrk_1")
    planned.forEach((tree, index) => {
      const ids: Array<string> = []
      for (const m of tree.members) {
        const id = db.session({
          created: m.created,
          updated: m.updated,
          parentId: m.parent === undefined ? null : ids[m.parent]!,
          workspaceId: m.workspace === true ? "wrk_1" : null,
          directory: `/work/proj${index % 5}`
        })
        ids.push(id)
        // opencode's own rows of a session: messages with parts, todos, sometimes a share.
        for (let k = 0; k < 3; k++) db.message(id, between(m.created, m.updated), 2)
        db.todo(id, 0, m.created)
        db.todo(id, 1, m.updated)
        if (rng() < 0.2) db.share(id, m.created)
        const protectedAggregate = m.synced === true || m.workspace === true || m.updated >= now - HOUR
        for (const at of times(m.created, m.updated, perAggregate)) pending.push({ aggregate: id, time: at, protectedAggregate })
        if (m.synced === true) synced.add(id)
      }
      trees.push({ root: ids[0]!, created: tree.members[0]!.created, ids, eligible: tree.eligible })
    })
    // Aggregates whose session row is gone: their old events are candidates for `sweep events`.
    for (let i = 0; i < orphanAggregates; i++) {
      const aggregate = db.id("ses", now - 90 * DAY, true)
      for (const at of times(now - 90 * DAY, now - 20 * DAY, perAggregate)) pending.push({ aggregate, time: at, protectedAggregate: false })
    }
    // opencode appends events as they happen: the table's rows are in time order across sessions.
    pending.sort((a, b) => a.time - b.time)
    const seq = new Map<string, number>()
    for (const e of pending) seq.set(e.aggregate, (seq.get(e.aggregate) ?? -1) + 1)
    const sequence = db.db.prepare("INSERT INTO event_sequence (aggregate_id, seq, owner_id) VALUES (?, ?, ?)")
    for (const [aggregate, last] of seq) sequence.run(aggregate, last, synced.has(aggregate) ? "own_1" : null)
    const insert = db.db.prepare("INSERT INTO event (id, aggregate_id, seq, type, data) VALUES (?, ?, ?, 'message.updated.1', ?)")
    const next = new Map<string, number>()
    for (const e of pending) {
      const n = next.get(e.aggregate) ?? 0
      next.set(e.aggregate, n + 1)
      const id = db.id("evt", e.time)
      insert.run(id, e.aggregate, n, payload)
      events.push({ id, aggregate: e.aggregate, time: e.time, protectedAggregate: e.protectedAggregate })
    }
  })()
  db.close()

  const live = trees.at(-1)!.root
  trees.sort((a, b) => a.created - b.created || (a.root < b.root ? -1 : a.root > b.root ? 1 : 0))
  const eligibleEvents = events
    .filter((e) => !e.protectedAggregate && e.time < eventCutoff)
    .map(({ id, aggregate, time }) => ({ id, aggregate, time }))
    .sort((a, b) => a.time - b.time || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  return { t, now, trees, eligibleEvents, live }
}

// ---------------------------------------------------------------------------------------------------
// Reading the database back

export const column = (db: Database.Database, sql: string): Array<string> => (db.prepare(sql).pluck().all() as Array<unknown>).map(String)

export const countOf = (db: Database.Database, sql: string): number => Number(db.prepare(sql).pluck().get())

/** The per-session row counts of every table that hangs off a session, for before/after comparisons. */
export const rowsPerSession = (db: Database.Database): Map<string, string> => {
  const out = new Map<string, Record<string, number>>()
  const add = (table: string, sql: string) => {
    for (const r of db.prepare(sql).all() as Array<{ s: string; n: number }>) {
      const entry = out.get(r.s) ?? {}
      entry[table] = r.n
      out.set(r.s, entry)
    }
  }
  add("session", "SELECT id AS s, 1 AS n FROM session")
  for (const table of ["message", "part", "todo", "session_share"]) add(table, `SELECT session_id AS s, count(*) AS n FROM ${table} GROUP BY session_id`)
  add("event", "SELECT aggregate_id AS s, count(*) AS n FROM event GROUP BY aggregate_id")
  add("event_sequence", "SELECT aggregate_id AS s, 1 AS n FROM event_sequence")
  const keys = ["session", "message", "part", "todo", "session_share", "event", "event_sequence"]
  return new Map([...out].map(([s, r]) => [s, keys.map((k) => `${k}=${r[k] ?? 0}`).join(" ")]))
}

/** The ids in the archive; a line that is not an archive record is returned apart (it would be a torn append). */
export const readArchive = (home: string): { readonly ids: Set<string>; readonly lines: number; readonly torn: Array<string> } => {
  const path = archivePath(home)
  const ids = new Set<string>()
  const torn: Array<string> = []
  if (!existsSync(path)) return { ids, lines: 0, torn }
  const lines = readFileSync(path, "utf8").split("\n").filter((l) => l !== "")
  for (const line of lines) {
    const record = readArchiveLine(line)
    if (record !== undefined) ids.add(record.id)
    else torn.push(line)
  }
  return { ids, lines: lines.length, torn }
}

/** Tables with a `session_id` column in opencode 1.18.33's schema. */
export const SESSION_TABLES = ["message", "part", "todo", "session_share", "session_message", "session_input", "session_context_epoch"] as const

/**
 * What must hold after any run, finished or killed: a sound file, every foreign key satisfied, no row of a
 * per-session table left without its session (nor a part without its message), no child whose parent
 * was retired while it stayed, and every session that is gone written to the archive.
 */
export const checkSound = (db: Database.Database, before: { readonly sessions: ReadonlySet<string>; readonly parents: ReadonlyMap<string, string> }, home: string) => {
  expect(db.pragma("integrity_check", { simple: true })).toBe("ok")
  expect(db.pragma("foreign_key_check")).toEqual([])
  for (const table of SESSION_TABLES) {
    expect(countOf(db, `SELECT count(*) FROM ${table} WHERE session_id NOT IN (SELECT id FROM session)`), `${table} rows without their session`).toBe(0)
  }
  expect(countOf(db, "SELECT count(*) FROM part WHERE message_id NOT IN (SELECT id FROM message)"), "parts without their message").toBe(0)
  expect(countOf(db, "SELECT count(*) FROM event WHERE aggregate_id NOT IN (SELECT aggregate_id FROM event_sequence)"), "events without their sequence").toBe(0)
  const now = new Set(column(db, "SELECT id FROM session"))
  const orphaned = [...now].filter((id) => {
    const parent = before.parents.get(id)
    return parent !== undefined && before.sessions.has(parent) && !now.has(parent)
  })
  expect(orphaned, "children whose parent was retired without them").toEqual([])
  const gone = [...before.sessions].filter((id) => !now.has(id))
  const archive = readArchive(home)
  expect(
    gone.filter((id) => !archive.ids.has(id)),
    "retired sessions missing from the archive"
  ).toEqual([])
  return { sessions: now, gone, archive }
}

export const parentsOf = (db: Database.Database): Map<string, string> =>
  new Map((db.prepare("SELECT id, parent_id FROM session WHERE parent_id IS NOT NULL").all() as Array<{ id: string; parent_id: string }>).map((r) => [r.id, r.parent_id]))

