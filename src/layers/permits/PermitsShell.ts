/**
 * The permits port over the shared state (issue 21): each call is one step of the pure permit machine
 * (core/permits/machine.ts) inside one `SharedState` transaction that reads the permit records only;
 * the step's line and decisions go to the trace when it changed something. Waiting is a `Schedule` of
 * polls on the Effect clock (`waitSchedule`; a test's TestClock drives it). Ids and tokens are random
 * (node:crypto).
 */
import { Clock, Duration, Effect, Layer, Option, Schedule } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { stepPermits } from "../../core/permits/machine.js"
import type { Count } from "../../core/metrics/counters.js"
import { permitCounts } from "../../core/metrics/permitCounts.js"
import type { Capacities, PermitAnswer, PermitOp, PermitStep, PermitView } from "../../core/permits/types.js"
import type { TraceInput } from "../../core/trace/input.js"
import { budgetViews, type BudgetInfo } from "../../core/permits/view.js"
import { Permits, type PermitTicket, type WaitOutcome } from "../../services/permits/Permits.js"
import { TraceRecorder } from "../../services/pool/TraceRecorder.js"
import { SharedState } from "../../services/state/SharedState.js"
import { spanned, traced } from "../hotPath.js"

/** A budget this process knows: its capacity and how it was found. */
export type Budget = BudgetInfo

export interface PermitsConfig {
  readonly budgets: ReadonlyArray<Budget>
  /** How often a waiting request checks (default 250 ms). */
  readonly pollMs?: number | undefined
  /** Counters (issue 36): requests, grants, waits and cancels added to each step's commit; `false` counts none. Default true. */
  readonly metrics?: boolean | undefined
}

export const POLL_MS = 250

const NEEDS = { permits: true } as const
const NO_COUNTS: ReadonlyArray<Count> = []

const newId = (): string => `p-${randomBytes(4).toString("hex")}`
const newToken = (): string => randomBytes(16).toString("hex")

/**
 * A token as the trace records it: a digest (the machine only compares tokens, and a trace is shared
 * more freely than the state directory), the same for the same token.
 */
export const tokenDigest = (token: string): string => `sha256:${createHash("sha256").update(token).digest("hex").slice(0, 16)}`

const opForTrace = (op: PermitOp): PermitOp => {
  switch (op.op) {
    case "request":
      return { ...op, entry: { ...op.entry, token: tokenDigest(op.entry.token) } }
    case "poll":
    case "release":
    case "cancel":
    case "rebind":
      return { ...op, token: tokenDigest(op.token) }
    default:
      return op
  }
}

/** The step's trace line: the op, the capacities and the entries it read, so replay needs no shared state. */
const lineOf = (at: number, op: PermitOp, capacities: Capacities, entries: ReadonlyArray<PermitView>): TraceInput =>
  ({ type: "permit", at, op: opForTrace(op), capacities, entries: entries.map((e) => ({ ...e, token: tokenDigest(e.token) })) })

/** One look at a waiting request: how its wait ended, or still queued with the ms left before its deadline. */
export type WaitLook = { readonly _tag: "Ended"; readonly outcome: WaitOutcome } | { readonly _tag: "Queued"; readonly leftMs: number | undefined }

/**
 * The wait's polling: another look `pollMs` after each while the request is queued, the nap before a
 * deadline cut to the time left (at least 1 ms), so the last look falls on it; the output is the last
 * look. A look past the deadline says so itself (`Ended`, timeout), which stops the schedule.
 */
export const waitSchedule = (pollMs: number): Schedule.Schedule<WaitLook, WaitLook> =>
  Schedule.spaced(Duration.millis(pollMs)).pipe(
    Schedule.whileInput((look: WaitLook) => look._tag === "Queued"),
    Schedule.passthrough,
    Schedule.modifyDelay((look, delay) =>
      look._tag === "Queued" && look.leftMs !== undefined ? Duration.millis(Math.max(1, Math.min(Duration.toMillis(delay), look.leftMs))) : delay
    )
  )

type WaitOptions = Parameters<Permits["Type"]["wait"]>[1]

/** What one wait has reported so far (its last position and pause), so progress is said on a change only. */
interface Reported {
  position: number
  paused: boolean
}

const changed = (s: PermitStep): boolean => s.decisions.length > 0 || s.changes.put.length > 0 || s.changes.remove.length > 0

/** The budgets' views and their status JSON, where every view renders them (core/permits/view.ts). */
export { budgetsJsonOf, budgetViews } from "../../core/permits/view.js"

export const PermitsShell = (config: PermitsConfig): Layer.Layer<Permits, never, SharedState> =>
  Layer.effect(
    Permits,
    Effect.gen(function* () {
      const shared = yield* SharedState
      const recorder = yield* Effect.serviceOption(TraceRecorder)
      const capacities: Capacities = Object.fromEntries(config.budgets.map((b) => [b.name, b.capacity]))
      const pollMs = Math.max(10, config.pollMs ?? POLL_MS)
      const metrics = config.metrics ?? true

      /** One machine step in one transaction; recorded when it changed something. */
      const step = Effect.fnUntraced(function* (op: PermitOp) {
          const now = yield* Clock.currentTimeMillis
          const { s, read } = yield* shared.transact(now, NEEDS, (snapshot) => {
            const s = stepPermits(snapshot.permits, capacities, op, now)
            const counts = metrics && s.decisions.length > 0 ? permitCounts(op, s.decisions, capacities) : NO_COUNTS
            return { value: { s, read: snapshot.permits }, commit: counts.length === 0 ? { cool: [], uncool: [], permits: s.changes } : { cool: [], uncool: [], permits: s.changes, counts } }
          })
          if (changed(s) && Option.isSome(recorder)) {
            yield* recorder.value.record([lineOf(now, op, capacities, read)], s.decisions)
          }
          return s
        })

      const answerOf = (op: PermitOp) => Effect.map(step(op), (s) => s.answer)

      const request = traced("Permits.request")(function* (req: Parameters<Permits["Type"]["request"]>[0]) {
        const now = yield* Clock.currentTimeMillis
        const id = newId()
        const token = newToken()
        const answer = yield* answerOf({
          op: "request",
          entry: {
            id,
            token,
            budget: req.budget,
            weight: req.weight,
            reason: req.reason,
            holder: req.holder,
            requestedAt: now,
            ...(req.pausable === true ? { seenAt: now } : {})
          }
        })
        const ticket: PermitTicket = { id, token, budget: req.budget, weight: req.weight }
        return { ticket, answer }
      })

      const poll = traced("Permits.poll")(function* (ticket: PermitTicket) {
        return yield* answerOf({ op: "poll", id: ticket.id, token: ticket.token })
      })

      /** One look at a waiting request: a poll, its end if it ended, its progress if it changed, its deadline. */
      const look = Effect.fnUntraced(function* (ticket: PermitTicket, options: WaitOptions, reported: Reported) {
        const s = yield* step({ op: "poll", id: ticket.id, token: ticket.token })
        const a: PermitAnswer = s.answer
        if (a.state === "granted") return { _tag: "Ended", outcome: { state: "granted", waitedMs: a.waitedMs, before: a.before } } satisfies WaitLook
        if (a.state !== "queued") return { _tag: "Ended", outcome: { state: "gone", cause: a.state === "gone" ? a.cause : a.state === "refused" ? a.reason : a.state } } satisfies WaitLook
        if (options?.onProgress !== undefined && (a.position !== reported.position || a.paused !== reported.paused)) {
          reported.position = a.position
          reported.paused = a.paused
          yield* options.onProgress({ position: a.position, paused: a.paused, holders: s.entries.filter((e) => e.budget === ticket.budget && e.grantedAt !== undefined) })
        }
        if (options?.deadline === undefined) return { _tag: "Queued", leftMs: undefined } satisfies WaitLook
        const now = yield* Clock.currentTimeMillis
        return (now >= options.deadline ? { _tag: "Ended", outcome: { state: "timeout" } } : { _tag: "Queued", leftMs: options.deadline - now }) satisfies WaitLook
      })

      const polling = waitSchedule(pollMs)

      const wait = traced("Permits.wait")(function* (ticket: PermitTicket, options?: WaitOptions) {
        const reported: Reported = { position: -1, paused: false }
        const last: WaitLook = yield* Effect.repeat(look(ticket, options, reported), polling)
        // the schedule stops only on an ended look
        return last._tag === "Ended" ? last.outcome : ({ state: "timeout" } satisfies WaitOutcome)
      })

      const release = traced("Permits.release")(function* (ticket: Pick<PermitTicket, "id" | "token">) {
        return yield* answerOf({ op: "release", id: ticket.id, token: ticket.token })
      })

      const cancel = traced("Permits.cancel")(function* (ticket: Pick<PermitTicket, "id" | "token">, cause: Parameters<Permits["Type"]["cancel"]>[1]) {
        return yield* answerOf({ op: "cancel", id: ticket.id, token: ticket.token, cause })
      })

      const rebind = traced("Permits.rebind")(function* (ticket: Pick<PermitTicket, "id" | "token">, group: { readonly pgid: number; readonly startToken: string | null }) {
        return yield* answerOf({ op: "rebind", id: ticket.id, token: ticket.token, group })
      })

      const free = traced("Permits.free")(function* (id: string, force: boolean) {
        const now = yield* Clock.currentTimeMillis
        const before = yield* shared.read(now, NEEDS)
        const found = before.permits.find((e) => e.id === id)
        const s = yield* step({ op: "free", id, force })
        return { answer: s.answer, found }
      })

      const status = Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const snapshot = yield* shared.read(now, NEEDS)
        return budgetViews(config.budgets, snapshot.permits)
      }).pipe(spanned("Permits.status"))

      return { budgets: config.budgets, request, poll, wait, release, cancel, rebind, free, status }
    })
  )
