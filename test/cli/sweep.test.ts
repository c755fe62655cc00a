/** `ocpool sweep sessions|events` as a user runs it: flags, bad input, JSON and human output (US-32, US-33, SPEC §12). */
import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import Database from "better-sqlite3"
import { bytes, cli, DAY, root, setup, sweepHomes } from "./sweepHome.js"

sweepHomes()

const ocpool = (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: "utf8", timeout: 30_000, env: { ...process.env, OPENCODE_DB: "", ...env } })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

describe("ocpool sweep: bad input (SPEC §11.1, §12.1)", () => {
  const badValues: ReadonlyArray<readonly [string, ReadonlyArray<string>, RegExp]> = [
    ["negative days", ["--days", "-1"], /^ocpool: --days must be a number ≥ 0, got '-1'\n$/],
    ["negative days, = form", ["--days=-0.5"], /^ocpool: --days must be a number ≥ 0, got '-0.5'\n$/],
    ["non-numeric days", ["--days", "week"], /^ocpool: --days must be a number ≥ 0, got 'week'\n$/],
    ["negative grace", ["--grace-hours", "-2"], /^ocpool: --grace-hours must be a number ≥ 0, got '-2'\n$/],
    ["non-numeric limit", ["--limit", "abc"], /^ocpool: --limit must be an integer ≥ 1, got 'abc'\n$/],
    ["zero limit", ["--limit", "0"], /^ocpool: --limit must be an integer ≥ 1, got '0'\n$/],
    ["fractional limit", ["--limit", "2.5"], /^ocpool: --limit must be an integer ≥ 1, got '2.5'\n$/],
    ["days beyond the date range", ["--days", "1e9"], /^ocpool: --days must be at most 100000000, got '1e9'\n$/],
    ["infinite days", ["--days", "1e400"], /^ocpool: --days must be at most 100000000, got '1e400'\n$/],
    ["grace beyond the date range", ["--grace-hours", "1e12"], /^ocpool: --grace-hours must be at most 2400000000, got '1e12'\n$/],
    ["limit beyond a safe integer", ["--limit", "99999999999999999999"], /^ocpool: --limit must be at most 9007199254740991, got '99999999999999999999'\n$/],
    ["a value with escape sequences", ["--days", "\u001b[31m5"], /^ocpool: --days must be a number ≥ 0, got '\\u001b\[31m5'\n$/]
  ]
  const rejects = (command: "sessions" | "events", flags: ReadonlyArray<string>, message: RegExp) => {
    const s = setup()
    const before = bytes(s.db)
    const r = ocpool(["sweep", command, "--db", s.db, ...flags], { XDG_DATA_HOME: s.dataHome })
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(message)
    expect(r.stdout).toBe("")
    expect(bytes(s.db).equals(before)).toBe(true)
    expect(existsSync(join(s.dataHome, "opencode-pool"))).toBe(false)
  }
  for (const [name, flags, message] of badValues) {
    it(`US-32 sessions: ${name} is one line on stderr, exit 2, nothing changed`, () => rejects("sessions", flags, message))
    it(`US-33 events: ${name} is one line on stderr, exit 2, nothing changed`, () => rejects("events", flags, message))
  }

  it("US-33 a --db that does not exist is one line naming it, exit 2, and no file is created", () => {
    const s = setup()
    const missing = join(s.dir, "nope.db")
    const r = ocpool(["sweep", "events", "--db", missing])
    expect(r.code).toBe(2)
    expect(r.stderr).toBe(`ocpool: database ${missing} (from --db): no such file\n`)
    expect(existsSync(missing)).toBe(false)
  })

  it("US-32.11 a database without a session table: one line naming the problem, exit 2, nothing changed", () => {
    const s = setup()
    const db = new Database(s.db)
    db.pragma("foreign_keys = OFF")
    db.exec("DROP TABLE session")
    db.pragma("wal_checkpoint(TRUNCATE)")
    db.close()
    const before = bytes(s.db)
    const r = ocpool(["sweep", "sessions", "--db", s.db], { XDG_DATA_HOME: s.dataHome })
    expect(r.code).toBe(2)
    expect(r.stderr).toBe(`ocpool: ${s.db} is not an opencode database: no table 'session'; nothing changed\n`)
    expect(bytes(s.db).equals(before)).toBe(true)
    expect(existsSync(join(s.dataHome, "opencode-pool"))).toBe(false)
  })

  it("US-33 a file that is not SQLite, or lacks a column, is bad input with exit 2", () => {
    const s = setup()
    const text = join(s.dir, "notes.db")
    writeFileSync(text, "just some text, long enough to have a header".repeat(20))
    const before = bytes(text)
    const r = ocpool(["sweep", "events", "--db", text])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/^ocpool: .*notes\.db is not an opencode database: file is not a database; nothing changed\n$/)
    expect(bytes(text).equals(before)).toBe(true)
    const db = new Database(s.db)
    db.exec("ALTER TABLE event DROP COLUMN data")
    db.close()
    const r2 = ocpool(["sweep", "events", "--db", s.db])
    expect(r2.code).toBe(2)
    expect(r2.stderr).toMatch(/table 'event' has no column 'data'/)
  })

  it("US-33 OPENCODE_DB=:memory: is refused with exit 2", () => {
    const r = ocpool(["sweep", "events"], { OPENCODE_DB: ":memory:" })
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/^ocpool: OPENCODE_DB=:memory: names no file on disk/)
  })

  it("US-33 an unknown flag is one line naming it, then that command's usage only, and exit 2", () => {
    const r = ocpool(["sweep", "events", "--older-than", "3"])
    expect(r.code).toBe(2)
    expect(r.stderr.split("\n")[0]).toBe("ocpool: sweep events: unknown flag '--older-than'")
    expect(r.stderr).toMatch(/^usage: ocpool sweep events \[--db PATH\]/m)
    expect(r.stderr).not.toMatch(/status|sessions/)
  })
})

describe("ocpool sweep: output (SPEC §12.3)", () => {
  it("US-33 sweep events --json is one object with the documented keys, and finds the default database under XDG_DATA_HOME", () => {
    const s = setup()
    const r = ocpool(["sweep", "events", "--json"], { XDG_DATA_HOME: s.dataHome })
    expect(r.code).toBe(0)
    const report = JSON.parse(r.stdout) as Record<string, unknown>
    for (const key of ["dryRun", "days", "clamped", "graceHours", "cutoff", "candidates", "rows", "bytes", "aggregates", "remaining", "chunks", "stoppedBy", "vacuum", "elapsedMs", "warnings"])
      expect(report).toHaveProperty(key)
    expect(report).toMatchObject({ dryRun: false, days: 7, rows: 3, aggregates: 1, remaining: 0, chunks: 1, stoppedBy: null })
    expect(report.vacuum).toEqual({ requested: false, ran: false, refused: false, reason: null, bytesBefore: null, bytesAfter: null })
    expect(r.stdout.trim().split("\n")).toHaveLength(1)
    expect(readFileSync(join(s.dataHome, "opencode-pool", "runs", "event-prune.jsonl"), "utf8").trim().split("\n")).toHaveLength(1)
  })

  it("US-32 sweep sessions --json is one object with the documented keys; the archive and run log land in the data dir", () => {
    const s = setup()
    const r = ocpool(["sweep", "sessions", "--json"], { XDG_DATA_HOME: s.dataHome, OPENCODE_DB: "opencode.db" })
    expect(r.code).toBe(0)
    const report = JSON.parse(r.stdout) as Record<string, unknown>
    for (const key of ["dryRun", "days", "graceHours", "cutoffCreated", "cutoffUpdated", "directory", "limit", "roots", "sessions", "protected", "remainingRoots", "rows", "archived", "vacuum", "elapsedMs", "warnings"])
      expect(report).toHaveProperty(key)
    expect(report).toMatchObject({ roots: 1, sessions: 1, archived: 1, directory: null, limit: null, rows: { session: 1, message: 1, part: 2, event: 3, event_sequence: 1 } })
    const archive = readFileSync(join(s.dataHome, "opencode-pool", "archive", "retired-sessions.jsonl"), "utf8").trim().split("\n")
    expect(archive.map((l) => JSON.parse(l).id)).toEqual([s.old])
    expect(existsSync(join(s.dataHome, "opencode-pool", "runs", "session-retire.jsonl"))).toBe(true)
  })

  it("US-32 the human summary says what went and what was kept; --dry-run says nothing changed", () => {
    const s = setup()
    const dry = ocpool(["sweep", "sessions", "--db", s.db, "--dry-run", "--vacuum"], { XDG_DATA_HOME: s.dataHome })
    expect(dry.code).toBe(0)
    expect(dry.stdout).toMatch(/^sweep sessions \(dry run: nothing changed\): would retire 1 root sessions \(1 sessions in all\)/)
    expect(dry.stdout).toMatch(/vacuum: not run \(dry run: the vacuum would have run\)/)
    const real = ocpool(["sweep", "sessions", "--db", s.db], { XDG_DATA_HOME: s.dataHome })
    expect(real.code).toBe(0)
    expect(real.stdout).toMatch(/^sweep sessions: retired 1 root sessions/)
    expect(real.stdout).toMatch(/rows: part 2, message 1, event 3, event_sequence 1, session 1/)
  })

  it("US-33 the vacuum is refused with exit 75 while another process holds the database, and runs with --force", () => {
    const s = setup()
    const holder = new Database(s.db, { readonly: true })
    try {
      // This test process holds the file open, so the CLI (another process) must refuse.
      const refused = ocpool(["sweep", "events", "--db", s.db, "--vacuum"], { XDG_DATA_HOME: s.dataHome })
      expect(refused.code).toBe(75)
      expect(refused.stderr).toMatch(new RegExp(`^ocpool: vacuum refused: the database is open in another process \\(pid [0-9, ]*${process.pid}`))
      expect(refused.stdout).toMatch(/deleted 3 events/)
      const forced = ocpool(["sweep", "events", "--db", s.db, "--vacuum", "--force", "--json"], { XDG_DATA_HOME: s.dataHome })
      expect(forced.code).toBe(0)
      expect(JSON.parse(forced.stdout).vacuum).toMatchObject({ requested: true, ran: true })
    } finally {
      holder.close()
    }
  })

  it("US-32.7 US-33.16 a dry run leaves the database and the WAL opencode left behind byte for byte as they were", () => {
    const s = setup()
    // A writer killed mid-life leaves its WAL un-checkpointed, as opencode does when it is stopped.
    const writer = spawnSync(
      process.execPath,
      [
        "-e",
        `const D = require(${JSON.stringify(join(root, "node_modules/better-sqlite3"))}); const d = new D(${JSON.stringify(s.db)});
         d.pragma("wal_autocheckpoint = 0");
         d.prepare("UPDATE session SET title = 'renamed' WHERE id = ?").run(${JSON.stringify(s.fresh)});
         process.kill(process.pid, "SIGKILL")`
      ],
      { encoding: "utf8" }
    )
    expect(writer.signal).toBe("SIGKILL")
    expect(existsSync(`${s.db}-wal`)).toBe(true)
    const before = [bytes(s.db), bytes(`${s.db}-wal`)]
    for (const command of ["sessions", "events"]) {
      const r = ocpool(["sweep", command, "--db", s.db, "--dry-run", "--vacuum", "--json"], { XDG_DATA_HOME: s.dataHome })
      expect(r.code).toBe(0)
      expect(JSON.parse(r.stdout).rows).not.toEqual(0)
    }
    expect(bytes(s.db).equals(before[0]!)).toBe(true)
    expect(bytes(`${s.db}-wal`).equals(before[1]!)).toBe(true)
  })

  it("US-32.5 --directory is resolved against the working directory, with or without a trailing slash", () => {
    const s = setup()
    const db = new Database(s.db)
    const now = Date.now()
    const insert = db.prepare(
      "INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) VALUES (?, 'global', 's', ?, 't', '1', ?, ?)"
    )
    insert.run("ses_fffffffffff0InProjAAAAAAAA", join(s.dir, "proj"), now - 50 * DAY, now - 50 * DAY)
    db.close()
    const r = spawnSync(process.execPath, [cli, "sweep", "sessions", "--db", s.db, "--directory", "proj/", "--json"], {
      cwd: s.dir,
      encoding: "utf8",
      env: { ...process.env, XDG_DATA_HOME: s.dataHome }
    })
    expect(r.status).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({ directory: join(s.dir, "proj"), roots: 1 })
    const after = new Database(s.db, { readonly: true })
    expect(after.prepare("SELECT id FROM session ORDER BY id").pluck().all()).toEqual([s.old, s.fresh].sort())
    after.close()
  })

  it("US-33 a copy of a database with nothing old enough deletes nothing and exits 0", () => {
    const s = setup()
    const copy = join(s.dir, "copy.db")
    copyFileSync(s.db, copy)
    const r = ocpool(["sweep", "events", "--db", copy, "--days", "100", "--json"], { XDG_DATA_HOME: s.dataHome })
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({ candidates: 0, rows: 0, chunks: 0 })
  })
})
