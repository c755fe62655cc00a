/**
 * `ocpool sweep sessions` and `ocpool sweep events` (SPEC §11, §12.2): parse and check the flags, open
 * the database through the live layers, run the program, print the summary or the JSON object.
 */
import { Command, Options } from "@effect/cli"
import { Console, Effect, Layer, Option } from "effect"
import { resolve } from "node:path"
import { DB_BUSY_BACKOFF_MS, EVENT_SWEEP_DAYS, EVENT_SWEEP_GRACE_HOURS, SESSION_SWEEP_DAYS, SESSION_SWEEP_GRACE_HOURS } from "../../core/constants.js"
import { isoTime } from "../../core/time.js"
import { SqliteNode } from "../../layers/opencodeDb/SqliteNode.js"
import { DbHostProc } from "../../layers/retention/DbHostProc.js"
import { RetentionLogFile } from "../../layers/retention/RetentionLogFile.js"
import { RetentionSqlite } from "../../layers/retention/RetentionSqlite.js"
import type { DbBusy, DbFailed, NotOpencodeDb } from "../../services/opencodeDb/errors.js"
import type { DbHost } from "../../services/retention/DbHost.js"
import type { RetentionLog } from "../../services/retention/RetentionLog.js"
import type { RetentionStore } from "../../services/retention/RetentionStore.js"
import { BadInput, SweepIncomplete } from "../errors.js"
import { diagnostic } from "../output.js"
import { databaseFile, dbFailure } from "../shared/db.js"
import { dbFlag, jsonFlag, text } from "../shared/flags.js"
import { sweepEvents, type IdEncodingUnknown } from "./events.js"
import { sweepWindow } from "./flags.js"
import { progressBar, type Progress } from "./progress.js"
import { renderEvents, renderSessions } from "./render.js"
import { sweepSessions } from "./sessions.js"
import { sweepExitCode, type SweepEnd } from "./outcome.js"
import { commandGroup } from "../shared/commandGroup.js"

const common = {
  db: dbFlag,
  limit: text("limit", "N", "At most N (an integer ≥ 1); the rest is reported as remaining"),
  dryRun: Options.boolean("dry-run").pipe(Options.withDescription("Change nothing; report what would go (the run log still gets its line)")),
  vacuum: Options.boolean("vacuum").pipe(
    Options.withDescription("Afterwards checkpoint the WAL and VACUUM; refused (exit 75) while another process has the database open or the disk is short")
  ),
  force: Options.boolean("force").pipe(Options.withDescription("Vacuum even when another process has the database open or free space looks short")),
  json: jsonFlag
}

const liveLayer = (db: string, dryRun: boolean) =>
  Layer.mergeAll(RetentionSqlite().pipe(Layer.provide(SqliteNode(db, { readonly: dryRun }))), RetentionLogFile(), DbHostProc)

/**
 * Bad database input, a database locked before anything was read, and the id guard become typed CLI
 * failures (exit 2, 75, 1); the report itself decides the rest.
 */
const sweepFailures =
  (db: string) =>
  <A, R>(self: Effect.Effect<A, NotOpencodeDb | DbBusy | DbFailed | IdEncodingUnknown, R>): Effect.Effect<A, BadInput | SweepIncomplete, R> =>
    Effect.mapError(self, (e) =>
      e._tag === "IdEncodingUnknown"
        ? new SweepIncomplete({
            message: `event id time encoding not recognised: ${e.id} decodes to ${isoTime(e.decoded)}, more than 24 h before its session was created (${isoTime(e.sessionCreated)}); nothing deleted`,
            exitCode: 1
          })
        : dbFailure(db, e)
    )

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

/**
 * One sweep over the live layers: the progress bar (on a terminal, without `--json`), the report
 * printed (its warnings to stderr as well under `--json`), then the exit code it calls for.
 */
const runSweep = <Report extends SweepEnd & { readonly warnings: ReadonlyArray<string> }>(
  db: string,
  args: { readonly json: boolean; readonly dryRun: boolean },
  sweep: (bar: Progress) => Effect.Effect<Report, NotOpencodeDb | DbBusy | DbFailed | IdEncodingUnknown, RetentionStore | RetentionLog | DbHost>,
  human: (report: Report) => string,
  remaining: (report: Report) => string
) =>
  Effect.gen(function* () {
    const bar = progressBar(process.stderr.isTTY === true && !args.json)
    const report = yield* sweep(bar).pipe(Effect.ensuring(bar.end), sweepFailures(db), Effect.provide(liveLayer(db, args.dryRun)))
    for (const w of report.warnings) if (args.json) yield* diagnostic(w)
    yield* Console.log(args.json ? JSON.stringify(report) : human(report))
    yield* finish(report, remaining(report))
  })

export const sweepEventsCommand = Command.make(
  "events",
  {
    ...common,
    days: text("days", "DAYS", `Prune events whose id time is older than D days (default ${EVENT_SWEEP_DAYS}; fractions allowed; clamped to the id era, 795.36 days)`),
    graceHours: text("grace-hours", "HOURS", `Keep every event of a session updated in the last H hours (default ${EVENT_SWEEP_GRACE_HOURS})`)
  },
  (args) =>
    Effect.gen(function* () {
      const window = yield* sweepWindow(args, { days: EVENT_SWEEP_DAYS, graceHours: EVENT_SWEEP_GRACE_HOURS })
      const db = yield* databaseFile(args.db, args.dryRun)
      yield* runSweep(
        db,
        args,
        (bar) =>
          sweepEvents({
            db,
            ...window,
            dryRun: args.dryRun,
            vacuum: args.vacuum,
            force: args.force,
            onProgress: (done, total, chunks) => (chunks > 1 ? bar.update(done, total, "events") : Effect.void)
          }),
        renderEvents,
        (report) => `${report.remaining.toLocaleString("en-US")} events`
      )
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
      const window = yield* sweepWindow(args, { days: SESSION_SWEEP_DAYS, graceHours: SESSION_SWEEP_GRACE_HOURS })
      const directory = Option.getOrUndefined(args.directory)
      if (directory !== undefined && directory.trim() === "") return yield* new BadInput({ message: "--directory must name a directory", option: "--directory", value: directory })
      const db = yield* databaseFile(args.db, args.dryRun)
      yield* runSweep(
        db,
        args,
        (bar) =>
          sweepSessions({
            db,
            ...window,
            directory: directory === undefined ? undefined : resolve(directory),
            dryRun: args.dryRun,
            withEvents: !args.noEvents,
            vacuum: args.vacuum,
            force: args.force,
            onProgress: (done, total) => (total > 1 ? bar.update(done, total, "trees") : Effect.void)
          }),
        renderSessions,
        (report) => `${report.remainingRoots.toLocaleString("en-US")} root sessions`
      )
    })
).pipe(
  Command.withDescription(
    "Retire old session trees with their messages, parts, todos, shares and events, after writing each to the archive. Exit 0; 1 error; 2 bad input; 75 busy or vacuum refused."
  )
)

export const sweepCommand = commandGroup("sweep", "Keep opencode's database small: retire old sessions, or prune the event log.", [sweepSessionsCommand, sweepEventsCommand])
