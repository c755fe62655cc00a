/**
 * Databases for the retention tests, built from the real schema of opencode 1.18.33
 * (`test/fixtures/opencode-1.18.33/schema.sql`), with ids encoded the way opencode encodes them.
 */
import Database from "better-sqlite3"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

export const SCHEMA = readFileSync(new URL("../fixtures/opencode-1.18.33/schema.sql", import.meta.url), "utf8")

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/** A small deterministic generator, so fixtures are the same on every run. */
export const seeded = (seed: number) => {
  let s = seed >>> 0 || 1
  return () => {
    s ^= s << 13
    s >>>= 0
    s ^= s >>> 17
    s ^= s << 5
    s >>>= 0
    return s / 4294967296
  }
}

/**
 * opencode's id: `<prefix>_<12 hex><14 base62>`, the hex part (ms × 4096 + counter) mod 2^48, bitwise
 * inverted for descending ids (sessions).
 */
export const makeId = (prefix: string, ms: number, counter: number, random: () => number, descending = false): string => {
  let v = (BigInt(ms) * 4096n + BigInt(counter)) & 0xffffffffffffn
  if (descending) v = ~v & 0xffffffffffffn
  let tail = ""
  for (let i = 0; i < 14; i++) tail += BASE62[Math.floor(random() * 62)]
  return `${prefix}_${v.toString(16).padStart(12, "0")}${tail}`
}

export interface SessionSeed {
  readonly created: number
  readonly updated?: number
  readonly parentId?: string | null
  readonly directory?: string
  readonly workspaceId?: string | null
  readonly title?: string
  readonly id?: string
}

/** A test database and the helpers that fill it like opencode would. */
export class OpencodeDb {
  readonly db: Database.Database
  private counter = 0
  private readonly random: () => number
  constructor(
    readonly path: string,
    seed = 7
  ) {
    this.random = seeded(seed)
    this.db = new Database(path)
    this.db.pragma("journal_mode = WAL")
    this.db.exec(SCHEMA)
    this.db.prepare("INSERT INTO project (id, worktree, time_created, time_updated, sandboxes) VALUES ('global', '/', 0, 0, '[]')").run()
  }

  id(prefix: string, ms: number, descending = false): string {
    return makeId(prefix, ms, ++this.counter % 4096, this.random, descending)
  }

  session(s: SessionSeed): string {
    const id = s.id ?? this.id("ses", s.created, true)
    this.db
      .prepare(
        `INSERT INTO session (id, project_id, workspace_id, parent_id, slug, directory, title, version, time_created, time_updated)
         VALUES (?, 'global', ?, ?, 'slug', ?, ?, '1.18.33', ?, ?)`
      )
      .run(id, s.workspaceId ?? null, s.parentId ?? null, s.directory ?? "/work/proj", s.title ?? `session ${id.slice(4, 10)}`, s.created, s.updated ?? s.created)
    return id
  }

  /** A message with `parts` parts, at `at`. */
  message(sessionId: string, at: number, parts = 2): string {
    const id = this.id("msg", at)
    this.db.prepare("INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)").run(id, sessionId, at, at, '{"role":"user"}')
    for (let i = 0; i < parts; i++) {
      this.db
        .prepare("INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)")
        .run(this.id("prt", at), id, sessionId, at, at, '{"type":"text","text":"hello"}')
    }
    return id
  }

  todo(sessionId: string, position: number, at: number): void {
    this.db
      .prepare("INSERT INTO todo (session_id, content, status, priority, position, time_created, time_updated) VALUES (?, 'do it', 'pending', 'low', ?, ?, ?)")
      .run(sessionId, position, at, at)
  }

  share(sessionId: string, at: number): void {
    this.db.prepare("INSERT INTO session_share (session_id, id, secret, url, time_created, time_updated) VALUES (?, ?, 's', 'https://x', ?, ?)").run(sessionId, `shr_${sessionId}`, at, at)
  }

  /** Events of an aggregate (its `event_sequence` row is created or advanced), one per time given. */
  events(aggregate: string, times: ReadonlyArray<number>, data = '{"type":"x"}'): ReadonlyArray<string> {
    const row = this.db.prepare("SELECT seq FROM event_sequence WHERE aggregate_id = ?").get(aggregate) as { seq: number } | undefined
    const first = row === undefined ? 0 : row.seq + 1
    // The sequence row comes first: `event.aggregate_id` references it.
    this.db
      .prepare("INSERT INTO event_sequence (aggregate_id, seq, owner_id) VALUES (?, ?, NULL) ON CONFLICT(aggregate_id) DO UPDATE SET seq = excluded.seq")
      .run(aggregate, first + times.length - 1)
    const insert = this.db.prepare("INSERT INTO event (id, aggregate_id, seq, type, data) VALUES (?, ?, ?, 'message.updated.1', ?)")
    return times.map((t, i) => {
      const id = this.id("evt", t)
      insert.run(id, aggregate, first + i, data)
      return id
    })
  }

  /** Marks an aggregate as in sync. */
  owner(aggregate: string, owner = "own_1"): void {
    this.db.prepare("INSERT INTO event_sequence (aggregate_id, seq, owner_id) VALUES (?, 0, ?) ON CONFLICT(aggregate_id) DO UPDATE SET owner_id = excluded.owner_id").run(aggregate, owner)
  }

  workspace(id = "wrk_1"): string {
    this.db.prepare("INSERT INTO workspace (id, type, project_id, time_used) VALUES (?, 'local', 'global', 0)").run(id)
    return id
  }

  count(table: string, where = "1"): number {
    return (this.db.prepare(`SELECT count(*) AS n FROM ${table} WHERE ${where}`).get() as { n: number }).n
  }

  ids(table: string, column = "id"): ReadonlyArray<string> {
    return (this.db.prepare(`SELECT ${column} AS v FROM ${table} ORDER BY ${column}`).all() as Array<{ v: string }>).map((r) => r.v)
  }

  /** Every row of a table, for before/after comparisons. */
  dump(table: string): ReadonlyArray<unknown> {
    return this.db.prepare(`SELECT * FROM ${table} ORDER BY rowid`).all()
  }

  close(): void {
    this.db.close()
  }
}

export interface TempDb {
  readonly dir: string
  readonly path: string
  readonly db: OpencodeDb
  readonly dispose: () => void
}

export const tempDb = (seed = 7): TempDb => {
  const dir = mkdtempSync(join(tmpdir(), "ocpool-retention-"))
  const path = join(dir, "opencode.db")
  const db = new OpencodeDb(path, seed)
  return {
    dir,
    path,
    db,
    dispose: () => {
      try {
        db.close()
      } catch {
        // already closed
      }
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
