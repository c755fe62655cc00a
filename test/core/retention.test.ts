/** The pure retention core: id time, windows, tree plans, event selection, chunking, vacuum verdicts (US-32, US-33). */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, FastCheck as fc, Fiber, TestClock } from "effect"
import { ID_ERA_MS } from "../../src/core/constants.js"
import { initialChunk, nextChunk, pauseAfterChunk } from "../../src/core/retention/chunks.js"
import { resolveDbPath } from "../../src/core/retention/dbPath.js"
import { appendCandidates, candidateOrder, ceilingOf, idGuard, oldest, pageCandidates, type AggregateFacts, type Candidates, type EventRow } from "../../src/core/retention/events.js"
import { decodeIdTime, ID_PATTERN } from "../../src/core/retention/ids.js"
import { deletionOrder } from "../../src/core/retention/tables.js"
import { planTrees, type SessionFacts } from "../../src/core/retention/trees.js"
import { vacuumVerdict } from "../../src/core/retention/vacuum.js"
import { eventWindow, MAX_DAYS, MAX_GRACE_HOURS, windowProblem } from "../../src/core/retention/window.js"
import { parseNonNegative, parsePositiveInteger } from "../../src/core/retention/flags.js"
import { withBusyRetry } from "../../src/cli/shared/db.js"
import { DbBusy, DbFailed } from "../../src/services/opencodeDb/errors.js"
import { makeId, seeded } from "../retention/opencodeDb.js"

const NOW = 1_796_126_400_000
const DAY = 86_400_000
const HOUR = 3_600_000

describe("id time (SPEC §11.2)", () => {
  it("US-33 the SPEC example: 23179de00001 decodes to 2026-12-01T12:00:00.000Z for any now in the next era", () => {
    const id = "evt_23179de00001AAAAAAAAAAAAAA"
    expect(decodeIdTime(id, NOW)).toBe(NOW)
    expect(decodeIdTime(id, NOW + ID_ERA_MS - 1)).toBe(NOW)
    expect(decodeIdTime(id, NOW + ID_ERA_MS)).toBe(NOW + ID_ERA_MS)
  })

  it("US-33 ids that do not have opencode's shape are never candidates", () => {
    for (const id of ["evt_23179de00001AAAA", "EVT_23179de00001AAAAAAAAAAAAAA", "evt_23179DE00001AAAAAAAAAAAAAA", "23179de00001AAAAAAAAAAAAAA", "evt_23179de00001AAAAAAAAAAAAA!", "_23179de00001AAAAAAAAAAAAAA"])
      expect(decodeIdTime(id, NOW)).toBeUndefined()
    expect(ID_PATTERN.test("ses_dd4fc3b29ffeCUaMGfmT1t8JVE")).toBe(true)
  })

  it("US-33 a real event id of opencode 1.18.33 decodes to just after its session was created", () => {
    // From test/fixtures/opencode-1.18.33/db-samples.json: session created 1796017997014.
    expect(decodeIdTime("evt_22b03c4d8001mLliTtDX5L03s8", 1_796_017_997_014 + 60_000)).toBe(1_796_017_997_016)
  })

  it.prop("US-33 encoding a time the way opencode does and decoding it gives the time back, across era boundaries", [fc.integer({ min: 0, max: ID_ERA_MS - 1 }), fc.integer({ min: 1, max: 4095 }), fc.integer({ min: 1_600_000_000_000, max: 2_500_000_000_000 })], ([age, counter, now]) => {
    const id = makeId("evt", now - age, counter, seeded(counter))
    expect(decodeIdTime(id, now)).toBe(now - age)
  })
})

describe("windows (SPEC §11.2, §11.4)", () => {
  it("US-33.7 a window longer than the era is clamped, and its cutoff precedes every decoded time", () => {
    const w = eventWindow(NOW, 2000)
    expect(w).toEqual({ cutoff: NOW - ID_ERA_MS, clamped: true, effectiveDays: ID_ERA_MS / DAY })
    expect(eventWindow(NOW, 7)).toEqual({ cutoff: NOW - 7 * DAY, clamped: false, effectiveDays: 7 })
    expect(eventWindow(NOW, 0).cutoff).toBe(NOW)
  })

  it.prop("US-33.7 no window can select an id made after now − era, so a wrapped comparison never empties the table", [fc.double({ min: 0, max: 1e6, noNaN: true }), fc.integer({ min: 0, max: ID_ERA_MS - 1 })], ([days, age]) => {
    const { cutoff } = eventWindow(NOW, days)
    const time = decodeIdTime(makeId("evt", NOW - age, 1, seeded(age + 1)), NOW)!
    expect(time < cutoff).toBe(age > days * DAY)
  })
})

const session = (id: string, over: Partial<SessionFacts> = {}): SessionFacts => ({
  id,
  parentId: null,
  directory: "/w",
  workspaceId: null,
  timeCreated: NOW - 40 * DAY,
  timeUpdated: NOW - 40 * DAY,
  ...over
})

describe("tree plans (SPEC §11.3)", () => {
  const opts = { now: NOW, days: 30, graceHours: 24 }

  it("US-32.4 recent activity anywhere in a tree keeps the whole tree", () => {
    const plan = planTrees([session("a"), session("b", { parentId: "a" }), session("c", { parentId: "b", timeUpdated: NOW - HOUR })], new Set(), opts)
    expect(plan.trees).toEqual([])
  })

  it("US-32.6 trees are ordered oldest root first, children before parents, and limit reports the rest", () => {
    const plan = planTrees(
      [session("late", { timeCreated: NOW - 31 * DAY }), session("early", { timeCreated: NOW - 50 * DAY }), session("kid", { parentId: "early" }), session("grandkid", { parentId: "kid" })],
      new Set(),
      { ...opts, limit: 1 }
    )
    expect(plan.trees).toEqual([{ root: "early", ids: ["grandkid", "kid", "early"] }])
    expect(plan.remainingRoots).toBe(1)
  })

  it("US-32.10 workspace or sync anywhere in an old tree protects it, and it is counted once", () => {
    const plan = planTrees([session("a"), session("b", { parentId: "a", workspaceId: "w" }), session("c"), session("d", { parentId: "c" })], new Set(["d"]), opts)
    expect(plan.trees).toEqual([])
    expect(plan.protectedTrees).toBe(2)
  })

  it.prop(
    "US-32 every planned tree is closed under children, old, quiet and unprotected; no session is in two trees",
    [
      fc.array(
        fc.record({
          parent: fc.option(fc.integer({ min: 0, max: 30 }), { nil: null }),
          created: fc.integer({ min: 0, max: 60 }),
          updated: fc.integer({ min: 0, max: 72 }),
          workspace: fc.boolean(),
          synced: fc.boolean()
        }),
        { maxLength: 30 }
      )
    ],
    ([rows]) => {
      const sessions = rows.map((r, i) =>
        session(`s${i}`, {
          parentId: r.parent === null ? null : `s${r.parent}`,
          timeCreated: NOW - r.created * DAY,
          timeUpdated: NOW - r.updated * HOUR,
          workspaceId: r.workspace && r.created % 3 === 0 ? "w" : null
        })
      )
      const synced = new Set(rows.flatMap((r, i) => (r.synced && r.updated % 5 === 0 ? [`s${i}`] : [])))
      const plan = planTrees(sessions, synced, opts)
      const byId = new Map(sessions.map((s) => [s.id, s]))
      const seen = new Set<string>()
      for (const tree of plan.trees) {
        const members = new Set(tree.ids)
        expect(tree.ids.at(-1)).toBe(tree.root)
        expect(byId.get(tree.root)!.timeCreated).toBeLessThan(NOW - 30 * DAY)
        for (const id of tree.ids) {
          expect(seen.has(id)).toBe(false)
          seen.add(id)
          const s = byId.get(id)!
          expect(s.timeUpdated).toBeLessThan(NOW - 24 * HOUR)
          expect(s.workspaceId).toBeNull()
          expect(synced.has(id)).toBe(false)
        }
        // Closed under children: nothing outside the tree has a parent inside it.
        for (const s of sessions) if (s.parentId !== null && members.has(s.parentId)) expect(members.has(s.id)).toBe(true)
        // Children before parents.
        for (const id of tree.ids) {
          const parent = byId.get(id)!.parentId
          if (parent !== null && members.has(parent)) expect(tree.ids.indexOf(parent)).toBeGreaterThan(tree.ids.indexOf(id))
        }
      }
    }
  )
})

describe("event selection (SPEC §11.4)", () => {
  const facts: AggregateFacts = {
    sessions: new Map([
      ["ses_quiet", { workspaceId: null, timeCreated: NOW - 60 * DAY, timeUpdated: NOW - 60 * DAY }],
      ["ses_busy", { workspaceId: null, timeCreated: NOW - 60 * DAY, timeUpdated: NOW - 10 * 60_000 }],
      ["ses_ws", { workspaceId: "w", timeCreated: NOW - 60 * DAY, timeUpdated: NOW - 60 * DAY }]
    ]),
    synced: new Set(["ses_synced_gone"])
  }
  const ev = (age: number, n: number) => makeId("evt", NOW - age, n, seeded(n))

  it("US-33.2 US-33.3 US-33.4 protected aggregates keep their events; orphans out of sync do not", () => {
    const rows: Array<EventRow> = [
      [1, ev(30 * DAY, 1), "ses_quiet", 10],
      [2, ev(30 * DAY, 2), "ses_busy", 10],
      [3, ev(30 * DAY, 3), "ses_ws", 10],
      [4, ev(30 * DAY, 4), "ses_synced_gone", 10],
      [5, ev(30 * DAY, 5), "ses_orphan", 20],
      [6, ev(3 * DAY, 6), "ses_quiet", 10],
      [7, "evt_not-an-opencode-id", "ses_quiet", 10]
    ]
    const window = { now: NOW, cutoff: NOW - 7 * DAY, graceCutoff: NOW - HOUR }
    const scan = pageCandidates(rows, facts, window)
    expect(scan.candidates.aggregates).toEqual(["ses_quiet", "ses_orphan"])
    expect(scan.candidates.bytes).toEqual([10, 20])
    expect(scan.candidates.times).toEqual([NOW - 30 * DAY, NOW - 30 * DAY])
    expect(scan).toMatchObject({ qualified: 2, qualifiedBytes: 30, qualifiedAggregates: ["ses_quiet", "ses_orphan"] })
    // Above a ceiling, rows are counted but not held.
    const capped = pageCandidates(rows, facts, window, new Map(), { time: NOW - 31 * DAY, id: "evt_" })
    expect(capped.candidates.ids).toEqual([])
    expect(capped.qualified).toBe(2)
  })

  const candidates = (...rows: ReadonlyArray<readonly [string, string, number]>): Candidates => ({
    ids: rows.map((r) => r[0]),
    aggregates: rows.map((r) => r[1]),
    times: rows.map((r) => r[2]),
    bytes: rows.map(() => 1)
  })

  it("US-33.6 candidates order by decoded time, then id; scan order is kept when it already is that order", () => {
    expect(candidateOrder(candidates(["evt_b", "x", 5], ["evt_a", "x", 5], ["evt_c", "x", 1]))).toEqual([2, 1, 0])
    expect(candidateOrder(candidates(["evt_a", "x", 1], ["evt_b", "x", 1], ["evt_c", "x", 2]))).toEqual([0, 1, 2])
    const joined = candidates(["a", "x", 1])
    appendCandidates(joined, candidates(["b", "y", 2], ["c", "z", 3]))
    expect(joined.ids).toEqual(["a", "b", "c"])
    const kept = oldest(candidates(["c", "x", 3], ["a", "x", 1], ["d", "x", 4], ["b", "x", 2]), 2)
    expect(kept.ids).toEqual(["a", "b"])
    expect(ceilingOf(kept)).toEqual({ time: 2, id: "b" })
    expect(ceilingOf(oldest(kept, 0))).toBeUndefined()
  })

  it.prop("US-33.6 the order is sorted by (time, id) and is a permutation", [fc.array(fc.tuple(fc.integer({ min: 0, max: 5 }), fc.string({ maxLength: 3 })), { maxLength: 50 })], ([rows]) => {
    const c = candidates(...rows.map(([t, id]) => [id, "x", t] as const))
    const order = candidateOrder(c)
    expect([...order].sort((a, b) => a - b)).toEqual(rows.map((_, i) => i))
    for (let k = 1; k < order.length; k++) {
      const [a, b] = [order[k - 1]!, order[k]!]
      expect(c.times[a]! < c.times[b]! || (c.times[a] === c.times[b] && c.ids[a]! <= c.ids[b]!)).toBe(true)
    }
  })

  it("US-33.13 the guard checks up to 100 candidates that have a session row and names the first bad one", () => {
    const good = Array.from({ length: 100 }, (_, i) => [`evt_${i}`, "ses_quiet", NOW - 59 * DAY] as const)
    const bad = ["evt_bad", "ses_quiet", NOW - 62 * DAY] as const
    const check = (...rows: ReadonlyArray<readonly [string, string, number]>) => idGuard(candidates(...rows), facts.sessions)
    expect(check(...good, bad)).toBeUndefined()
    expect(check(bad, ...good)).toEqual({ id: "evt_bad", decoded: NOW - 62 * DAY, sessionCreated: NOW - 60 * DAY })
    // Orphans are not samples; 24 h of slack is allowed.
    expect(check(["o", "ses_orphan", 0], ["s", "ses_quiet", NOW - 60 * DAY - 23 * HOUR])).toBeUndefined()
  })
})

describe("chunks and busy back-off (SPEC §1, §11.1)", () => {
  it("US-33.10 chunks start at 1000, halve after a slow transaction down to 50, and double back after ten fast ones", () => {
    let s = initialChunk
    expect(s.size).toBe(1000)
    for (const expected of [500, 250, 125, 62, 50, 50]) {
      s = nextChunk(s, 150)
      expect(s.size).toBe(expected)
    }
    for (let i = 0; i < 9; i++) s = nextChunk(s, 5)
    expect(s.size).toBe(50)
    s = nextChunk(s, 5)
    expect(s.size).toBe(100)
    for (let i = 0; i < 40; i++) s = nextChunk(s, 100)
    expect(s.size).toBe(1000)
  })

  it("US-33 a chunk is followed by a 5 ms pause only while another connection wrote in the last 2 s", () => {
    expect(pauseAfterChunk(10_000, undefined)).toBe(0)
    expect(pauseAfterChunk(10_000, 10_000)).toBe(5)
    expect(pauseAfterChunk(10_000, 8_001)).toBe(5)
    expect(pauseAfterChunk(10_000, 8_000)).toBe(0)
  })

  it.effect("US-33.9 the back-off waits 250, 500, 1000, 2000, 4000 ms on the Clock between tries, then gives up", () =>
    Effect.gen(function* () {
      const triedAt: Array<number> = []
      const fiber = yield* Effect.fork(
        withBusyRetry(Effect.suspend(() => Effect.zipRight(Effect.flatMap(Clock.currentTimeMillis, (t) => Effect.sync(() => triedAt.push(t))), Effect.fail(new DbBusy({ detail: "locked" }))))).pipe(
          Effect.flip
        )
      )
      for (let i = 0; i < 32; i++) yield* TestClock.adjust(250)
      expect((yield* Fiber.join(fiber))._tag).toBe("DbBusy")
      expect(triedAt).toEqual([0, 250, 750, 1_750, 3_750, 7_750])
    })
  )

  it.effect("US-33.9 a failure that is not busy is not retried", () =>
    Effect.gen(function* () {
      let attempts = 0
      const error = yield* withBusyRetry(Effect.suspend(() => (attempts++, Effect.fail(new DbFailed({ detail: "disk I/O error" }))))).pipe(Effect.flip)
      expect(error._tag).toBe("DbFailed")
      expect(attempts).toBe(1)
    })
  )

  it.effect("US-33.9 a transaction that stays busy is tried 6 times (5 retries) over 7.75 s of back-off, then fails busy", () =>
    Effect.gen(function* () {
      let attempts = 0
      const fiber = yield* Effect.fork(withBusyRetry(Effect.suspend(() => (attempts++, Effect.fail(new DbBusy({ detail: "database is locked" }))))).pipe(Effect.flip))
      yield* TestClock.adjust(7_749)
      expect(attempts).toBe(5)
      yield* TestClock.adjust(1)
      const error = yield* Fiber.join(fiber)
      expect(error._tag).toBe("DbBusy")
      expect(attempts).toBe(6)
    })
  )

  it.effect("US-33.9 a transaction that gets through on a retry succeeds", () =>
    Effect.gen(function* () {
      let attempts = 0
      const fiber = yield* Effect.fork(withBusyRetry(Effect.suspend(() => (++attempts < 3 ? Effect.fail(new DbBusy({ detail: "locked" })) : Effect.succeed("done")))))
      yield* TestClock.adjust(750)
      expect(yield* Fiber.join(fiber)).toBe("done")
    })
  )
})

describe("vacuum verdicts (SPEC §11.5)", () => {
  const base = { requested: true, dryRun: false, force: false, dbBytes: 1000, freeBytes: 5000, openBy: [] as ReadonlyArray<number> }
  it("US-33.14 US-33.15 US-33.16 refused when held open, short of disk or unknowable; --force runs; --dry-run would run", () => {
    expect(vacuumVerdict(base)._tag).toBe("Run")
    expect(vacuumVerdict({ ...base, openBy: [7] })).toMatchObject({ _tag: "Refused" })
    expect(vacuumVerdict({ ...base, freeBytes: 999 })).toMatchObject({ _tag: "Refused" })
    expect(vacuumVerdict({ ...base, openBy: undefined })).toMatchObject({ _tag: "Refused" })
    expect(vacuumVerdict({ ...base, freeBytes: undefined })).toMatchObject({ _tag: "Refused" })
    expect(vacuumVerdict({ ...base, openBy: [7], freeBytes: 1, force: true })._tag).toBe("Run")
    expect(vacuumVerdict({ ...base, dryRun: true, force: true })._tag).toBe("WouldRun")
    expect(vacuumVerdict({ ...base, requested: false })._tag).toBe("NotRequested")
  })
})

describe("flag values (SPEC §11.1, §12.1)", () => {
  it("US-32 US-33 --days and --grace-hours: 0 to their caps, fractions allowed; beyond the dates a cutoff can name is one line", () => {
    expect(parseNonNegative("days", undefined, 30, MAX_DAYS)).toEqual({ _tag: "Value", value: 30 })
    expect(parseNonNegative("days", "1.5", 30, MAX_DAYS)).toEqual({ _tag: "Value", value: 1.5 })
    expect(parseNonNegative("days", "-0", 30, MAX_DAYS)).toEqual({ _tag: "Value", value: 0 })
    expect(parseNonNegative("days", "1e8", 30, MAX_DAYS)).toEqual({ _tag: "Value", value: 1e8 })
    expect(parseNonNegative("days", "1e9", 30, MAX_DAYS)).toEqual({ _tag: "Problem", message: "--days must be at most 100000000, got '1e9'" })
    expect(parseNonNegative("days", "1e400", 30, MAX_DAYS)).toEqual({ _tag: "Problem", message: "--days must be at most 100000000, got '1e400'" })
    expect(parseNonNegative("grace-hours", "1e12", 24, MAX_GRACE_HOURS)).toEqual({ _tag: "Problem", message: "--grace-hours must be at most 2400000000, got '1e12'" })
    expect(parseNonNegative("days", "-1", 30, MAX_DAYS)).toEqual({ _tag: "Problem", message: "--days must be a number ≥ 0, got '-1'" })
    expect(parseNonNegative("days", "\u001b]0;x\u0007", 30, MAX_DAYS)).toEqual({ _tag: "Problem", message: "--days must be a number ≥ 0, got '\\u001b]0;x\\u0007'" })
    expect(parseNonNegative("days", `${"1".repeat(100)}`, 30, MAX_DAYS)).toMatchObject({ _tag: "Problem", message: expect.stringMatching(/^--days must be a number ≥ 0, got '1{40}…'$/) })
  })

  it("US-32 US-33 --limit: an integer from 1 to 2^53 − 1", () => {
    expect(parsePositiveInteger("limit", undefined)).toEqual({ _tag: "Value", value: undefined })
    expect(parsePositiveInteger("limit", "9007199254740991")).toEqual({ _tag: "Value", value: 9007199254740991 })
    expect(parsePositiveInteger("limit", "9007199254740992")).toEqual({ _tag: "Problem", message: "--limit must be at most 9007199254740991, got '9007199254740992'" })
    expect(parsePositiveInteger("limit", "0")).toEqual({ _tag: "Problem", message: "--limit must be an integer ≥ 1, got '0'" })
  })

  it("US-32 US-33 at the largest values every cutoff is still a date; a clock outside the Date range is named", () => {
    const now = Date.UTC(2026, 11, 1)
    expect(windowProblem(now, MAX_DAYS, MAX_GRACE_HOURS)).toBeUndefined()
    expect(() => new Date(now - MAX_DAYS * 86_400_000).toISOString()).not.toThrow()
    expect(windowProblem(now, 1e9, 0)).toMatch(/^--days 1000000000 puts the cutoff outside/)
    expect(windowProblem(now, 0, 1e12)).toMatch(/^--grace-hours 1000000000000 puts the cutoff outside/)
    expect(windowProblem(9e15, 0, 0)).toMatch(/^the clock reads/)
  })
})

describe("database path and tables (SPEC §11.1, §11.3)", () => {
  it("US-32.11 --db, then OPENCODE_DB (relative to the opencode data dir), then the default; :memory: is refused", () => {
    const base = { dataHome: "/home/u/.local/share", cwd: "/work" }
    expect(resolveDbPath({ ...base, flag: "x.db", env: "/other.db" })).toEqual({ _tag: "Path", path: "/work/x.db", from: "--db" })
    expect(resolveDbPath({ ...base, env: "custom.db" })).toEqual({ _tag: "Path", path: "/home/u/.local/share/opencode/custom.db", from: "OPENCODE_DB" })
    expect(resolveDbPath({ ...base, env: "/abs/o.db" })).toMatchObject({ path: "/abs/o.db" })
    expect(resolveDbPath(base)).toMatchObject({ path: "/home/u/.local/share/opencode/opencode.db", from: "default" })
    expect(resolveDbPath({ ...base, env: ":memory:" })._tag).toBe("Problem")
    expect(resolveDbPath({ ...base, flag: ":memory:" })._tag).toBe("Problem")
  })

  it("US-32.1 tables that reference another per-session table lose their rows first (part before message)", () => {
    expect(
      deletionOrder([
        { name: "message", references: ["session"] },
        { name: "part", references: ["message"] },
        { name: "todo", references: ["session"] }
      ])
    ).toEqual(["part", "message", "todo"])
  })
})
