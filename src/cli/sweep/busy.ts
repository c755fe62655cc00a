/**
 * The busy back-off around one database step (SPEC §11.1, DB_BUSY_RETRIES): after SQLITE_BUSY it is
 * tried again after 250, 500, 1000, 2000 and 4000 ms, then the DbBusy failure stands.
 */
import { Effect, Schedule } from "effect"
import { DB_BUSY_BACKOFF_MS } from "../../core/constants.js"
import type { DbBusy } from "../../services/retention/RetentionStore.js"

const [first, ...rest] = DB_BUSY_BACKOFF_MS

/** One recurrence per wait of DB_BUSY_BACKOFF_MS, on the effect's Clock. */
export const busySchedule: Schedule.Schedule<unknown> = Schedule.fromDelays(first, ...rest)

const isBusy = (e: unknown): e is DbBusy => typeof e === "object" && e !== null && (e as { _tag?: unknown })._tag === "DbBusy"

export const withBusyRetry = <A, E, R>(attempt: Effect.Effect<A, DbBusy | E, R>): Effect.Effect<A, DbBusy | E, R> =>
  Effect.retry(attempt, { schedule: busySchedule, while: isBusy })
