/**
 * Fuzz family: the sweeps' flags and the rows they select from. Random and hostile flag text goes
 * through the flag parsers and the window check; accepted values give windows whose cutoffs are dates
 * and run lines of the spec's shape. Random small opencode databases (temp files copied from one
 * template: sessions with random times, parents, cycles, workspaces and sync owners; events with ids
 * of opencode's shape and others) go through both sweep programs in-process, with random flags in
 * range: no defect escapes, the only failure is the documented id guard, the rows left are exactly the
 * rows not reported, no protected or recent session is touched, and the records are written only in
 * the given data directory, in the spec's formats.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Cause, Effect, Exit, Layer, ManagedRuntime, TestClock, TestContext } from "effect"
import fc from "fast-check"
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { sweepEvents } from "../../src/cli/sweep/events.js"
import { sweepSessions } from "../../src/cli/sweep/sessions.js"
import { DAY_MS, HOUR_MS, ID_ERA_MS } from "../../src/core/constants.js"
import { FLAG_TEXT_MAX, parseNonNegative, parsePositiveInteger } from "../../src/core/retention/flags.js"
import { planTrees, type SessionFacts } from "../../src/core/retention/trees.js"
import { eventRunLine, readArchiveLine, sessionRunLine } from "../../src/core/retention/records.js"
import { eventWindow, isValidTime, MAX_DAYS, MAX_GRACE_HOURS, sessionWindow, windowProblem } from "../../src/core/retention/window.js"
import { DbHostMemory } from "../../src/layers/retention/DbHostMemory.js"
import { RetentionLogFile } from "../../src/layers/retention/RetentionLogFile.js"
import { RetentionSqlite } from "../../src/layers/retention/RetentionSqlite.js"
import { SqliteNode } from "../../src/layers/opencodeDb/SqliteNode.js"
import { makeId, SCHEMA, seeded } from "../retention/opencodeDb.js"
import { FUZZ_RUNS, fuzzParams, fuzzTimeout, hostileNumber, hostileString } from "./common.js"

/** 2026-12-01T12:00:00.000Z, the clock of every database case. */
const NOW = 1_796_126_400_000

const SESSION_RUN_KEYS = ["ts", "days", "graceHours", "directory", "limit", "cutoffCreated", "cutoffUpdated", "roots", "sessions", "protected", "remainingRoots", "rows", "noEvents", "dryRun", "vacuumed", "elapsedMs"]
const EVENT_RUN_KEYS = ["ts", "days", "graceHours", "cutoff", "rows", "bytes", "aggregates", "dryRun", "elapsedMs"]

/** Flag text a user (or a script gone wrong) may pass. */
const flagText: fc.Arbitrary<string> = fc.oneof(
  hostileString,
  hostileNumber.map(String),
  hostileNumber.map((n) => n.toExponential()),
  fc.double({ min: 0, max: 2 * MAX_GRACE_HOURS, noNaN: true }).map(String),
  fc.integer({ min: -5, max: 1_000_000 }).map(String),
  fc.constantFrom("1e9", "1e12", "1e400", "-0", "+5", " 7 ", "0.5", ".5", "5.", "1_000", "0x10", "1e-400", "9".repeat(FLAG_TEXT_MAX + 1), `${"1".repeat(30_000)}x`)
)

/** A database case costs about 15 ms (a fresh file, connection and schema read), so this property runs a tenth of FUZZ_RUNS. */
const DB_RUNS = Math.max(20, Math.ceil(FUZZ_RUNS / 10))

/** Each case must end within this (the sweeps never sleep here: no other writer, no busy database). */
const CASE_MS = 5_000

const bounded = async <A>(p: Promise<A>): Promise<A> => {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`the sweep did not end within ${CASE_MS} ms`)), CASE_MS)))])
  } finally {
    clearTimeout(timer)
  }
}

const oneLine = (message: string) => {
  expect(message).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/)
  expect([...message].length).toBeLessThan(200)
}

describe("fuzz: sweep flags (SPEC §11.1, §12.1)", () => {
  it(
    "US-32 US-33 any flag text is a value in range or one printable line naming the flag; accepted values give dated windows and spec-shaped run lines",
    () => {
      fc.assert(
        fc.property(flagText, flagText, fc.option(flagText, { nil: undefined }), fc.integer({ min: 0, max: 4_102_444_800_000 }), (daysText, graceText, limitText, now) => {
          const started = performance.now()
          const days = parseNonNegative("days", daysText, 30, MAX_DAYS)
          const grace = parseNonNegative("grace-hours", graceText, 24, MAX_GRACE_HOURS)
          const limit = parsePositiveInteger("limit", limitText)
          for (const [flag, parsed] of [["days", days], ["grace-hours", grace], ["limit", limit]] as const) {
            if (parsed._tag === "Problem") {
              expect(parsed.message.startsWith(`--${flag} must be `)).toBe(true)
              oneLine(parsed.message)
            }
          }
          if (days._tag === "Value") expect(days.value >= 0 && days.value <= MAX_DAYS && !Object.is(days.value, -0)).toBe(true)
          if (grace._tag === "Value") expect(grace.value >= 0 && grace.value <= MAX_GRACE_HOURS).toBe(true)
          if (limit._tag === "Value" && limit.value !== undefined) expect(Number.isSafeInteger(limit.value) && limit.value >= 1).toBe(true)
          if (days._tag === "Value" && grace._tag === "Value" && limit._tag === "Value") {
            // In range, every cutoff is a date at any clock from 1970 to 2100.
            expect(windowProblem(now, days.value, grace.value)).toBeUndefined()
            const s = sessionWindow(now, days.value, grace.value)
            const e = eventWindow(now, days.value)
            expect([s.cutoffCreated, s.cutoffUpdated, e.cutoff].every(isValidTime)).toBe(true)
            expect(e.cutoff).toBeGreaterThanOrEqual(now - ID_ERA_MS)
            const run = JSON.parse(
              sessionRunLine({
                at: now,
                days: days.value,
                graceHours: grace.value,
                directory: null,
                limit: limit.value ?? null,
                cutoffCreated: s.cutoffCreated,
                cutoffUpdated: s.cutoffUpdated,
                roots: 0,
                sessions: 0,
                protectedTrees: 0,
                remainingRoots: 0,
                rows: {},
                noEvents: false,
                dryRun: true,
                vacuumed: false,
                elapsedMs: 0
              })
            ) as Record<string, unknown>
            expect(Object.keys(run)).toEqual(SESSION_RUN_KEYS)
            expect(run.cutoffCreated).toBe(new Date(s.cutoffCreated).toISOString())
            const events = JSON.parse(
              eventRunLine({ at: now, days: e.effectiveDays, graceHours: grace.value, cutoff: e.cutoff, rows: 0, bytes: 0, aggregates: 0, dryRun: true, elapsedMs: 0 })
            ) as Record<string, unknown>
            expect(Object.keys(events)).toEqual(EVENT_RUN_KEYS)
          }
          expect(performance.now() - started).toBeLessThan(1_000)
        }),
        fuzzParams()
      )
    },
    fuzzTimeout(1)
  )

  it(
    "US-32 the tree plan takes any rows (cycles, missing parents, hostile times) without throwing: disjoint old, quiet, unprotected trees, at most --limit",
    () => {
      const sessionRows = fc.array(
        fc.record({
          parent: fc.option(fc.nat(15), { nil: null }),
          created: fc.oneof(hostileNumber, fc.integer({ min: NOW - 400 * DAY_MS, max: NOW })),
          updated: fc.oneof(hostileNumber, fc.integer({ min: NOW - 400 * DAY_MS, max: NOW })),
          workspace: fc.boolean(),
          synced: fc.boolean(),
          directory: fc.constantFrom("/a", "/b")
        }),
        { maxLength: 16 }
      )
      fc.assert(
        fc.property(
          sessionRows,
          fc.double({ min: 0, max: MAX_DAYS, noNaN: true }),
          fc.double({ min: 0, max: MAX_GRACE_HOURS, noNaN: true }),
          fc.option(fc.integer({ min: 1, max: 20 }), { nil: undefined }),
          fc.option(fc.constantFrom("/a", "/b"), { nil: undefined }),
          (rows, days, graceHours, limit, directory) => {
            const sessions: Array<SessionFacts> = rows.map((r, i) => ({
              id: `ses_${i}`,
              parentId: r.parent === null ? null : `ses_${r.parent}`,
              directory: r.directory,
              workspaceId: r.workspace ? "wrk_1" : null,
              timeCreated: r.created,
              timeUpdated: r.updated
            }))
            const synced = new Set(rows.flatMap((r, i) => (r.synced ? [`ses_${i}`] : [])))
            const plan = planTrees(sessions, synced, { now: NOW, days, graceHours, directory, limit })
            const ids = plan.trees.flatMap((t) => [...t.ids])
            expect(new Set(ids).size).toBe(ids.length)
            if (limit !== undefined) expect(plan.trees.length).toBeLessThanOrEqual(limit)
            expect(plan.remainingRoots).toBeGreaterThanOrEqual(0)
            const byId = new Map(sessions.map((s) => [s.id, s]))
            for (const t of plan.trees) {
              const root = byId.get(t.root)!
              expect(root.timeCreated < plan.cutoffCreated).toBe(true)
              if (directory !== undefined) expect(root.directory).toBe(directory)
              expect(t.ids[t.ids.length - 1]).toBe(t.root)
              for (const id of t.ids) {
                const s = byId.get(id)!
                expect(s.timeUpdated < plan.cutoffUpdated && s.workspaceId === null && !synced.has(id)).toBe(true)
              }
            }
          }
        ),
        fuzzParams()
      )
    },
    fuzzTimeout(1)
  )
})

describe("fuzz: sweeps over random small databases (SPEC §11.3, §11.4)", () => {
  let dir = ""
  let template = ""
  // One test environment (TestClock) for every case: building it costs more than a case.
  const testRuntime = ManagedRuntime.make(TestContext.TestContext)
  afterAll(() => testRuntime.dispose())
  beforeAll(() => {
    // A memory file system where there is one: SQLite's and the records' fsyncs cost nothing there.
    dir = mkdtempSync(join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), "ocpool-fuzz-sweep-"))
    template = join(dir, "template.db")
    const db = new Database(template)
    db.pragma("journal_mode = DELETE")
    db.exec(SCHEMA)
    db.prepare("INSERT INTO project (id, worktree, time_created, time_updated, sandboxes) VALUES ('global', '/', 0, 0, '[]')").run()
    db.prepare("INSERT INTO workspace (id, type, project_id, time_used) VALUES ('wrk_1', 'local', 'global', 0)").run()
    db.close()
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  const sessionArb = fc.record({
    parent: fc.option(fc.nat(9), { nil: null }),
    createdAgo: fc.oneof(fc.integer({ min: 0, max: 60 * DAY_MS }), fc.constantFrom(-DAY_MS, 2 * ID_ERA_MS, NOW + 10 * DAY_MS)),
    updatedAgo: fc.oneof(fc.integer({ min: 0, max: 60 * DAY_MS }), fc.constant(0)),
    workspace: fc.boolean(),
    owner: fc.boolean(),
    events: fc.array(
      fc.oneof(
        fc.record({ ago: fc.integer({ min: -DAY_MS, max: 2 * ID_ERA_MS }), odd: fc.constant(false) }),
        fc.record({ ago: fc.constant(0), odd: fc.constant(true) })
      ),
      { maxLength: 6 }
    )
  })
  const caseArb = fc.record({
    sessions: fc.array(sessionArb, { maxLength: 10 }),
    orphanEvents: fc.array(fc.integer({ min: 0, max: 60 * DAY_MS }), { maxLength: 4 }),
    sweep: fc.constantFrom("sessions", "events"),
    days: fc.oneof(fc.double({ min: 0, max: 60, noNaN: true }), fc.constantFrom(0, 1e6, MAX_DAYS)),
    graceHours: fc.oneof(fc.double({ min: 0, max: 100, noNaN: true }), fc.constantFrom(0, MAX_GRACE_HOURS)),
    limit: fc.option(fc.integer({ min: 1, max: 12 }), { nil: undefined }),
    dryRun: fc.boolean(),
    noEvents: fc.boolean(),
    seed: fc.nat()
  })

  it(
    "US-32 US-33 both sweeps on random databases with flags in range: no defect, only the id guard may refuse, reported rows are the rows gone, records only in the data dir",
    async () => {
      let n = 0
      await fc.assert(
        fc.asyncProperty(caseArb, async (c) => {
          const started = performance.now()
          const k = n++
          const caseDir = join(dir, `case-${k}`)
          const path = join(dir, `case-${k}.db`)
          copyFileSync(template, path)
          const random = seeded(c.seed + 1)
          let counter = 0
          const db = new Database(path)
          db.pragma("foreign_keys = OFF")
          db.exec("BEGIN")
          const ids = c.sessions.map((s) => makeId("ses", NOW - s.createdAgo, ++counter % 4096, random, true))
          const insertSession = db.prepare(
            "INSERT INTO session (id, project_id, workspace_id, parent_id, slug, directory, title, version, time_created, time_updated) VALUES (?, 'global', ?, ?, 's', '/w', ?, '1', ?, ?)"
          )
          const insertSeq = db.prepare("INSERT INTO event_sequence (aggregate_id, seq, owner_id) VALUES (?, 0, ?)")
          const insertEvent = db.prepare("INSERT INTO event (id, aggregate_id, seq, type, data) VALUES (?, ?, ?, 't', '{}')")
          c.sessions.forEach((s, i) => {
            const parent = s.parent === null ? null : s.parent < ids.length ? ids[s.parent]! : "ses_missing"
            const created = NOW - s.createdAgo
            insertSession.run(ids[i]!, s.workspace ? "wrk_1" : null, parent === ids[i] ? null : parent, "\u001b[31mt\u0007", created, Math.max(created, NOW - s.updatedAgo))
            insertSeq.run(ids[i]!, s.owner ? "own_1" : null)
            for (const e of s.events) insertEvent.run(e.odd ? `evt_${++counter}` : makeId("evt", NOW - e.ago, ++counter % 4096, random), ids[i]!, counter)
          })
          insertSeq.run("ses_gone", null)
          for (const ago of c.orphanEvents) insertEvent.run(makeId("evt", NOW - ago, ++counter % 4096, random), "ses_gone", counter)
          const before = {
            sessions: (db.prepare("SELECT count(*) AS n FROM session").get() as { n: number }).n,
            events: (db.prepare("SELECT count(*) AS n FROM event").get() as { n: number }).n,
            kept: db
              .prepare("SELECT id FROM session WHERE workspace_id IS NOT NULL OR id IN (SELECT aggregate_id FROM event_sequence WHERE owner_id IS NOT NULL) ORDER BY id")
              .pluck()
              .all() as Array<string>,
            recent: (db.prepare("SELECT count(*) AS n FROM session WHERE time_updated >= ?").get(NOW - c.graceHours * HOUR_MS) as { n: number }).n
          }
          db.exec("COMMIT")
          db.close()

          const live = Layer.mergeAll(RetentionSqlite({ busyTimeoutMs: 50 }).pipe(Layer.provide(SqliteNode(path, { readonly: c.dryRun }))), RetentionLogFile(caseDir), DbHostMemory({}))
          const base = { db: path, days: c.days, graceHours: c.graceHours, limit: c.limit, dryRun: c.dryRun, vacuum: false, force: false }
          const program =
            c.sweep === "sessions"
              ? sweepSessions({ ...base, withEvents: !c.noEvents }).pipe(Effect.map((r) => ({ sessions: r.rows["session"] ?? 0, events: r.rows["event"] ?? 0, stoppedBy: r.stoppedBy, warnings: r.warnings })))
              : sweepEvents(base).pipe(Effect.map((r) => ({ sessions: 0, events: r.rows, stoppedBy: r.stoppedBy, warnings: r.warnings })))
          const exit = await bounded(
            testRuntime.runPromiseExit(
              Effect.gen(function* () {
                yield* TestClock.setTime(NOW)
                return yield* program.pipe(Effect.provide(live))
              })
            )
          )

          const after = new Database(path, { readonly: true })
          const left = {
            sessions: (after.prepare("SELECT count(*) AS n FROM session").get() as { n: number }).n,
            events: (after.prepare("SELECT count(*) AS n FROM event").get() as { n: number }).n,
            kept: after.prepare(`SELECT id FROM session WHERE id IN (${before.kept.map(() => "?").join(",") || "''"}) ORDER BY id`).pluck().all(...before.kept) as Array<string>,
            recent: (after.prepare("SELECT count(*) AS n FROM session WHERE time_updated >= ?").get(NOW - c.graceHours * HOUR_MS) as { n: number }).n
          }
          after.close()

          if (Exit.isFailure(exit)) {
            // The one documented refusal on good flags: ids that do not decode (nothing deleted).
            const failure = Cause.failureOption(exit.cause)
            expect(failure._tag === "Some" ? failure.value._tag : Cause.pretty(exit.cause)).toBe("IdEncodingUnknown")
            expect(left.sessions).toBe(before.sessions)
            expect(left.events).toBe(before.events)
          } else {
            const r = exit.value
            expect(r.stoppedBy).toBeNull()
            if (c.dryRun) {
              expect(left.sessions).toBe(before.sessions)
              expect(left.events).toBe(before.events)
            } else {
              expect(left.sessions).toBe(before.sessions - r.sessions)
              expect(left.events).toBe(before.events - r.events)
            }
            expect(left.kept).toEqual(before.kept)
            expect(left.recent).toBe(before.recent)
          }
          // Nothing outside the case's data dir: the only new files are the database and the records under it.
          if (existsSync(caseDir)) {
            for (const sub of readdirSync(caseDir)) expect(["archive", "runs"]).toContain(sub)
            const archive = join(caseDir, "archive", "retired-sessions.jsonl")
            if (existsSync(archive)) for (const line of readFileSync(archive, "utf8").trim().split("\n")) expect(readArchiveLine(line)).toBeDefined()
            const runs = join(caseDir, "runs")
            if (existsSync(runs))
              for (const file of readdirSync(runs)) {
                const keys = file === "session-retire.jsonl" ? SESSION_RUN_KEYS : EVENT_RUN_KEYS
                for (const line of readFileSync(join(runs, file), "utf8").trim().split("\n")) expect(Object.keys(JSON.parse(line) as object)).toEqual(keys)
              }
          }
          rmSync(caseDir, { recursive: true, force: true })
          rmSync(path, { force: true })
          expect(readdirSync(dir).sort()).toEqual(["template.db"])
          expect(performance.now() - started).toBeLessThan(CASE_MS)
        }),
        fuzzParams(DB_RUNS)
      )
    },
    fuzzTimeout(60, DB_RUNS)
  )
})

