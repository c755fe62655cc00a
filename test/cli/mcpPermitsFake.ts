/**
 * A small in-memory `Permits` for the MCP server's in-process tests: named budgets, FIFO with
 * head-of-line blocking, refusals as the port answers them. No liveness, no pausing: the real layer's
 * own tests cover those; this one lets the tool handlers be tested alone.
 */
import * as NodeStream from "@effect/platform-node/NodeStream"
import { Clock, Effect, Fiber, Layer } from "effect"
import { PassThrough } from "node:stream"
import { permitsMcpServer } from "../../src/layers/permits/PermitsMcpServer.js"
import type { CancelCause, PermitAnswer, PermitEntry, PermitView } from "../../src/core/permits/types.js"
import { Permits, type BudgetView, type PermitsService, type PermitTicket } from "../../src/services/permits/Permits.js"

export interface FakePermits extends PermitsService {
  /** Every entry (held and queued), for assertions. */
  readonly entries: () => ReadonlyArray<PermitEntry>
  /** How many times each op was called. */
  readonly calls: Record<string, number>
}

export const makeFakePermits = (capacities: Readonly<Record<string, number>> = { heavy: 1 }): FakePermits => {
  let entries: Array<PermitEntry> = []
  const gone = new Map<string, CancelCause | "holder gone" | "requester gone" | "forced" | "released">()
  let seq = 0
  const calls: Record<string, number> = {}
  const count = (op: string) => (calls[op] = (calls[op] ?? 0) + 1)
  const view = (e: PermitEntry): PermitView => ({ ...e, gone: false })

  const settle = (now: number) => {
    for (const budget of Object.keys(capacities)) {
      const mine = entries.filter((e) => e.budget === budget)
      let used = mine.filter((e) => e.grantedAt !== undefined).reduce((n, e) => n + e.weight, 0)
      for (const e of mine.filter((x) => x.grantedAt === undefined).sort((a, b) => a.seq - b.seq)) {
        if (used + e.weight > capacities[budget]!) break
        used += e.weight
        entries = entries.map((x) => (x.id === e.id ? { ...x, grantedAt: now } : x))
      }
    }
  }
  const answerFor = (id: string): PermitAnswer => {
    const e = entries.find((x) => x.id === id)
    if (e === undefined) {
      const cause = gone.get(id)
      return cause === undefined ? { state: "refused", reason: "unknown permit" } : cause === "released" ? { state: "already" } : { state: "gone", cause }
    }
    if (e.grantedAt !== undefined) return { state: "granted", id, waitedMs: e.grantedAt - e.requestedAt, before: 0 }
    const position = entries.filter((x) => x.budget === e.budget && x.grantedAt === undefined && x.seq <= e.seq).length
    return { state: "queued", id, position, paused: false }
  }
  const end = (ticket: Pick<PermitTicket, "id" | "token">, cause: CancelCause | "released"): Effect.Effect<PermitAnswer> =>
    Effect.map(Clock.currentTimeMillis, (now) => {
      const e = entries.find((x) => x.id === ticket.id)
      if (e === undefined) return gone.has(ticket.id) ? { state: "already" } : { state: "already" }
      if (e.token !== ticket.token) return { state: "refused", reason: "not yours" }
      entries = entries.filter((x) => x.id !== ticket.id)
      gone.set(ticket.id, cause)
      settle(now)
      return cause === "released" ? { state: "released" } : { state: "gone", cause }
    })

  const service: PermitsService = {
    budgets: Object.entries(capacities).map(([name, capacity]) => ({ name, capacity, source: "option" })),
    request: (req) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        count("request")
        const id = `p-${++seq}`
        const ticket = { id, token: `t-${seq}-${Math.random().toString(36).slice(2)}`, budget: req.budget, weight: req.weight }
        const capacity = capacities[req.budget]
        if (capacity === undefined) return { ticket, answer: { state: "refused", reason: "unknown budget" } as const }
        if (req.weight < 1 || req.weight > capacity) return { ticket, answer: { state: "refused", reason: "weight outside 1..capacity" } as const }
        entries.push({ ...ticket, reason: req.reason, holder: req.holder, seq, requestedAt: now, ...(req.pausable === true ? { seenAt: now } : {}) })
        settle(now)
        return { ticket, answer: answerFor(id) }
      }),
    poll: (ticket) => Effect.sync(() => (count("poll"), answerFor(ticket.id))),
    wait: (ticket, options) =>
      Effect.gen(function* () {
        count("wait")
        for (;;) {
          const a = answerFor(ticket.id)
          if (a.state === "granted") return { state: "granted", waitedMs: a.waitedMs, before: a.before } as const
          if (a.state !== "queued") return { state: "gone", cause: a.state === "gone" ? a.cause : a.state } as const
          const now = yield* Clock.currentTimeMillis
          if (options?.deadline !== undefined && now >= options.deadline) return { state: "timeout" } as const
          yield* Effect.sleep(options?.deadline === undefined ? 10 : Math.max(1, Math.min(10, options.deadline - now)))
        }
      }),
    release: (ticket) => (count("release"), end(ticket, "released")),
    cancel: (ticket, cause) => (count("cancel"), end(ticket, cause)),
    rebind: (ticket) => Effect.sync(() => answerFor(ticket.id)),
    free: (id) => Effect.sync(() => ({ answer: { state: "refused", reason: "holder alive" } as const, found: entries.map(view).find((e) => e.id === id) })),
    status: Effect.sync(() =>
      Object.entries(capacities).map(([name, capacity]): BudgetView => {
        const mine = entries.filter((e) => e.budget === name).sort((a, b) => a.seq - b.seq)
        const holders = mine.filter((e) => e.grantedAt !== undefined).map(view)
        return { name, capacity, source: "option", used: holders.reduce((n, e) => n + e.weight, 0), holders, queue: mine.filter((e) => e.grantedAt === undefined).map(view) }
      })
    )
  }
  return { ...service, entries: () => entries, calls }
}

export const fakePermitsLayer = (fake: FakePermits): Layer.Layer<Permits> => Layer.succeed(Permits, fake)

/** `ocpool mcp`'s server running in process over `fake`, on a pair of streams: what is written to `toServer` is its stdin, `fromServer` its stdout. */
export const launchMcpServer = (fake: FakePermits, pid: number) => {
  const toServer = new PassThrough()
  const fromServer = new PassThrough()
  const server = permitsMcpServer({
    version: "0.0.0-test",
    stdin: NodeStream.fromReadable(() => toServer, (e) => e),
    stdout: fromServer,
    holder: { host: "test-host", pid, startToken: "1", via: "mcp" }
  }).pipe(Layer.provide(fakePermitsLayer(fake)))
  const fiber = Effect.runFork(Layer.launch(server))
  return { toServer, fromServer, stop: () => Effect.runPromise(Fiber.interrupt(fiber)) }
}
