/**
 * The retention sweeps next to a running opencode (SPEC §11.1, §11.3, §11.4; US-32, US-33): a second
 * process (test/retention/writer.ts: WAL, busy_timeout 5000) keeps committing short write transactions,
 * each holding the write lock 20–80 ms, while the built CLI sweeps a database of 50 000+ eligible events.
 * The sweep must wait its turn and finish (exit 0), and neither side may lose or damage a row.
 */
import { describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { spawn } from "node:child_process"
import { join } from "node:path"
import { createInterface } from "node:readline"
import {
  checkSound,
  cliReady,
  column,
  countOf,
  parentsOf,
  root,
  rowsPerSession,
  runSweep,
  sharedFixture,
  sleep,
  startSweep,
} from "./sweepCli.js"
import type { WriterOptions, WriterReport } from "./writer.js"

const shared = sharedFixture({ roots: 60, events: 52_000, eventBytes: 120, seed: 41 }, "ocpool-concurrency-", 30_000)
const copy = shared.copy

/** Starts the writer and waits for its first commit. `signal` sends a stdin line; `stop` ends it and returns what it committed. */
const startWriter = async (options: WriterOptions) => {
  const child = spawn(process.execPath, ["--import", "tsx", join(root, "test/retention/writer.ts"), JSON.stringify(options)], {
    cwd: root,
    stdio: ["pipe", "pipe", "pipe"]
  })
  let stderr = ""
  child.stderr!.on("data", (b: Buffer) => (stderr += b.toString()))
  const waiting = new Map<string, () => void>()
  let last = ""
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)))
  createInterface({ input: child.stdout! }).on("line", (line) => {
    last = line
    waiting.get(line)?.()
  })
  const lineSeen = (line: string) =>
    Promise.race([
      new Promise<void>((resolve) => waiting.set(line, resolve)),
      exited.then((code) => {
        throw new Error(`writer exited (${code}) before '${line}': ${stderr}`)
      })
    ])
  await lineSeen("ready")
  return {
    signal: (line: string) => {
      const seen = lineSeen(line === "revive" ? "revived" : line)
      child.stdin!.write(`${line}\n`)
      return seen
    },
    stop: async (): Promise<WriterReport> => {
      child.stdin!.end()
      const code = await exited
      expect(code, stderr).toBe(0)
      return JSON.parse(last) as WriterReport
    }
  }
}

const writerOptions = (db: string, extra: Partial<WriterOptions> = {}): WriterOptions => ({ db, live: shared.fixture.live, holdMs: [20, 80], gapMs: [5, 25], ...extra })

/** Writer transactions committed while the sweep ran. */
const overlapping = (w: WriterReport, from: number, to: number) => w.commits.filter((t) => t >= from && t <= to).length

const sessionsTable = (db: Database.Database) => db.prepare("SELECT * FROM session WHERE id != ? ORDER BY id").all(shared.fixture.live)

describe("sweeps beside a live opencode writer (SPEC §11.1)", () => {
  it("US-33 concurrency: sweep events waits out a writer holding the lock 20–80 ms per transaction, exits 0, and both sides' rows are right", async () => {
    const { path, home } = copy()
    const eligibleIds = new Set(shared.fixture.eligibleEvents.map((e) => e.id))
    expect(eligibleIds.size).toBeGreaterThanOrEqual(50_000)
    const before = new Database(path, { readonly: true })
    const keep = column(before, "SELECT id FROM event").filter((id) => !eligibleIds.has(id))
    const liveEvents = column(before, `SELECT id FROM event WHERE aggregate_id = '${shared.fixture.live}'`)
    const liveSeq = countOf(before, `SELECT seq FROM event_sequence WHERE aggregate_id = '${shared.fixture.live}'`)
    const liveMessages = countOf(before, `SELECT count(*) FROM message WHERE session_id = '${shared.fixture.live}'`)
    const others = sessionsTable(before)
    const sequences = before.prepare("SELECT * FROM event_sequence WHERE aggregate_id != ? ORDER BY aggregate_id").all(shared.fixture.live)
    const shape = { sessions: new Set(column(before, "SELECT id FROM session")), parents: parentsOf(before) }
    before.close()
    expect(liveEvents.length).toBeGreaterThan(0)

    const writer = await startWriter(writerOptions(path))
    const sweep = await runSweep("events", path, home)
    const sweepEnded = Date.now()
    // real time: the writer is another process, which must go on writing after the sweep ended
    await sleep(150)
    const w = await writer.stop()

    expect(sweep.code, sweep.stderr).toBe(0)
    expect(sweep.report).toMatchObject({ candidates: eligibleIds.size, rows: eligibleIds.size, remaining: 0, stoppedBy: null })
    expect(w.errors).toEqual([])
    expect(overlapping(w, sweepEnded - sweep.ms, sweepEnded), "writer transactions during the sweep").toBeGreaterThanOrEqual(5)

    const db = new Database(path, { readonly: true })
    try {
      checkSound(db, shape, home)
      // The eligible events are gone; every other event, and every one the writer committed, is there.
      expect(new Set(column(db, "SELECT id FROM event"))).toEqual(new Set([...keep, ...w.events]))
      // The live session: its old events, the writer's events, messages and parts, and its sequence.
      expect(countOf(db, `SELECT count(*) FROM event WHERE aggregate_id = '${shared.fixture.live}'`)).toBe(liveEvents.length + w.events.length)
      expect(countOf(db, `SELECT seq FROM event_sequence WHERE aggregate_id = '${shared.fixture.live}'`)).toBe(liveSeq + 3 * w.transactions)
      expect(countOf(db, `SELECT count(*) FROM message WHERE session_id = '${shared.fixture.live}'`)).toBe(liveMessages + w.transactions)
      const parts = db.prepare("SELECT 1 FROM part WHERE id = ?").pluck()
      expect(w.parts.filter((p) => parts.get(p) === undefined)).toEqual([])
      expect(w.events.length).toBe(3 * w.transactions)
      // Nothing else changed: the other sessions and every other sequence row (US-33.11).
      expect(sessionsTable(db)).toEqual(others)
      expect(db.prepare("SELECT * FROM event_sequence WHERE aggregate_id != ? ORDER BY aggregate_id").all(shared.fixture.live)).toEqual(sequences)
    } finally {
      db.close()
    }
    if (process.env.OCPOOL_CRASH_VERBOSE === "1")
      console.info(JSON.stringify({ sweep: "events", ms: sweep.ms, writerTransactions: w.transactions, during: overlapping(w, sweepEnded - sweep.ms, sweepEnded), maxLockWaitMs: w.maxLockWaitMs, longestTransactionMs: sweep.report?.longestTransactionMs, chunks: sweep.report?.chunks }))
  }, 30_000)

  it("US-32 concurrency: sweep sessions beside the writer exits 0, keeps the live session and every tree the writer brought back mid-sweep, retires the rest", async () => {
    const { path, home } = copy()
    const eligible = shared.fixture.trees.filter((t) => t.eligible)
    // The newest eligible trees go last: the writer brings them back once the sweep has planned and begun.
    const withChild = eligible.slice(-12).filter((t) => t.ids.length > 1)
    const alone = eligible.slice(-12).filter((t) => t.ids.length === 1)
    const targets = [
      ...withChild.slice(0, 2).map((t) => ({ tree: t, session: t.ids[1]!, how: "touch" as const })),
      ...alone.slice(0, 1).map((t) => ({ tree: t, session: t.root, how: "touch" as const })),
      ...eligible.slice(-12, -9).map((t) => ({ tree: t, session: t.root, how: "child" as const }))
    ].filter((x, i, all) => all.findIndex((y) => y.tree === x.tree) === i)
    expect(targets.length).toBeGreaterThanOrEqual(3)

    const before = new Database(path, { readonly: true })
    const rowsBefore = rowsPerSession(before)
    const shape = { sessions: new Set(column(before, "SELECT id FROM session")), parents: parentsOf(before) }
    const liveEvents = countOf(before, `SELECT count(*) FROM event WHERE aggregate_id = '${shared.fixture.live}'`)
    before.close()

    // The writer's revive transaction takes the write lock as the sweep starts and holds it 3 s: the sweep
    // plans meanwhile (reads do not wait in WAL mode), then waits for the lock on its first tree; only then
    // do the targets come back, so every one of them was planned and must be found changed.
    const writer = await startWriter(writerOptions(path, { revive: targets.map((t) => ({ session: t.session, how: t.how })), reviveHoldMs: 3_000 }))
    await cliReady()
    const run = startSweep("sessions", path, home)
    const revivedAt = Date.now()
    await writer.signal("revive")
    const exit = await run.exited
    const sweepEnded = Date.now()
    // real time: the writer is another process, which must go on writing after the sweep ended
    await sleep(150)
    const w = await writer.stop()

    expect(exit.code, exit.stderr).toBe(0)
    const report = JSON.parse(exit.stdout) as { roots: number; sessions: number; archived: number; remainingRoots: number; stoppedBy: string | null; warnings: Array<string> }
    expect(w.errors).toEqual([])
    expect(overlapping(w, run.started, sweepEnded), "writer transactions during the sweep").toBeGreaterThanOrEqual(1)
    const applied = w.revived.filter((r) => r.applied)
    expect(applied.length, `revived ${revivedAt - run.started} ms into the sweep: ${JSON.stringify(w.revived)}`).toBeGreaterThan(0)
    const revivedTrees = targets.filter((t) => applied.some((r) => r.session === t.session)).map((t) => t.tree)
    // Each tree brought back after planning is kept, with the warning the spec asks for, and counted out of `roots`.
    expect(report).toMatchObject({ roots: eligible.length - revivedTrees.length, remainingRoots: 0, stoppedBy: null })
    for (const t of revivedTrees) expect(report.warnings.filter((w) => w.startsWith(`kept ${t.root}: `) && w.endsWith(" since the sweep started"))).toHaveLength(1)
    expect(report.warnings).toHaveLength(revivedTrees.length)
    // The archive is written inside each tree's transaction, after the re-check: kept trees are not in it.
    expect(report.archived).toBe(report.sessions)

    const db = new Database(path, { readonly: true })
    try {
      const { sessions } = checkSound(db, shape, home)
      const children = applied.filter((r) => r.how === "child").map((r) => r.row!)
      const expected = new Set([...shared.fixture.trees.filter((t) => !t.eligible).flatMap((t) => t.ids), ...revivedTrees.flatMap((t) => t.ids), ...children])
      expect(sessions).toEqual(expected)
      // Rows of every kept session are intact; the writer's rows are all there; the retired left nothing behind.
      const rowsAfter = rowsPerSession(db)
      const touched = new Set([shared.fixture.live, ...applied.filter((r) => r.how === "touch").map((r) => r.session)])
      for (const [id, rows] of rowsBefore) {
        if (!expected.has(id) && shape.sessions.has(id)) expect(rowsAfter.has(id), `rows of retired ${id} left`).toBe(false)
        else if (!touched.has(id)) expect(rowsAfter.get(id), id).toBe(rows)
      }
      const message = db.prepare("SELECT 1 FROM message WHERE id = ?").pluck()
      expect([...w.messages, ...applied.filter((r) => r.how === "touch").map((r) => r.row!)].filter((m) => message.get(m) === undefined)).toEqual([])
      expect(countOf(db, `SELECT count(*) FROM event WHERE aggregate_id = '${shared.fixture.live}'`)).toBe(liveEvents + w.events.length)
      expect(countOf(db, `SELECT time_updated FROM session WHERE id = '${shared.fixture.live}'`)).toBeGreaterThan(shared.fixture.now)
    } finally {
      db.close()
    }
    if (process.env.OCPOOL_CRASH_VERBOSE === "1")
      console.info(JSON.stringify({ sweep: "sessions", ms: exit.ms, writerTransactions: w.transactions, maxLockWaitMs: w.maxLockWaitMs, revived: w.revived, warnings: report.warnings, retired: report.sessions, archived: report.archived }))
  }, 30_000)
})
