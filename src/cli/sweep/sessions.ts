/** `sweep sessions` as a program (SPEC §11.3): plan the trees in the core, archive, then one transaction per tree. */
import { Clock, Effect } from "effect"
import { CHECKPOINT_EVERY_CHUNKS } from "../../core/constants.js"
import { addRows, archiveLine, sessionRunLine } from "../../core/retention/records.js"
import { deletionOrder } from "../../core/retention/tables.js"
import { planTrees } from "../../core/retention/trees.js"
import { isoTime } from "../../core/time.js"
import { RetentionLog } from "../../services/retention/RetentionLog.js"
import { RetentionStore, type SessionRow } from "../../services/retention/RetentionStore.js"
import { withBusyRetry } from "../shared/db.js"
import { politeness } from "./polite.js"
import { vacuumStep, type VacuumReport } from "./vacuum.js"

export interface SessionSweepOptions {
  readonly db: string
  readonly days: number
  readonly graceHours: number
  readonly directory?: string | undefined
  readonly limit?: number | undefined
  readonly dryRun: boolean
  readonly withEvents: boolean
  readonly vacuum: boolean
  readonly force: boolean
  readonly onProgress?: (done: number, total: number) => Effect.Effect<void>
}

export interface SessionSweepReport {
  readonly dryRun: boolean
  readonly days: number
  readonly graceHours: number
  readonly cutoffCreated: string
  readonly cutoffUpdated: string
  readonly directory: string | null
  readonly limit: number | null
  readonly roots: number
  readonly sessions: number
  readonly protected: number
  readonly remainingRoots: number
  readonly rows: Readonly<Record<string, number>>
  readonly archived: number
  readonly stoppedBy: "busy" | "error" | null
  readonly stopReason: string | null
  readonly vacuum: VacuumReport
  readonly elapsedMs: number
  readonly warnings: ReadonlyArray<string>
}

export const sweepSessions = (o: SessionSweepOptions) =>
  Effect.gen(function* () {
    const store = yield* RetentionStore
    const log = yield* RetentionLog
    const started = yield* Clock.currentTimeMillis
    // Opening and reading the facts: a lock held by another connection is waited out like a busy transaction.
    const { sessions, synced, tables } = yield* withBusyRetry(
      Effect.gen(function* () {
        yield* store.checkSchema
        return { sessions: yield* store.sessions, synced: yield* store.syncedAggregates, tables: deletionOrder(yield* store.sessionTables) }
      })
    )
    const plan = planTrees(sessions, synced, { now: started, days: o.days, graceHours: o.graceHours, directory: o.directory, limit: o.limit })
    const byId = new Map<string, SessionRow>(sessions.map((s) => [s.id, s]))
    const warnings: Array<string> = []

    let rows: Readonly<Record<string, number>> = {}
    let roots = 0
    let retired = 0
    let archived = 0
    let processed = 0
    let stoppedBy: "busy" | "error" | null = null
    let stopReason: string | null = null

    let transactions = 0
    const afterTransaction = yield* politeness
    for (const tree of plan.trees) {
      const job = { ids: tree.ids, tables, withEvents: o.withEvents, cutoffUpdated: plan.cutoffUpdated }
      if (o.dryRun) {
        const counted = yield* withBusyRetry(store.countTree(job)).pipe(Effect.either)
        if (counted._tag === "Left") {
          stoppedBy = counted.left._tag === "DbBusy" ? "busy" : "error"
          stopReason = counted.left.reason
          break
        }
        rows = addRows(rows, counted.right)
        roots++
        retired += tree.ids.length
      } else {
        // A tree opencode touched since the plan stays, and is not archived.
        const changed = yield* withBusyRetry(store.treeChanged(job)).pipe(Effect.either)
        if (changed._tag === "Left") {
          stoppedBy = changed.left._tag === "DbBusy" ? "busy" : "error"
          stopReason = changed.left.reason
          break
        }
        if (changed.right !== undefined) {
          warnings.push(`kept ${tree.root}: ${changed.right} since the sweep started`)
        } else {
          // The archive is on disk before the tree's transaction begins (and so before any row goes).
          const retiredAt = yield* Clock.currentTimeMillis
          const written = yield* log.archive(tree.ids.map((id) => archiveLine(byId.get(id)!, retiredAt))).pipe(Effect.either)
          if (written._tag === "Left") {
            stoppedBy = "error"
            stopReason = `archive not written (${written.left.path}: ${written.left.reason}); nothing of this tree was deleted`
            break
          }
          archived += tree.ids.length
          const outcome = yield* withBusyRetry(store.deleteTree(job)).pipe(Effect.either)
          if (outcome._tag === "Left") {
            stoppedBy = outcome.left._tag === "DbBusy" ? "busy" : "error"
            stopReason = outcome.left.reason
            break
          }
          if (++transactions % CHECKPOINT_EVERY_CHUNKS === 0) yield* store.checkpoint
          // As in the event sweep: while opencode is writing, leave it room between trees.
          yield* afterTransaction(true)
          const done = outcome.right
          if (done._tag === "Changed") {
            // Touched in the instant between the check above and the write lock: kept, though archived.
            warnings.push(`kept ${tree.root}: ${done.reason} since the sweep started (its archive lines stay)`)
          } else {
            rows = addRows(rows, done.rows)
            roots++
            retired += tree.ids.length
          }
        }
      }
      processed++
      if (o.onProgress !== undefined) yield* o.onProgress(processed, plan.trees.length)
    }

    const vacuum = yield* vacuumStep(o.db, { requested: o.vacuum && stoppedBy === null, dryRun: o.dryRun, force: o.force })
    if (o.vacuum && stoppedBy !== null) warnings.push("vacuum skipped: the sweep did not finish")
    const remainingRoots = plan.remainingRoots + (plan.trees.length - processed)
    const elapsedMs = (yield* Clock.currentTimeMillis) - started
    const report: SessionSweepReport = {
      dryRun: o.dryRun,
      days: o.days,
      graceHours: o.graceHours,
      cutoffCreated: isoTime(plan.cutoffCreated),
      cutoffUpdated: isoTime(plan.cutoffUpdated),
      directory: o.directory ?? null,
      limit: o.limit ?? null,
      roots,
      sessions: retired,
      protected: plan.protectedTrees,
      remainingRoots,
      rows,
      archived,
      stoppedBy,
      stopReason,
      vacuum,
      elapsedMs,
      warnings
    }
    yield* log
      .run(
        "session-retire",
        sessionRunLine({
          at: started,
          days: o.days,
          graceHours: o.graceHours,
          directory: report.directory,
          limit: report.limit,
          cutoffCreated: plan.cutoffCreated,
          cutoffUpdated: plan.cutoffUpdated,
          roots,
          sessions: retired,
          protectedTrees: plan.protectedTrees,
          remainingRoots,
          rows,
          noEvents: !o.withEvents,
          dryRun: o.dryRun,
          vacuumed: vacuum.ran,
          elapsedMs
        })
      )
      .pipe(Effect.catchAll((e) => Effect.sync(() => warnings.push(`run log not written (${e.path}: ${e.reason})`))))
    return report
  })
