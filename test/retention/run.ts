/** Runs the sweep programs on a real SQLite file at a fixed time (TestClock), with memory logs and host facts. */
import { Effect, Layer, TestClock } from "effect"
import type { Exit } from "effect"
import { DbHostMemory, type DbHostFacts } from "../../src/layers/retention/DbHostMemory.js"
import { memoryLines, RetentionLogMemory, type MemoryLines } from "../../src/layers/retention/RetentionLogMemory.js"
import { RetentionSqlite } from "../../src/layers/retention/RetentionSqlite.js"
import { SqliteNode } from "../../src/layers/opencodeDb/SqliteNode.js"
import { sweepEvents, type EventSweepOptions } from "../../src/cli/sweep/events.js"
import { sweepSessions, type SessionSweepOptions } from "../../src/cli/sweep/sessions.js"

/** 2026-12-01T12:00:00.000Z */
export const NOW = 1_796_126_400_000
export const DAY = 86_400_000
export const HOUR = 3_600_000

export interface Env {
  readonly lines?: MemoryLines
  readonly host?: DbHostFacts
  readonly busyTimeoutMs?: number
  readonly now?: number
}

export const layers = (path: string, env: Env = {}, readonly = false) =>
  Layer.mergeAll(
    RetentionSqlite({ busyTimeoutMs: env.busyTimeoutMs ?? 5_000 }).pipe(Layer.provide(SqliteNode(path, { readonly }))),
    RetentionLogMemory(env.lines ?? memoryLines()),
    DbHostMemory(env.host ?? { freeBytes: 1e12, openBy: [] })
  )

/**
 * Runs a program that may sleep (busy back-off, the pause that lets a writing opencode in) to its end,
 * moving the TestClock 5 ms at a time while it waits.
 */
export const settle = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const fiber = yield* Effect.fork(self)
    for (;;) {
      const exit: Exit.Exit<A, E> | null = fiber.unsafePoll()
      if (exit !== null) return yield* exit
      yield* Effect.yieldNow()
      yield* TestClock.adjust(5)
    }
  })

export const runEvents = (path: string, options: Partial<EventSweepOptions> = {}, env: Env = {}) =>
  Effect.gen(function* () {
    yield* TestClock.setTime(env.now ?? NOW)
    return yield* settle(sweepEvents({ db: path, days: 7, graceHours: 1, dryRun: false, vacuum: false, force: false, ...options }).pipe(Effect.provide(layers(path, env, options.dryRun === true))))
  })

export const runSessions = (path: string, options: Partial<SessionSweepOptions> = {}, env: Env = {}) =>
  Effect.gen(function* () {
    yield* TestClock.setTime(env.now ?? NOW)
    return yield* settle(
      sweepSessions({ db: path, days: 30, graceHours: 24, dryRun: false, withEvents: true, vacuum: false, force: false, ...options }).pipe(
        Effect.provide(layers(path, env, options.dryRun === true))
      )
    )
  })
