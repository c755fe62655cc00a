/** `sweep events` as a program (SPEC §11.4): facts from the store, selection in the core, chunked deletes. */
import { Clock, Data, Effect } from "effect"
import { CHECKPOINT_EVERY_CHUNKS } from "../../core/constants.js"
import { initialChunk, nextChunk } from "../../core/retention/chunks.js"
import { appendCandidates, candidateOrder, idGuard, noCandidates, pageCandidates } from "../../core/retention/events.js"
import { eventRunLine } from "../../core/retention/records.js"
import { CLAMP_WARNING, eventWindow, graceCutoff } from "../../core/retention/window.js"
import { RetentionLog } from "../../services/RetentionLog.js"
import { RetentionStore } from "../../services/RetentionStore.js"
import { withBusyRetry } from "./busy.js"
import { politeness } from "./polite.js"
import { vacuumStep, type VacuumReport } from "./vacuum.js"

/** Exit 1: the ids do not decode the way this tool expects; nothing was deleted (SPEC §11.2 guard). */
export class IdEncodingUnknown extends Data.TaggedError("IdEncodingUnknown")<{ readonly id: string; readonly decoded: number; readonly sessionCreated: number }> {}

export interface EventSweepOptions {
  readonly db: string
  readonly days: number
  readonly graceHours: number
  readonly limit?: number | undefined
  readonly dryRun: boolean
  readonly vacuum: boolean
  readonly force: boolean
  readonly onProgress?: (done: number, total: number, chunks: number) => Effect.Effect<void>
}

export interface EventSweepReport {
  readonly dryRun: boolean
  readonly days: number
  readonly clamped: boolean
  readonly graceHours: number
  readonly cutoff: string
  readonly candidates: number
  readonly rows: number
  readonly bytes: number
  readonly aggregates: number
  readonly remaining: number
  readonly chunks: number
  readonly stoppedBy: "busy" | "error" | null
  readonly stopReason: string | null
  readonly longestTransactionMs: number
  /** Chunks followed by a pause because another connection (opencode) was writing. */
  readonly politePauses: number
  readonly vacuum: VacuumReport
  readonly elapsedMs: number
  readonly warnings: ReadonlyArray<string>
}

/** Rows read per page while scanning the event table. */
const SCAN_PAGE = 20_000

export const sweepEvents = (o: EventSweepOptions) =>
  Effect.gen(function* () {
    const store = yield* RetentionStore
    const log = yield* RetentionLog
    const started = yield* Clock.currentTimeMillis
    const now = started
    yield* store.checkSchema
    const window = eventWindow(now, o.days)
    const warnings: Array<string> = window.clamped ? [CLAMP_WARNING] : []

    const sessions = yield* store.sessions
    const facts = { sessions: new Map(sessions.map((s) => [s.id, s] as const)), synced: yield* store.syncedAggregates }
    const found = noCandidates()
    const verdicts = new Map<string, { readonly kept: boolean; readonly aggregate: string }>()
    const bounds = { now, cutoff: window.cutoff, graceCutoff: graceCutoff(now, o.graceHours) }
    yield* store.scanEvents(SCAN_PAGE, (page) => appendCandidates(found, pageCandidates(page, facts, bounds, verdicts)))
    const order = candidateOrder(found)
    const guard = idGuard(found, order, facts.sessions)
    if (guard !== undefined) return yield* new IdEncodingUnknown(guard)

    const selected = o.limit === undefined ? order : order.slice(0, o.limit)
    let rows = 0
    let bytes = 0
    let chunks = 0
    let done = 0
    let longest = 0
    let politePauses = 0
    let stoppedBy: "busy" | "error" | null = null
    let stopReason: string | null = null
    const aggregates = new Set<string>()

    if (o.dryRun) {
      for (const i of selected) {
        bytes += found.bytes[i]!
        aggregates.add(found.aggregates[i]!)
      }
      rows = selected.length
      done = selected.length
    } else {
      let chunk = initialChunk
      const kept = new Set<string>()
      const afterTransaction = yield* politeness
      while (done < selected.length) {
        const slice = selected.slice(done, done + chunk.size)
        const events = { ids: slice.map((i) => found.ids[i]!), aggregates: slice.map((i) => found.aggregates[i]!) }
        const result = yield* withBusyRetry(store.deleteEvents(events, bounds.graceCutoff)).pipe(Effect.either)
        if (result._tag === "Left") {
          stoppedBy = result.left._tag === "DbBusy" ? "busy" : "error"
          stopReason = result.left.reason
          break
        }
        rows += result.right.rows
        for (const a of result.right.kept) kept.add(a)
        for (const i of slice) {
          if (kept.has(found.aggregates[i]!)) continue
          aggregates.add(found.aggregates[i]!)
          bytes += found.bytes[i]!
        }
        chunks++
        done += slice.length
        longest = Math.max(longest, result.right.ms)
        chunk = nextChunk(chunk, result.right.ms)
        if (chunks % CHECKPOINT_EVERY_CHUNKS === 0) yield* store.checkpoint
        if (yield* afterTransaction(done < selected.length)) politePauses++
        if (o.onProgress !== undefined) yield* o.onProgress(done, selected.length, chunks)
      }
      if (kept.size > 0) warnings.push(`kept the events of ${kept.size} session(s) that went into sync, into a workspace or back to work since the sweep started`)
    }

    const vacuum = yield* vacuumStep(o.db, { requested: o.vacuum && stoppedBy === null, dryRun: o.dryRun, force: o.force })
    if (o.vacuum && stoppedBy !== null) warnings.push("vacuum skipped: the sweep did not finish")
    const elapsedMs = (yield* Clock.currentTimeMillis) - started
    yield* log
      .run("event-prune", eventRunLine({ at: now, days: window.effectiveDays, graceHours: o.graceHours, cutoff: window.cutoff, rows, bytes, aggregates: aggregates.size, dryRun: o.dryRun, elapsedMs }))
      .pipe(Effect.catchAll((e) => Effect.sync(() => warnings.push(`run log not written (${e.path}: ${e.reason})`))))

    const report: EventSweepReport = {
      dryRun: o.dryRun,
      days: window.effectiveDays,
      clamped: window.clamped,
      graceHours: o.graceHours,
      cutoff: new Date(window.cutoff).toISOString(),
      candidates: found.ids.length,
      rows,
      bytes,
      aggregates: aggregates.size,
      remaining: found.ids.length - done,
      chunks,
      stoppedBy,
      stopReason,
      longestTransactionMs: longest,
      politePauses,
      vacuum,
      elapsedMs,
      warnings
    }
    return report
  })
