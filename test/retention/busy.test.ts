/**
 * A database another connection has locked (SPEC §11.1, §12.1): opening and checking it is a busy
 * database, not a file that is not an opencode database. The sweep backs off on the Clock as it does
 * around its transactions, and either gets through or stops with DbBusy (exit 75), nothing changed.
 */
import { describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Effect, type Exit, Layer, TestClock } from "effect"
import { sweepEvents } from "../../src/cli/sweep/events.js"
import { sweepSessions } from "../../src/cli/sweep/sessions.js"
import { memoryLines } from "../../src/layers/retention/RetentionLogMemory.js"
import { RetentionStore } from "../../src/services/retention/RetentionStore.js"
import { DbBusy } from "../../src/services/opencodeDb/errors.js"
import { tempDb, type TempDb } from "./opencodeDb.js"
import { DAY, NOW, layers, runEvents, runSessions } from "./run.js"

/** A database in rollback-journal mode (a writer's EXCLUSIVE lock shuts readers out) with one old session and its events. */
const withLockedDb = <A, E, R>(body: (t: TempDb, locker: Database.Database) => Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const t = tempDb()
      const s = t.db.session({ created: NOW - 40 * DAY })
      t.db.events(s, [NOW - 40 * DAY, NOW - 39 * DAY])
      t.db.db.pragma("journal_mode = DELETE")
      const locker = new Database(t.path)
      locker.exec("BEGIN EXCLUSIVE")
      return { t, locker }
    }),
    ({ t, locker }) => body(t, locker),
    ({ t, locker }) =>
      Effect.sync(() => {
        if (locker.inTransaction) locker.exec("ROLLBACK")
        locker.close()
        t.dispose()
      })
  )

const withDb = <A, E, R>(body: (t: TempDb) => Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => tempDb()),
    body,
    (t) => Effect.sync(() => t.dispose())
  )

/** Runs `self` forked, moving the TestClock 50 ms at a time; `at(ms)` runs once the clock passed NOW + ms. */
const driven = <A, E>(self: Effect.Effect<A, E>, at: ReadonlyArray<readonly [number, () => void]> = []) =>
  Effect.gen(function* () {
    yield* TestClock.setTime(NOW)
    const fiber = yield* Effect.fork(self)
    const pending = [...at]
    for (let elapsed = 0; ; elapsed += 50) {
      const exit: Exit.Exit<A, E> | null = fiber.unsafePoll()
      if (exit !== null) return { exit, elapsed }
      while (pending.length > 0 && pending[0]![0] <= elapsed) pending.shift()![1]()
      yield* Effect.yieldNow()
      yield* TestClock.adjust(50)
      if (elapsed > 60_000) return yield* Effect.dieMessage("the sweep did not end")
    }
  })

describe("a locked database (SPEC §11.1)", () => {
  for (const sweep of ["sessions", "events"] as const) {
    it.effect(`US-3${sweep === "sessions" ? 2 : 3} sweep ${sweep} on a database locked throughout stops busy after the back-off, not as 'not an opencode database'`, () =>
      withLockedDb((t) =>
        Effect.gen(function* () {
          const lines = memoryLines()
          const program: Effect.Effect<unknown, { readonly _tag: string }> =
            sweep === "sessions"
              ? sweepSessions({ db: t.path, days: 30, graceHours: 24, dryRun: false, withEvents: true, vacuum: false, force: false }).pipe(Effect.provide(layers(t.path, { lines, busyTimeoutMs: 1 })))
              : sweepEvents({ db: t.path, days: 7, graceHours: 1, dryRun: false, vacuum: false, force: false }).pipe(Effect.provide(layers(t.path, { lines, busyTimeoutMs: 1 })))
          const { exit, elapsed } = yield* driven(Effect.flip(program))
          expect(exit).toMatchObject({ _tag: "Success", value: { _tag: "DbBusy", reason: "database is locked" } })
          // The whole back-off ran: 250 + 500 + 1000 + 2000 + 4000 ms.
          expect(elapsed).toBeGreaterThanOrEqual(7_750)
          // Nothing was archived, no run line: the sweep never reached its deletions.
          expect(lines.archive).toEqual([])
          expect(lines.runs["session-retire"]).toEqual([])
          expect(lines.runs["event-prune"]).toEqual([])
        })
      )
    )
  }

  it.effect("US-32 sweep sessions --dry-run on a locked database is busy too (a read-only open)", () =>
    withLockedDb((t) =>
      Effect.gen(function* () {
        const program = sweepSessions({ db: t.path, days: 30, graceHours: 24, dryRun: true, withEvents: true, vacuum: false, force: false }).pipe(
          Effect.provide(layers(t.path, { busyTimeoutMs: 1 }, true))
        )
        const { exit } = yield* driven(Effect.flip(program))
        expect(exit).toMatchObject({ _tag: "Success", value: { _tag: "DbBusy" } })
      })
    )
  )

  it.effect("US-32 a lock released during the back-off: sweep sessions gets through and retires the old session", () =>
    withLockedDb((t, locker) =>
      Effect.gen(function* () {
        const lines = memoryLines()
        const program = sweepSessions({ db: t.path, days: 30, graceHours: 24, dryRun: false, withEvents: true, vacuum: false, force: false }).pipe(
          Effect.provide(layers(t.path, { lines, busyTimeoutMs: 1 }))
        )
        const { exit } = yield* driven(program, [[1_000, () => (locker.exec("COMMIT"))]])
        expect(exit).toMatchObject({ _tag: "Success", value: { roots: 1, stoppedBy: null } })
        expect(t.db.count("session")).toBe(0)
        expect(lines.archive).toHaveLength(1)
      })
    )
  )

  it.effect("US-33 a lock released during the back-off: sweep events gets through and prunes the old events", () =>
    withLockedDb((t, locker) =>
      Effect.gen(function* () {
        const program = sweepEvents({ db: t.path, days: 7, graceHours: 1, dryRun: false, vacuum: false, force: false }).pipe(Effect.provide(layers(t.path, { busyTimeoutMs: 1 })))
        const { exit } = yield* driven(program, [[600, () => locker.exec("COMMIT")]])
        expect(exit).toMatchObject({ _tag: "Success", value: { rows: 2, stoppedBy: null } })
        expect(t.db.count("event")).toBe(0)
      })
    )
  )

  it.effect("US-32 a database that is not opencode's is still refused at once as not an opencode database", () =>
    Effect.acquireUseRelease(
      Effect.sync(() => {
        const t = tempDb()
        t.db.db.exec("DROP TABLE event")
        return t
      }),
      (t) =>
        Effect.gen(function* () {
          const e1 = yield* runSessions(t.path).pipe(Effect.flip)
          const e2 = yield* runEvents(t.path).pipe(Effect.flip)
          expect(e1).toMatchObject({ _tag: "NotOpencodeDb", reason: "no table 'event'" })
          expect(e2).toMatchObject({ _tag: "NotOpencodeDb", reason: "no table 'event'" })
        }),
      (t) => Effect.sync(() => t.dispose())
    )
  )

  /** The live store, with one of its reads failing busy on every try. */
  const busyRead = (path: string, read: "countTree" | "treeChanged" | "scanEvents", lines = memoryLines()) =>
    Layer.effect(
      RetentionStore,
      Effect.map(RetentionStore, (store) => RetentionStore.of({ ...store, [read]: () => Effect.fail(new DbBusy({ detail: "database is locked" })) }))
    ).pipe(Layer.provideMerge(layers(path, { lines })))

  it.effect("US-32 a tree check that stays busy midway stops sweep sessions busy: nothing of that tree goes, the remainder is reported, the run line is written", () =>
    withDb((t) =>
      Effect.gen(function* () {
        t.db.session({ created: NOW - 40 * DAY })
        t.db.session({ created: NOW - 41 * DAY })
        const lines = memoryLines()
        const program = sweepSessions({ db: t.path, days: 30, graceHours: 24, dryRun: false, withEvents: true, vacuum: false, force: false }).pipe(
          Effect.provide(busyRead(t.path, "treeChanged", lines))
        )
        const { exit } = yield* driven(program)
        expect(exit).toMatchObject({ _tag: "Success", value: { roots: 0, remainingRoots: 2, stoppedBy: "busy", stopReason: "database is locked" } })
        expect(t.db.count("session")).toBe(2)
        expect(lines.archive).toEqual([])
        expect(JSON.parse(lines.runs["session-retire"][0]!)).toMatchObject({ roots: 0, remainingRoots: 2 })
      })
    )
  )

  it.effect("US-32 a dry run whose counts stay busy stops busy too", () =>
    withDb((t) =>
      Effect.gen(function* () {
        t.db.session({ created: NOW - 40 * DAY })
        const program = sweepSessions({ db: t.path, days: 30, graceHours: 24, dryRun: true, withEvents: true, vacuum: false, force: false }).pipe(
          Effect.provide(busyRead(t.path, "countTree"))
        )
        const { exit } = yield* driven(program)
        expect(exit).toMatchObject({ _tag: "Success", value: { roots: 0, remainingRoots: 1, stoppedBy: "busy" } })
      })
    )
  )

  it.effect("US-33 an event scan that stays busy before anything was deleted fails busy (exit 75), nothing deleted", () =>
    withDb((t) =>
      Effect.gen(function* () {
        const s = t.db.session({ created: NOW - 40 * DAY })
        t.db.events(s, [NOW - 40 * DAY])
        const program = sweepEvents({ db: t.path, days: 7, graceHours: 1, dryRun: false, vacuum: false, force: false }).pipe(Effect.provide(busyRead(t.path, "scanEvents")))
        const { exit, elapsed } = yield* driven(Effect.flip(program))
        expect(exit).toMatchObject({ _tag: "Success", value: { _tag: "DbBusy" } })
        expect(elapsed).toBeGreaterThanOrEqual(7_750)
        expect(t.db.count("event")).toBe(1)
      })
    )
  )
})

