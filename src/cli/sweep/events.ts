/** `sweep events` as a program (SPEC §11.4): facts from the store, selection in the core, chunked deletes. */
import { Clock, Data, Effect } from "effect"
import { CHECKPOINT_EVERY_CHUNKS, EVENT_ROUND_CANDIDATES, ID_GUARD_SAMPLES } from "../../core/constants.js"
import { initialChunk, nextChunk } from "../../core/retention/chunks.js"
import { appendCandidates, ceilingOf, idGuard, noCandidates, oldest, pageCandidates, type Ceiling, type Verdicts } from "../../core/retention/events.js"
import { eventRunLine } from "../../core/retention/records.js"
import { CLAMP_WARNING, eventWindow, graceCutoff } from "../../core/retention/window.js"
import { isoTime } from "../../core/time.js"
import { RetentionLog } from "../../services/retention/RetentionLog.js"
import { RetentionStore } from "../../services/retention/RetentionStore.js"
import { withBusyRetry } from "../shared/db.js"
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
  /** Candidates held in memory per round (default EVENT_ROUND_CANDIDATES); tests make it small. */
  readonly roundCandidates?: number
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
    // Opening and reading the facts: a lock held by another connection is waited out like a busy transaction.
    const { sessions, synced } = yield* withBusyRetry(
      Effect.gen(function* () {
        yield* store.checkSchema
        return { sessions: yield* store.sessions, synced: yield* store.syncedAggregates }
      })
    )
    const window = eventWindow(now, o.days)
    const warnings: Array<string> = window.clamped ? [CLAMP_WARNING] : []
    const facts = { sessions: new Map(sessions.map((s) => [s.id, s] as const)), synced }
    const verdicts: Verdicts = new Map()
    const bounds = { now, cutoff: window.cutoff, graceCutoff: graceCutoff(now, o.graceHours) }
    const roundCap = o.roundCandidates ?? EVENT_ROUND_CANDIDATES

    /** One scan: the oldest `cap` candidates in deletion order, and what every candidate adds up to. */
    const scanOnce = (cap: number) =>
      Effect.gen(function* () {
        let found = noCandidates()
        let ceiling: Ceiling | undefined
        let qualified = 0
        let qualifiedBytes = 0
        const qualifiedAggregates = new Set<string>()
        yield* store.scanEvents(SCAN_PAGE, (rows) => {
          const page = pageCandidates(rows, facts, bounds, verdicts, ceiling)
          qualified += page.qualified
          qualifiedBytes += page.qualifiedBytes
          for (const a of page.qualifiedAggregates) qualifiedAggregates.add(a)
          appendCandidates(found, page.candidates)
          // Hold at most 2 × cap: keep the oldest cap, and skip anything newer from now on.
          if (found.ids.length >= 2 * cap) {
            found = oldest(found, cap)
            ceiling = ceilingOf(found)
          }
        })
        return { found: oldest(found, cap), qualified, qualifiedBytes, qualifiedAggregates }
      })
    /** A scan under the busy back-off; a busy scan starts afresh. */
    const collect = (cap: number) => withBusyRetry(scanOnce(cap))

    let candidates = 0
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
      const scan = yield* collect(o.limit ?? Math.min(roundCap, ID_GUARD_SAMPLES * 10))
      const guard = idGuard(scan.found, facts.sessions)
      if (guard !== undefined) return yield* new IdEncodingUnknown(guard)
      candidates = scan.qualified
      if (o.limit === undefined) {
        rows = scan.qualified
        bytes = scan.qualifiedBytes
        for (const a of scan.qualifiedAggregates) aggregates.add(a)
      } else {
        rows = scan.found.ids.length
        for (let i = 0; i < rows; i++) {
          bytes += scan.found.bytes[i]!
          aggregates.add(scan.found.aggregates[i]!)
        }
      }
      done = rows
    } else {
      let chunk = initialChunk
      const kept = new Set<string>()
      const afterTransaction = yield* politeness
      for (let round = 0; stoppedBy === null; round++) {
        const want = o.limit === undefined ? roundCap : Math.min(roundCap, o.limit - done)
        if (want <= 0) break
        const scanned = yield* collect(want).pipe(Effect.either)
        if (scanned._tag === "Left") {
          // Nothing deleted yet: the failure stands as it is (busy: exit 75). Later rounds stop like a chunk would.
          if (round === 0) return yield* scanned.left
          stoppedBy = scanned.left._tag === "DbBusy" ? "busy" : "error"
          stopReason = scanned.left.reason
          break
        }
        const scan = scanned.right
        if (round === 0) {
          const guard = idGuard(scan.found, facts.sessions)
          if (guard !== undefined) return yield* new IdEncodingUnknown(guard)
          candidates = scan.qualified
        }
        const found = scan.found
        for (let at = 0; at < found.ids.length; ) {
          const end = Math.min(found.ids.length, at + chunk.size)
          const events = { ids: found.ids.slice(at, end), aggregates: found.aggregates.slice(at, end) }
          const result = yield* withBusyRetry(store.deleteEvents(events, bounds.graceCutoff)).pipe(Effect.either)
          if (result._tag === "Left") {
            stoppedBy = result.left._tag === "DbBusy" ? "busy" : "error"
            stopReason = result.left.reason
            break
          }
          rows += result.right.rows
          for (const a of result.right.kept) {
            kept.add(a)
            // Found protected under the lock: later rounds must not select it again.
            verdicts.set(a, { kept: true, aggregate: a })
          }
          for (let i = at; i < end; i++) {
            if (kept.has(found.aggregates[i]!)) continue
            aggregates.add(found.aggregates[i]!)
            bytes += found.bytes[i]!
          }
          chunks++
          done += end - at
          at = end
          longest = Math.max(longest, result.right.ms)
          chunk = nextChunk(chunk, result.right.ms)
          if (chunks % CHECKPOINT_EVERY_CHUNKS === 0) yield* store.checkpoint
          const more = at < found.ids.length || scan.qualified > found.ids.length
          if (yield* afterTransaction(more)) politePauses++
          if (o.onProgress !== undefined) yield* o.onProgress(done, o.limit === undefined ? candidates : Math.min(candidates, o.limit), chunks)
        }
        // Every candidate fitted in this round: nothing is left for another scan.
        if (scan.qualified <= found.ids.length) break
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
      cutoff: isoTime(window.cutoff),
      candidates,
      rows,
      bytes,
      aggregates: aggregates.size,
      remaining: Math.max(0, candidates - done),
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
