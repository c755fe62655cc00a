/**
 * opencode's database as the database commands (`ocpool cost`, `ocpool sweep …`) open it: the file
 * checked before anything opens it, the busy back-off around one step (SPEC §11.1), and the
 * database's failures as CLI failures with their exit codes.
 */
import { Effect, Option, Predicate, Schedule } from "effect"
import { accessSync, constants, statSync } from "node:fs"
import { isAbsolute } from "node:path"
import { DB_BUSY_BACKOFF_MS } from "../../core/constants.js"
import { resolveDbPath } from "../../core/retention/dbPath.js"
import { noHomeReason, xdgDir } from "../../layers/fs/xdg.js"
import type { DbBusy, DbFailed, NotOpencodeDb } from "../../services/opencodeDb/errors.js"
import { BadInput, SweepIncomplete } from "../errors.js"

/** The database file, checked before anything opens it: an existing regular file, readable, and writable unless this is a dry run. */
export const databaseFile = (flag: Option.Option<string>, dryRun: boolean) =>
  Effect.gen(function* () {
    const dataHome = xdgDir("XDG_DATA_HOME")
    // without a home directory only --db or an absolute OPENCODE_DB names the database
    const resolved =
      dataHome === undefined && Option.isNone(flag) && !isAbsolute(process.env.OPENCODE_DB ?? "")
        ? ({ _tag: "Problem", reason: noHomeReason("XDG_DATA_HOME") } as const)
        : resolveDbPath({ flag: Option.getOrUndefined(flag), env: process.env.OPENCODE_DB, dataHome: dataHome ?? "/", cwd: process.cwd() })
    if (resolved._tag === "Problem") return yield* new BadInput({ message: resolved.reason })
    const path = resolved.path
    const problem = (() => {
      try {
        if (!statSync(path).isFile()) return "not a file"
        accessSync(path, dryRun ? constants.R_OK : constants.R_OK | constants.W_OK)
        return undefined
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code
        return code === "ENOENT" ? "no such file" : code === "EACCES" ? `permission denied (${dryRun ? "read" : "read and write"} access needed)` : String(code ?? e)
      }
    })()
    if (problem !== undefined) return yield* new BadInput({
        message: `database ${path} (from ${resolved.from}): ${problem}`,
        ...(resolved.from === "default" ? {} : { option: resolved.from }),
        value: path
      })
    return path
  })

const [first, ...rest] = DB_BUSY_BACKOFF_MS

/** One recurrence per wait of DB_BUSY_BACKOFF_MS (250, 500, 1000, 2000 and 4000 ms), on the effect's Clock. */
const busySchedule: Schedule.Schedule<unknown> = Schedule.fromDelays(first, ...rest)

/** The step, tried again after each wait of the busy back-off while it fails with DbBusy; then the DbBusy failure stands. */
export const withBusyRetry = <A, E, R>(attempt: Effect.Effect<A, DbBusy | E, R>): Effect.Effect<A, DbBusy | E, R> =>
  Effect.retry(attempt, { schedule: busySchedule, while: Predicate.isTagged("DbBusy") })

/** A database failure as the CLI's: not an opencode database exit 2, busy through every retry 75, any other failure 1. */
export const dbFailure = (db: string, e: NotOpencodeDb | DbBusy | DbFailed): BadInput | SweepIncomplete => {
  switch (e._tag) {
    case "NotOpencodeDb":
      return new BadInput({ message: `${db} is not an opencode database: ${e.reason}; nothing changed`, value: db })
    case "DbBusy":
      return new SweepIncomplete({
        message: `database ${db} is busy (${e.reason}): another connection held its lock through ${DB_BUSY_BACKOFF_MS.length} retries; nothing changed, try again later`,
        exitCode: 75
      })
    case "DbFailed":
      return new SweepIncomplete({ message: `database error: ${e.reason}`, exitCode: 1 })
  }
}

/** Bad database input and a database locked before anything was read become typed CLI failures; the report itself decides the rest. */
export const openFailures =
  (db: string) =>
  <A, R>(self: Effect.Effect<A, NotOpencodeDb | DbBusy | DbFailed, R>): Effect.Effect<A, BadInput | SweepIncomplete, R> =>
    Effect.mapError(self, (e) => dbFailure(db, e))
