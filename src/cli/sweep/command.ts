/**
 * `ocpool sweep sessions` and `ocpool sweep events` (SPEC §11, §12.2): parse and check the flags, open
 * the database through the live layers, run the program, print the summary or the JSON object.
 */
import { Command, Options } from "@effect/cli"
import { Console, Effect, Layer, Option } from "effect"
import { accessSync, constants, statSync } from "node:fs"
import { isAbsolute, resolve } from "node:path"
import { DB_BUSY_BACKOFF_MS, EVENT_SWEEP_DAYS, EVENT_SWEEP_GRACE_HOURS, SESSION_SWEEP_DAYS, SESSION_SWEEP_GRACE_HOURS } from "../../core/constants.js"
import { resolveDbPath } from "../../core/retention/dbPath.js"
import { MAX_DAYS, MAX_GRACE_HOURS } from "../../core/retention/window.js"
import { DbHostProc } from "../../layers/retention/DbHostProc.js"
import { RetentionLogFile } from "../../layers/retention/RetentionLogFile.js"
import { RetentionSqlite } from "../../layers/retention/RetentionSqlite.js"
import { SqliteNode } from "../../layers/opencodeDb/SqliteNode.js"
import { noHomeReason, xdgDir } from "../../layers/fs/xdg.js"
import type { DbBusy, DbFailed, NotOpencodeDb } from "../../services/retention/RetentionStore.js"
import { BadInput, SweepIncomplete } from "../errors.js"
import { diagnostic } from "../output.js"
import { IdEncodingUnknown, sweepEvents, type EventSweepReport } from "./events.js"
import { nonNegative, positiveInteger, validWindow } from "./flags.js"
import { progressBar } from "./progress.js"
import { renderEvents, renderSessions } from "./render.js"
import { sweepSessions, type SessionSweepReport } from "./sessions.js"
import { sweepExitCode, type SweepEnd } from "./outcome.js"

export const text = (name: string, pseudo: string, description: string) =>
  Options.text(name).pipe(Options.withPseudoName(pseudo), Options.withDescription(description), Options.optional)

export const common = {
  db: text("db", "PATH", "opencode's database (default: $OPENCODE_DB, else $XDG_DATA_HOME/opencode/opencode.db)"),
  limit: text("limit", "N", "At most N (an integer ≥ 1); the rest is reported as remaining"),
  dryRun: Options.boolean("dry-run").pipe(Options.withDescription("Change nothing; report what would go (the run log still gets its line)")),
  vacuum: Options.boolean("vacuum").pipe(
    Options.withDescription("Afterwards checkpoint the WAL and VACUUM; refused (exit 75) while another process has the database open or the disk is short")
  ),
  force: Options.boolean("force").pipe(Options.withDescription("Vacuum even when another process has the database open or free space looks short")),
  json: Options.boolean("json").pipe(Options.withDescription("One JSON object on stdout (SPEC §12.3)"))
}

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
    if (problem !== undefined) return yield* new BadInput({ message: `database ${path} (from ${resolved.from}): ${problem}` })
    return path
  })

const liveLayer = (db: string, dryRun: boolean) =>
  Layer.mergeAll(RetentionSqlite().pipe(Layer.provide(SqliteNode(db, { readonly: dryRun }))), RetentionLogFile(), DbHostProc)

/**
 * Bad database input, a database locked before anything was read, and the id guard become typed CLI
 * failures (exit 2, 75, 1); the report itself decides the rest.
 */
export const openFailures =
  (db: string) =>
  <A, R>(self: Effect.Effect<A, NotOpencodeDb | DbBusy | DbFailed | IdEncodingUnknown, R>): Effect.Effect<A, BadInput | SweepIncomplete, R> =>
    Effect.catchAll(self, (e): Effect.Effect<never, BadInput | SweepIncomplete> => {
      switch (e._tag) {
        case "NotOpencodeDb":
          return Effect.fail(new BadInput({ message: `${db} is not an opencode database: ${e.reason}; nothing changed` }))
        case "DbBusy":
          return Effect.fail(
            new SweepIncomplete({
              message: `database ${db} is busy (${e.reason}): another connection held its lock through ${DB_BUSY_BACKOFF_MS.length} retries; nothing changed, try again later`,
              exitCode: 75
            })
          )
        case "DbFailed":
          return Effect.fail(new SweepIncomplete({ message: `database error: ${e.reason}`, exitCode: 1 }))
        case "IdEncodingUnknown":
          return Effect.fail(
            new SweepIncomplete({
              message: `event id time encoding not recognised: ${e.id} decodes to ${new Date(e.decoded).toISOString()}, more than 24 h before its session was created (${new Date(e.sessionCreated).toISOString()}); nothing deleted`,
              exitCode: 1
            })
          )
      }
    })

/** Exit 1 for a failure midway, 75 for a busy stop or a refused vacuum (SPEC §11.1, §11.5). */
const finish = (report: SweepEnd, remaining: string) =>
  Effect.gen(function* () {
    const exitCode = sweepExitCode(report)
    if (exitCode === 0) return
    const message =
      report.stoppedBy === "error"
        ? `stopped on a database error (${report.stopReason ?? ""}); ${remaining} left for a later run`
        : report.stoppedBy === "busy"
          ? `database busy after ${DB_BUSY_BACKOFF_MS.length} retries (${report.stopReason ?? ""}); ${remaining} left for a later run`
          : `vacuum refused: ${report.vacuum.reason ?? ""}; the deletions are kept`
    return yield* new SweepIncomplete({ message, exitCode })
  })

const print = <R>(json: boolean, report: R, human: (r: R) => string) => Console.log(json ? JSON.stringify(report) : human(report))

export const sweepEventsCommand = Command.make(
  "events",
  {
    ...common,
    days: text("days", "DAYS", `Prune events whose id time is older than D days (default ${EVENT_SWEEP_DAYS}; fractions allowed; clamped to the id era, 795.36 days)`),
    graceHours: text("grace-hours", "HOURS", `Keep every event of a session updated in the last H hours (default ${EVENT_SWEEP_GRACE_HOURS})`)
  },
  (args) =>
    Effect.gen(function* () {
      const days = yield* nonNegative("days", Option.getOrUndefined(args.days), EVENT_SWEEP_DAYS, MAX_DAYS)
      const graceHours = yield* nonNegative("grace-hours", Option.getOrUndefined(args.graceHours), EVENT_SWEEP_GRACE_HOURS, MAX_GRACE_HOURS)
      const limit = yield* positiveInteger("limit", Option.getOrUndefined(args.limit))
      yield* validWindow(Date.now(), days, graceHours)
      const db = yield* databaseFile(args.db, args.dryRun)
      const bar = progressBar(process.stderr.isTTY === true && !args.json)
      const report: EventSweepReport = yield* sweepEvents({
        db,
        days,
        graceHours,
        limit,
        dryRun: args.dryRun,
        vacuum: args.vacuum,
        force: args.force,
        onProgress: (done, total, chunks) => (chunks > 1 ? bar.update(done, total, "events") : Effect.void)
      }).pipe(Effect.ensuring(bar.end), openFailures(db), Effect.provide(liveLayer(db, args.dryRun)))
      for (const w of report.warnings) if (args.json) yield* diagnostic(w)
      yield* print(args.json, report, renderEvents)
      yield* finish(report, `${report.remaining.toLocaleString("en-US")} events`)
    })
).pipe(
  Command.withDescription(
    "Prune old rows of opencode's event table, oldest first, 1000 per transaction. Sessions in sync, in a workspace or active in the grace window keep theirs. Exit 0; 1 error; 2 bad input; 75 busy or vacuum refused."
  )
)

export const sweepSessionsCommand = Command.make(
  "sessions",
  {
    ...common,
    days: text("days", "DAYS", `Retire session trees whose root was created more than D days ago (default ${SESSION_SWEEP_DAYS}; fractions allowed)`),
    graceHours: text("grace-hours", "HOURS", `Keep a tree if any of its sessions was updated in the last H hours (default ${SESSION_SWEEP_GRACE_HOURS})`),
    directory: text("directory", "DIR", "Only roots whose directory is DIR (resolved to an absolute path, no trailing slash); their children go with them"),
    noEvents: Options.boolean("no-events").pipe(Options.withDescription("Keep the retired sessions' event and event_sequence rows"))
  },
  (args) =>
    Effect.gen(function* () {
      const days = yield* nonNegative("days", Option.getOrUndefined(args.days), SESSION_SWEEP_DAYS, MAX_DAYS)
      const graceHours = yield* nonNegative("grace-hours", Option.getOrUndefined(args.graceHours), SESSION_SWEEP_GRACE_HOURS, MAX_GRACE_HOURS)
      const limit = yield* positiveInteger("limit", Option.getOrUndefined(args.limit))
      yield* validWindow(Date.now(), days, graceHours)
      const directory = Option.getOrUndefined(args.directory)
      if (directory !== undefined && directory.trim() === "") return yield* new BadInput({ message: "--directory must name a directory" })
      const db = yield* databaseFile(args.db, args.dryRun)
      const bar = progressBar(process.stderr.isTTY === true && !args.json)
      const report: SessionSweepReport = yield* sweepSessions({
        db,
        days,
        graceHours,
        directory: directory === undefined ? undefined : resolve(directory),
        limit,
        dryRun: args.dryRun,
        withEvents: !args.noEvents,
        vacuum: args.vacuum,
        force: args.force,
        onProgress: (done, total) => (total > 1 ? bar.update(done, total, "trees") : Effect.void)
      }).pipe(Effect.ensuring(bar.end), openFailures(db), Effect.provide(liveLayer(db, args.dryRun)))
      for (const w of report.warnings) if (args.json) yield* diagnostic(w)
      yield* print(args.json, report, renderSessions)
      yield* finish(report, `${report.remainingRoots.toLocaleString("en-US")} root sessions`)
    })
).pipe(
  Command.withDescription(
    "Retire old session trees with their messages, parts, todos, shares and events, after writing each to the archive. Exit 0; 1 error; 2 bad input; 75 busy or vacuum refused."
  )
)

export const sweepCommand = Command.make("sweep").pipe(
  Command.withDescription("Keep opencode's database small: retire old sessions, or prune the event log."),
  Command.withSubcommands([sweepSessionsCommand, sweepEventsCommand])
)
