/**
 * The MCP tools over the permits (issue 21, `ocpool mcp`): `permit_acquire`, `permit_wait`,
 * `permit_release`, `permit_status`, as an `@effect/ai` toolkit whose handlers call the `Permits` port.
 * Every request is pausable (the client comes back by itself) and held by this server process; the
 * handlers' scope cancels or releases whatever this server still holds or queued when it closes
 * (stdin closed, SIGTERM), so an agent that forgets to release does not keep the budget.
 */
import { Tool, Toolkit } from "@effect/ai"
import { Clock, Effect, Schema } from "effect"
import { HEAVY, type PermitHolder, type PermitView } from "../../core/permits/types.js"
import { Permits, type BudgetView, type PermitTicket } from "../../services/permits/Permits.js"
import { ownHostId, startTimeOf } from "../state/proc.js"

/** The longest a tool call waits for a grant before answering (10 minutes). */
export const MAX_WAIT_MS = 600_000

/** The longest reason kept (one printable line). */
const REASON_MAX = 200

/** This server process as a permit holder. */
export const mcpHolder = (): PermitHolder => ({ host: ownHostId(), pid: process.pid, startToken: startTimeOf(process.pid), via: "mcp" })

const WaitMs = Schema.Int.pipe(Schema.between(0, MAX_WAIT_MS))

/** An entry as the tools show it (never its token). */
const Entry = Schema.Struct({
  id: Schema.String,
  budget: Schema.String,
  weight: Schema.Number,
  reason: Schema.String,
  via: Schema.String,
  host: Schema.String,
  pid: Schema.Number,
  session: Schema.optional(Schema.String),
  /** Epoch ms: when it was granted (holders) or queued (queue). */
  since: Schema.Number,
  /** Asked for by this server. */
  mine: Schema.Boolean
})

const Granted = Schema.Struct({ state: Schema.Literal("granted"), token: Schema.String, id: Schema.String, budget: Schema.String, weight: Schema.Number, waited_ms: Schema.Number })
const Queued = Schema.Struct({
  state: Schema.Literal("queued"),
  request: Schema.String,
  token: Schema.String,
  budget: Schema.String,
  weight: Schema.Number,
  position: Schema.Number,
  paused: Schema.Boolean,
  holders: Schema.Array(Entry)
})
const Gone = Schema.Struct({ state: Schema.Literal("gone"), request: Schema.String, cause: Schema.String })

/** A refusal: the tool call answers with `isError` and this object. */
const Refused = Schema.Struct({ error: Schema.String })
type Refused = typeof Refused.Type

const Budget = Schema.Struct({
  name: Schema.String,
  capacity: Schema.Number,
  source: Schema.String,
  used: Schema.Number,
  holders: Schema.Array(Entry),
  queue: Schema.Array(Entry)
})

export const PermitAcquire = Tool.make("permit_acquire", {
  description:
    "Ask for a machine-wide permit right before heavy work (a build, a test suite, a package install, a container build). Answers granted (with a token: release it with permit_release as soon as the work is done) or queued (with a request id: keep doing light work and call permit_wait). Waits up to wait_ms for a grant first.",
  parameters: {
    reason: Schema.String.annotations({ description: "What the permit is for, e.g. the command" }),
    weight: Schema.optional(Schema.Int.pipe(Schema.greaterThanOrEqualTo(1))).annotations({ description: "Units of the budget (default 1, at most its capacity)" }),
    budget: Schema.optional(Schema.String).annotations({ description: 'The budget (default "heavy")' }),
    wait_ms: Schema.optional(WaitMs).annotations({ description: "How long to wait for a grant before answering queued (0..600000 ms, default 0; keep it under your client's tool-call timeout)" })
  },
  success: Schema.Union(Granted, Queued),
  failure: Refused
})

export const PermitWait = Tool.make("permit_wait", {
  description: "Wait up to wait_ms for a queued request: granted (with its token), still queued (with its position), or gone. Calling it also keeps a queued request from being paused.",
  parameters: {
    request: Schema.String.annotations({ description: "The request id permit_acquire answered" }),
    wait_ms: WaitMs.annotations({ description: "How long to wait (0..600000 ms; keep it under your client's tool-call timeout)" })
  },
  success: Schema.Union(Granted, Queued, Gone),
  failure: Refused
})

export const PermitRelease = Tool.make("permit_release", {
  description: "Release a permit (or give up a queued request) at once when the heavy work is done. Releasing twice is fine.",
  parameters: { token: Schema.String.annotations({ description: "The token permit_acquire or permit_wait answered" }) },
  success: Schema.Struct({ state: Schema.Literal("released", "already") }),
  failure: Refused
})

export const PermitStatus = Tool.make("permit_status", {
  description: "Every budget: capacity, units used, who holds permits and who waits, in order.",
  success: Schema.Struct({ budgets: Schema.Array(Budget) }),
  failure: Refused
})

export const PermitsToolkit = Toolkit.make(PermitAcquire, PermitWait, PermitRelease, PermitStatus)

const refuse = (error: string): Effect.Effect<never, Refused> => Effect.fail({ error })

/** One printable line of at most REASON_MAX characters. */
const oneLine = (text: string): string => text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, " ").trim().slice(0, REASON_MAX)

/**
 * The toolkit's handlers for a server whose requests are held by `holder`. Scoped: closing the scope
 * cancels every request of this server that is still queued or held.
 */
export const permitsMcpHandlers = (holder: PermitHolder = mcpHolder()) =>
  PermitsToolkit.toLayer(
    Effect.gen(function* () {
      const permits = yield* Permits
      /** This server's requests by id, and the ids of those still open (not released nor gone). */
      const tickets = new Map<string, PermitTicket>()
      const open = new Set<string>()

      yield* Effect.addFinalizer(() =>
        Effect.forEach([...open], (id) => permits.cancel(tickets.get(id)!, "dispose"), { discard: true }).pipe(Effect.andThen(Effect.sync(() => open.clear())))
      )

      const entry = (v: PermitView): typeof Entry.Type => ({
        id: v.id,
        budget: v.budget,
        weight: v.weight,
        reason: v.reason,
        via: v.holder.via,
        host: v.holder.host,
        pid: v.holder.pid,
        ...(v.holder.session === undefined ? {} : { session: v.holder.session }),
        since: v.grantedAt ?? v.requestedAt,
        mine: tickets.has(v.id)
      })
      const budgetOf = (name: string): Effect.Effect<BudgetView | undefined> => Effect.map(permits.status, (all) => all.find((b) => b.name === name))

      /** The answer for a request still queued: its position and who holds its budget. */
      const queued = (ticket: PermitTicket, position: number, paused: boolean) =>
        Effect.map(budgetOf(ticket.budget), (b) => ({
          state: "queued" as const,
          request: ticket.id,
          token: ticket.token,
          budget: ticket.budget,
          weight: ticket.weight,
          position,
          paused,
          holders: (b?.holders ?? []).map(entry)
        }))
      const granted = (ticket: PermitTicket, waitedMs: number) => ({ state: "granted" as const, token: ticket.token, id: ticket.id, budget: ticket.budget, weight: ticket.weight, waited_ms: waitedMs })

      /** Waits up to `waitMs` for `ticket`, then says where it stands. */
      const settle = (ticket: PermitTicket, waitMs: number) =>
        Effect.gen(function* () {
          if (waitMs > 0) {
            const deadline = (yield* Clock.currentTimeMillis) + waitMs
            const outcome = yield* permits.wait(ticket, { deadline })
            if (outcome.state === "granted") return granted(ticket, outcome.waitedMs)
            if (outcome.state === "gone") return gone(ticket, outcome.cause)
          }
          const answer = yield* permits.poll(ticket)
          switch (answer.state) {
            case "granted":
              return granted(ticket, answer.waitedMs)
            case "queued":
              return yield* queued(ticket, answer.position, answer.paused)
            case "gone":
              return gone(ticket, answer.cause)
            case "refused":
              return yield* refuse(answer.reason)
            default:
              return gone(ticket, answer.state)
          }
        })
      const gone = (ticket: PermitTicket, cause: string) => {
        open.delete(ticket.id)
        return { state: "gone" as const, request: ticket.id, cause }
      }

      return {
        permit_acquire: ({ budget, reason, wait_ms, weight }) =>
          Effect.gen(function* () {
            const { answer, ticket } = yield* Effect.uninterruptible(
              Effect.tap(permits.request({ budget: budget ?? HEAVY, weight: weight ?? 1, reason: oneLine(reason), holder, pausable: true }), ({ answer, ticket }) =>
                Effect.sync(() => {
                  if (answer.state === "granted" || answer.state === "queued") {
                    tickets.set(ticket.id, ticket)
                    open.add(ticket.id)
                  }
                })
              )
            )
            if (answer.state === "refused") return yield* refuse(answer.reason)
            if (answer.state === "granted") return granted(ticket, answer.waitedMs)
            if (answer.state !== "queued") return yield* refuse(`request ${answer.state}`)
            const after = yield* settle(ticket, wait_ms ?? 0)
            // a request that left the queue without a grant answers as refused: acquire promised granted or queued
            return after.state === "gone" ? yield* refuse(`request gone: ${after.cause}`) : after
          }),
        permit_wait: ({ request, wait_ms }) =>
          Effect.gen(function* () {
            const ticket = tickets.get(request)
            if (ticket === undefined) return yield* refuse("unknown request (not asked for through this server)")
            if (!open.has(request)) return { state: "gone" as const, request, cause: "released" }
            return yield* settle(ticket, wait_ms)
          }),
        permit_release: ({ token }) =>
          Effect.gen(function* () {
            const ticket = [...tickets.values()].find((t) => t.token === token)
            if (ticket === undefined) return yield* refuse("unknown permit: not a token of this server")
            const answer = yield* permits.release(ticket)
            if (answer.state === "refused") return yield* refuse(answer.reason)
            open.delete(ticket.id)
            return { state: answer.state === "released" ? ("released" as const) : ("already" as const) }
          }),
        permit_status: () =>
          Effect.map(permits.status, (all) => ({
            budgets: all.map((b) => ({ name: b.name, capacity: b.capacity, source: b.source, used: b.used, holders: b.holders.map(entry), queue: b.queue.map(entry) }))
          }))
      }
    })
  )
