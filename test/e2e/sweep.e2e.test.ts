/**
 * The retention sweeps (SPEC §11) on a database written by the real opencode 1.18.33: three root
 * sessions made and answered over HTTP (one of them with an explore child spawned through the task
 * tool), the server stopped, the built `ocpool sweep sessions|events` run on its opencode.db, and
 * opencode started again on the swept data directory. `npm run test:e2e`.
 *
 * What the real database looks like after the first server stops (opencode 1.18.33): journal mode WAL,
 * and the WAL is NOT checkpointed on SIGTERM (a few MB of `opencode.db-wal` stay next to a ~250 KB
 * file), so the dry runs read through it and leave it as it is (they open the database read-only); the first
 * real sweep's connection checkpoints and removes it on close, so the later sweeps run on a file
 * without one. Both cases are covered. Every read of this file opens the database read-only, which
 * leaves the WAL alone.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { execFileSync, spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { decodeIdTime } from "../../src/core/retention/ids.js"
import { ensureOpencode, fakeConfig, sleep, startFakeLlm, startOpencode, textOf, type FakeLlm, type OpencodeHandle, type SessionInfo } from "./harness.js"
import { exploreTree, untilQuiet } from "./flows.js"

const root = new URL("../../", import.meta.url).pathname
const TURN_MS = 60_000
const KEEP = process.env["OCPOOL_E2E_KEEP"] === "1"

// Everything of this file lives under one temp dir. opencode's HOME and project dir are outside the
// harness's own work dirs, so they survive a server's stop() and a second server opens the same data;
// the sweep's archive and run logs go to $XDG_DATA_HOME = xdgData.
const work = mkdtempSync(join(tmpdir(), "ocpool-e2e-sweep-"))
const home = join(work, "home")
const projectDir = join(work, "proj")
const xdgData = join(work, "ocpool-xdg-data")
const dbPath = join(home, ".local", "share", "opencode", "opencode.db")
const archivePath = join(xdgData, "opencode-pool", "archive", "retired-sessions.jsonl")
const runLog = (name: "session-retire" | "event-prune") => join(xdgData, "opencode-pool", "runs", `${name}.jsonl`)

let binary = ""
let fake: FakeLlm | undefined
const servers: Array<OpencodeHandle> = []

/** What the first server left behind. */
const made = {
  /** The oldest root, with one explore child. */
  tree: "",
  child: "",
  /** Two plain roots, one answered prompt each. */
  a: "",
  b: "",
  startedAt: 0,
  stoppedAt: 0,
  /** Bytes of opencode.db-wal right after opencode exited (-1: no WAL file). */
  walBytesAfterStop: -1,
  /** `bytes` of the events dry run, for the real run to match. */
  eventDryRunBytes: -1
}

const start = async (): Promise<OpencodeHandle> => {
  if (fake === undefined) throw new Error("fake LLM did not start")
  const oc = await startOpencode({ binary, configJson: fakeConfig({ fakeUrl: fake.url }), home, projectDir })
  servers.push(oc)
  return oc
}

interface Run {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
  readonly json: Record<string, any>
}

/** `node bin/ocpool.js <args> --db <opencode.db>`, with the archive and run logs under xdgData and no inherited OPENCODE_DB. */
const ocpool = (...args: ReadonlyArray<string>): Run => {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith("OPENCODE_") && !k.startsWith("OCPOOL_") && !k.startsWith("XDG_")) env[k] = v
  }
  const r = spawnSync(process.execPath, [join(root, "bin/ocpool.js"), ...args, "--db", dbPath], {
    encoding: "utf8",
    env: { ...env, HOME: home, XDG_DATA_HOME: xdgData },
    timeout: 30_000
  })
  let json: Record<string, any> = {}
  try {
    json = JSON.parse(r.stdout) as Record<string, any>
  } catch {
    // the caller's expectations on status and fields fail with the output attached
  }
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, json }
}

const shown = (r: Run): string => `exit ${r.status}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`

/** Opens opencode's database read-only (a read-only connection never checkpoints or removes the WAL). */
const withDb = <A>(f: (db: Database.Database) => A): A => {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true })
  try {
    return f(db)
  } finally {
    db.close()
  }
}

const tableNames = (db: Database.Database): Array<string> =>
  (db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as Array<{ name: string }>).map((r) => r.name)

const count = (db: Database.Database, sql: string, ...params: ReadonlyArray<unknown>): number => Number((db.prepare(sql).get(...params) as { n: number }).n)

/** Row count of every table. */
const tableCounts = (): Record<string, number> => withDb((db) => Object.fromEntries(tableNames(db).map((t) => [t, count(db, `SELECT count(*) AS n FROM "${t}"`)])))

/** A digest of every row of every table: the logical content, whatever the WAL holds. */
const contentDigest = (): string =>
  withDb((db) => {
    const h = createHash("sha256")
    for (const t of tableNames(db)) h.update(`${t}\n${JSON.stringify(db.prepare(`SELECT * FROM "${t}" ORDER BY 1`).raw().all())}\n`)
    return h.digest("hex")
  })

/** opencode.db's and its WAL's bytes on disk. */
const fileFacts = () => ({
  db: createHash("sha256").update(readFileSync(dbPath)).digest("hex"),
  walBytes: existsSync(`${dbPath}-wal`) ? statSync(`${dbPath}-wal`).size : -1
})

const sessionIds = (): Array<string> => withDb((db) => (db.prepare("SELECT id FROM session ORDER BY id").all() as Array<{ id: string }>).map((r) => r.id))

/** The rows that still name one of `ids`, per table with a session_id column, plus event/event_sequence by aggregate. */
const rowsNaming = (ids: ReadonlyArray<string>): Record<string, number> =>
  withDb((db) => {
    const marks = ids.map(() => "?").join(", ")
    const out: Record<string, number> = {}
    for (const t of tableNames(db)) {
      const columns = (db.prepare("SELECT name FROM pragma_table_info(?)").all(t) as Array<{ name: string }>).map((c) => c.name)
      for (const c of ["session_id", "aggregate_id", "parent_id"].filter((x) => columns.includes(x))) {
        const n = count(db, `SELECT count(*) AS n FROM "${t}" WHERE "${c}" IN (${marks})`, ...ids)
        if (n > 0) out[`${t}.${c}`] = n
      }
    }
    out["session.id"] = count(db, `SELECT count(*) AS n FROM session WHERE id IN (${marks})`, ...ids)
    return out
  })

/** PRAGMA integrity_check and foreign_key_check on the swept file. */
const soundness = () =>
  withDb((db) => ({
    integrity: (db.pragma("integrity_check") as Array<{ integrity_check: string }>).map((r) => r.integrity_check),
    foreignKeys: db.pragma("foreign_key_check") as Array<unknown>
  }))

const jsonLines = (path: string): Array<Record<string, any>> =>
  existsSync(path)
    ? readFileSync(path, "utf8")
        .split("\n")
        .filter((l) => l.trim() !== "")
        .map((l) => JSON.parse(l) as Record<string, any>)
    : []

beforeAll(async () => {
  // The CLI under test is dist/cli.js: build it from the current sources, as pool.e2e does.
  execFileSync(process.execPath, [join(root, "scripts/build.mjs")], { cwd: root })
  binary = await ensureOpencode()
  fake = await startFakeLlm()
  mkdirSync(xdgData, { recursive: true })

  made.startedAt = Date.now()
  const oc = await start()
  // The tree first, so that it is the oldest root and `--limit 1` takes it.
  const tree = await exploreTree(oc, "child of the sweep tree", TURN_MS, "sweep e2e tree")
  made.tree = tree.session
  made.child = tree.child
  for (const key of ["a", "b"] as const) {
    const s = await oc.createSession({ title: `sweep e2e ${key}` })
    const mark = await oc.prompt(s.id, `hello ${key} [[fake:text]]`)
    await oc.waitIdle(s.id, mark, TURN_MS)
    made[key] = s.id
  }
  // nothing busy any more (the child finished inside the parent's turn) before the server goes
  await untilQuiet(oc)
  expect(await oc.status()).toEqual({})
  await oc.stop()
  made.stoppedAt = Date.now()
  made.walBytesAfterStop = existsSync(`${dbPath}-wal`) ? statSync(`${dbPath}-wal`).size : -1
  // `--days 0 --grace-hours 0` select what is older than now: let the last writes age a little.
  await sleep(50)
}, 240_000)

afterAll(async () => {
  for (const s of servers) await s.stop()
  await fake?.stop()
  if (!KEEP) rmSync(work, { recursive: true, force: true })
}, 60_000)

describe("ocpool sweep on a database written by the real opencode 1.18.33", () => {
  it("US-32 the stopped server left 4 sessions (3 roots, 1 explore child) with messages, parts and events", () => {
    const counts = tableCounts()
    console.info(`[e2e sweep] after stop: WAL ${made.walBytesAfterStop} bytes; rows ${JSON.stringify(counts)}`)
    expect(sessionIds()).toEqual([made.tree, made.child, made.a, made.b].sort())
    expect(withDb((db) => db.prepare("SELECT parent_id AS p FROM session WHERE id = ?").get(made.child))).toEqual({ p: made.tree })
    expect(counts["message"]).toBeGreaterThanOrEqual(8)
    expect(counts["part"]).toBeGreaterThan(counts["message"]!)
    expect(counts["event"]).toBeGreaterThan(0)
    // one event_sequence row per session: every session is an aggregate of the event log
    expect(counts["event_sequence"]).toBe(4)
    expect(soundness()).toEqual({ integrity: ["ok"], foreignKeys: [] })
  })

  it("US-33 every event id opencode wrote decodes to a time inside this test run, after its session was created", () => {
    const now = Date.now()
    const events = withDb(
      (db) =>
        db.prepare("SELECT e.id, e.aggregate_id AS aggregate, s.time_created AS created FROM event e LEFT JOIN session s ON s.id = e.aggregate_id").all() as Array<{
          id: string
          aggregate: string
          created: number | null
        }>
    )
    expect(events.length).toBeGreaterThan(0)
    for (const e of events) {
      const t = decodeIdTime(e.id, now)
      expect(t, e.id).toBeDefined()
      expect(t!, e.id).toBeGreaterThanOrEqual(made.startedAt)
      expect(t!, e.id).toBeLessThanOrEqual(made.stoppedAt)
      // the session row is written in the same millisecond or just before its first event
      expect(t!, e.id).toBeGreaterThanOrEqual(e.created! - 1)
    }
    expect(new Set(events.map((e) => e.aggregate))).toEqual(new Set([made.tree, made.child, made.a, made.b]))
  })

  it("US-32 sweep sessions --dry-run reports every tree and changes no row, archives nothing, and logs dryRun: true", () => {
    const counts = tableCounts()
    const digest = contentDigest()
    const filesBefore = fileFacts()
    const r = ocpool("sweep", "sessions", "--days", "0", "--grace-hours", "0", "--dry-run", "--json")
    expect(r.status, shown(r)).toBe(0)
    expect(r.json).toMatchObject({ dryRun: true, days: 0, graceHours: 0, roots: 3, sessions: 4, protected: 0, remainingRoots: 0, archived: 0, stoppedBy: null, warnings: [] })
    // the counts are those of the whole database: every session goes in a full sweep
    expect(r.json["rows"]).toEqual(
      Object.fromEntries(["part", "message", "todo", "session_share", "session_input", "session_message", "session_context_epoch", "event", "event_sequence", "session"].filter((t) => counts[t]! > 0).map((t) => [t, counts[t]]))
    )
    expect(contentDigest()).toBe(digest)
    expect(tableCounts()).toEqual(counts)
    expect(existsSync(archivePath)).toBe(false)
    expect(jsonLines(runLog("session-retire")).map((l) => l["dryRun"])).toEqual([true])
    // A dry run opens the database read-only, so opencode's leftover WAL is not checkpointed into the file.
    expect(fileFacts()).toEqual(filesBefore)
  })

  it("US-32 sweep sessions --limit 1 retires the oldest tree with its subagent child, archived first, and leaves a sound database", () => {
    const before = tableCounts()
    const r = ocpool("sweep", "sessions", "--days", "0", "--grace-hours", "0", "--limit", "1", "--json")
    expect(r.status, shown(r)).toBe(0)
    expect(r.json).toMatchObject({ dryRun: false, limit: 1, roots: 1, sessions: 2, protected: 0, remainingRoots: 2, archived: 2, stoppedBy: null, warnings: [] })
    const rows = r.json["rows"] as Record<string, number>
    console.info(`[e2e sweep] sessions --limit 1: rows ${JSON.stringify(rows)}`)
    expect(rows).toMatchObject({ session: 2, event_sequence: 2 })
    expect(rows["message"]).toBeGreaterThanOrEqual(4)
    expect(rows["part"]).toBeGreaterThan(rows["message"]!)
    expect(rows["event"]).toBeGreaterThan(0)
    // exactly the reported rows left each table, and nothing else
    const after = tableCounts()
    expect(after).toEqual(Object.fromEntries(Object.entries(before).map(([t, n]) => [t, n - (rows[t] ?? 0)])))
    expect(sessionIds()).toEqual([made.a, made.b].sort())
    expect(rowsNaming([made.tree, made.child])).toEqual({ "session.id": 0 })
    expect(soundness()).toEqual({ integrity: ["ok"], foreignKeys: [] })
    // the archive: one line per retired session, children before their parent
    const archived = jsonLines(archivePath)
    expect(archived.map((l) => l["id"])).toEqual([made.child, made.tree])
    expect(archived[0]).toMatchObject({ parentID: made.tree, projectID: "global", directory: projectDir })
    expect(archived[1]).toMatchObject({ parentID: null, title: "sweep e2e tree", directory: projectDir })
    for (const l of archived) expect(Object.keys(l).sort()).toEqual(["created", "directory", "id", "parentID", "projectID", "retiredAt", "title", "updated"])
    for (const l of archived) for (const time of ["created", "updated", "retiredAt"]) expect(typeof l[time]).toBe("number")
    expect(jsonLines(runLog("session-retire")).map((l) => [l["dryRun"], l["roots"], l["sessions"], l["noEvents"], l["vacuumed"]])).toEqual([
      [true, 3, 4, false, false],
      [false, 1, 2, false, false]
    ])
  })

  it("US-33 sweep events --dry-run counts every remaining event and changes no row", () => {
    const counts = tableCounts()
    const digest = contentDigest()
    const r = ocpool("sweep", "events", "--days", "0", "--grace-hours", "0", "--dry-run", "--json")
    expect(r.status, shown(r)).toBe(0)
    expect(r.json).toMatchObject({ dryRun: true, days: 0, clamped: false, candidates: counts["event"], rows: counts["event"], aggregates: 2, remaining: 0, chunks: 0, stoppedBy: null, warnings: [] })
    expect(r.json["bytes"]).toBeGreaterThan(0)
    made.eventDryRunBytes = r.json["bytes"]
    expect(contentDigest()).toBe(digest)
    expect(jsonLines(runLog("event-prune")).map((l) => l["dryRun"])).toEqual([true])
  })

  it("US-33 sweep events --days 0 --grace-hours 0 --vacuum prunes every event of the remaining sessions and compacts the file; the id guard passes on real ids", () => {
    const before = tableCounts()
    const keep = withDb((db) => ({
      sequence: db.prepare("SELECT * FROM event_sequence ORDER BY aggregate_id").all(),
      session: db.prepare("SELECT * FROM session ORDER BY id").all()
    }))
    // opencode is stopped, so nothing else holds the database: the vacuum may run.
    const r = ocpool("sweep", "events", "--days", "0", "--grace-hours", "0", "--vacuum", "--json")
    expect(r.status, shown(r)).toBe(0)
    expect(r.json["vacuum"]).toMatchObject({ requested: true, ran: true, refused: false })
    expect(withDb((db) => db.pragma("freelist_count", { simple: true }))).toBe(0)
    expect(r.stderr).not.toContain("encoding not recognised")
    expect(r.json).toMatchObject({ dryRun: false, candidates: before["event"], rows: before["event"], aggregates: 2, remaining: 0, chunks: 1, stoppedBy: null, warnings: [] })
    expect(r.json["rows"]).toBeGreaterThan(0)
    expect(r.json["bytes"]).toBe(made.eventDryRunBytes)
    console.info(`[e2e sweep] events: ${r.json["rows"]} rows, ${r.json["bytes"]} bytes of data, ${r.json["aggregates"]} aggregates, longest transaction ${r.json["longestTransactionMs"]} ms`)
    expect(tableCounts()).toEqual({ ...before, event: 0 })
    // event_sequence and session are never changed (US-33.11)
    expect(withDb((db) => ({ sequence: db.prepare("SELECT * FROM event_sequence ORDER BY aggregate_id").all(), session: db.prepare("SELECT * FROM session ORDER BY id").all() }))).toEqual(keep)
    expect(soundness()).toEqual({ integrity: ["ok"], foreignKeys: [] })
    const lines = jsonLines(runLog("event-prune"))
    expect(lines.map((l) => [l["dryRun"], l["rows"], l["aggregates"]])).toEqual([
      [true, before["event"], 2],
      [false, before["event"], 2]
    ])
    for (const l of lines) expect(Object.keys(l).sort()).toEqual(["aggregates", "bytes", "cutoff", "days", "dryRun", "elapsedMs", "graceHours", "rows", "ts"])
  })

  it("US-32 opencode starts again on the swept data, lists exactly the remaining sessions, loads their messages and keeps writing events", async () => {
    const oc = await start()
    const listed = await oc.request<ReadonlyArray<SessionInfo>>("GET", "/session")
    expect(listed.status).toBe(200)
    expect(listed.body.map((s) => s.id).sort()).toEqual([made.a, made.b].sort())
    expect((await oc.request("GET", `/session/${made.tree}`)).status).not.toBe(200)
    expect((await oc.request("GET", `/session/${made.child}`)).status).not.toBe(200)
    for (const key of ["a", "b"] as const) {
      const messages = await oc.messages(made[key])
      expect(messages.map((m) => m.info.role)).toEqual(["user", "assistant"])
      expect(textOf(messages[1])).toContain("FAKE-OK from model=pool-a")
    }
    // a new turn on a session whose events were all pruned: opencode appends after its event_sequence
    const seqBefore = withDb((db) => (db.prepare("SELECT seq FROM event_sequence WHERE aggregate_id = ?").get(made.a) as { seq: number }).seq)
    const mark = await oc.prompt(made.a, "again [[fake:text]]")
    await oc.waitIdle(made.a, mark, TURN_MS)
    const messages = await oc.messages(made.a)
    expect(messages.map((m) => m.info.role)).toEqual(["user", "assistant", "user", "assistant"])
    expect(textOf(messages[3])).toContain("FAKE-OK")
    const seqs = withDb((db) => (db.prepare("SELECT seq FROM event WHERE aggregate_id = ? ORDER BY seq").all(made.a) as Array<{ seq: number }>).map((r) => r.seq))
    expect(seqs.length).toBeGreaterThan(0)
    expect(seqs[0]).toBe(seqBefore + 1)
    await oc.stop()
    expect(soundness()).toEqual({ integrity: ["ok"], foreignKeys: [] })
  })
})
