/**
 * The permits port over the shared state (issue 21): each call is one step of the pure permit machine
 * (core/permits/machine.ts) inside one `SharedState` transaction that reads the permit records only;
 * the step's line and decisions go to the trace when it changed something. Waiting is polling on the
 * Effect clock (a test's TestClock drives it). Ids and tokens are random (node:crypto).
 */
import { Clock, Effect, Layer, Option } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { stepPermits } from "../../core/permits/machine.js"
import type { Capacities, PermitAnswer, PermitOp, PermitStep, PermitView } from "../../core/permits/types.js"
import type { TraceInput } from "../../core/trace/input.js"
import { budgetViews, type BudgetInfo } from "../../core/permits/view.js"
import { Permits, type PermitTicket, type WaitOutcome } from "../../services/permits/Permits.js"
import { TraceRecorder } from "../../services/pool/TraceRecorder.js"
import { SharedState } from "../../services/state/SharedState.js"
import { spanned, traced } from "../traced.js"

/** A budget this process knows: its capacity and how it was found. */
export type Budget = BudgetInfo

export interface PermitsConfig {
  readonly budgets: ReadonlyArray<Budget>
  /** How often a waiting request checks (default 250 ms). */
  readonly pollMs?: number | undefined
}

export const POLL_MS = 250

const NEEDS = { permits: true } as const

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

      /** One machine step in one transaction; recorded when it changed something. */
      const step = Effect.fnUntraced(function* (op: PermitOp) {
          const now = yield* Clock.currentTimeMillis
          const { s, read } = yield* shared.transact(now, NEEDS, (snapshot) => {
            const s = stepPermits(snapshot.permits, capacities, op, now)
            return { value: { s, read: snapshot.permits }, commit: { cool: [], uncool: [], permits: s.changes } }
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

      const wait = traced("Permits.wait")(function* (
        ticket: PermitTicket,
        options?: Parameters<Permits["Type"]["wait"]>[1]
      ) {
        let lastPosition = -1
        let lastPaused = false
        for (;;) {
          const s = yield* step({ op: "poll", id: ticket.id, token: ticket.token })
          const a: PermitAnswer = s.answer
          if (a.state === "granted") return { state: "granted", waitedMs: a.waitedMs, before: a.before } satisfies WaitOutcome
          if (a.state !== "queued") return { state: "gone", cause: a.state === "gone" ? a.cause : a.state === "refused" ? a.reason : a.state } satisfies WaitOutcome
          if (options?.onProgress !== undefined && (a.position !== lastPosition || a.paused !== lastPaused)) {
            lastPosition = a.position
            lastPaused = a.paused
            yield* options.onProgress({ position: a.position, paused: a.paused, holders: s.entries.filter((e) => e.budget === ticket.budget && e.grantedAt !== undefined) })
          }
          const now = yield* Clock.currentTimeMillis
          if (options?.deadline !== undefined && now >= options.deadline) return { state: "timeout" } satisfies WaitOutcome
          const nap = options?.deadline === undefined ? pollMs : Math.max(1, Math.min(pollMs, options.deadline - now))
          yield* Effect.sleep(nap)
        }
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
