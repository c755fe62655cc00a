/**
 * A fake `Permits` (and `MachineFacts`) for the CLI's permit commands: one in-memory table honouring the
 * port's semantics roughly (FIFO with head-of-line blocking, weight within 1..capacity, release
 * idempotent, another's token refused, `free` only for gone holders unless forced). The test holds and
 * releases permits as "other processes", marks holders gone, and reads what the command asked.
 */
import { Clock, Effect, Layer, Option } from "effect"
import type { PermitAnswer, PermitHolder, PermitView } from "../../src/core/permits/types.js"
import { PermitsCliLayer } from "../../src/cli/permits.js"
import { MachineFacts, type MachineFactsView } from "../../src/services/permits/MachineFacts.js"
import { Permits, type BudgetView, type PermitTicket, type WaitOutcome } from "../../src/services/permits/Permits.js"

export interface FakeBudget {
  readonly name: string
  readonly capacity: number
  readonly source: string
}

export const FACTS: MachineFactsView = {
  cpus: { cpus: 2, online: 8, source: "cgroup v2 cpu.max 200000 100000" },
  memory: { totalBytes: 16 * 1024 ** 3, availableBytes: 3.5 * 1024 ** 3, limitBytes: 8 * 1024 ** 3, limitSource: "/sys/fs/cgroup/memory.max" },
  cgroup: { version: "v2", paths: ["/sys/fs/cgroup"] },
  pressure: { cpu: 1.25, memory: undefined }
}

export const makeFake = (budgets: ReadonlyArray<FakeBudget> = [{ name: "heavy", capacity: 2, source: "option" }], pollMs = 20) => {
  let seq = 0
  let entries: Array<PermitView> = []
  const gone = new Set<string>()
  /** Every call the command made, in order (`request heavy 1`, `wait p-1`, `rebind p-1 4242`, …). */
  const calls: Array<string> = []
  const stateDirs: Array<Option.Option<string>> = []

  const capacity = (name: string) => budgets.find((b) => b.name === name)?.capacity
  const view = (e: PermitView): PermitView => ({ ...e, gone: gone.has(e.id) })

  /** Grants what the FIFO order allows: a queued request waits for every earlier one. */
  const settle = (now: number) => {
    for (const b of budgets) {
      let used = entries.filter((e) => e.budget === b.name && e.grantedAt !== undefined).reduce((n, e) => n + e.weight, 0)
      for (const e of entries.filter((x) => x.budget === b.name && x.grantedAt === undefined).sort((x, y) => x.seq - y.seq)) {
        if (used + e.weight > b.capacity) break
        used += e.weight
        entries = entries.map((x) => (x.id === e.id ? { ...x, grantedAt: now } : x))
      }
    }
  }

  const answerOf = (id: string): PermitAnswer => {
    const e = entries.find((x) => x.id === id)
    if (e === undefined) return { state: "gone", cause: "forced" }
    if (e.grantedAt !== undefined) return { state: "granted", id, waitedMs: e.grantedAt - e.requestedAt, before: 0 }
    const position = entries.filter((x) => x.budget === e.budget && x.grantedAt === undefined && x.seq <= e.seq).length
    return { state: "queued", id, position, paused: false }
  }

  const add = (budget: string, weight: number, reason: string, holder: PermitHolder, now: number): PermitView => {
    seq += 1
    const e: PermitView = { id: `p-${seq}`, token: `t-${seq}`, budget, weight, reason, holder, seq, requestedAt: now, gone: false }
    entries.push(e)
    settle(now)
    return e
  }

  const remove = (id: string, now: number) => {
    entries = entries.filter((e) => e.id !== id)
    settle(now)
  }

  const ownedBy = (t: Pick<PermitTicket, "id" | "token">) => entries.find((e) => e.id === t.id)

  const service: Permits["Type"] = {
    budgets,
    request: (req) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        calls.push(`request ${req.budget} ${req.weight} ${req.holder.via} ${req.reason}`)
        const cap = capacity(req.budget)
        const ticketOf = (id: string): PermitTicket => ({ id, token: `t-${id}`, budget: req.budget, weight: req.weight })
        if (cap === undefined) return { ticket: ticketOf("p-none"), answer: { state: "refused", reason: "unknown budget" } as const }
        if (req.weight < 1 || req.weight > cap) return { ticket: ticketOf("p-none"), answer: { state: "refused", reason: "weight outside 1..capacity" } as const }
        const e = add(req.budget, req.weight, req.reason, req.holder, now)
        return { ticket: { id: e.id, token: e.token, budget: e.budget, weight: e.weight }, answer: answerOf(e.id) }
      }),
    poll: (t) => Effect.sync(() => answerOf(t.id)),
    wait: (t, options) =>
      Effect.gen(function* () {
        calls.push(`wait ${t.id}`)
        let last = -1
        for (;;) {
          const now = yield* Clock.currentTimeMillis
          settle(now)
          const a = answerOf(t.id)
          if (a.state === "granted") return { state: "granted", waitedMs: a.waitedMs, before: a.before } satisfies WaitOutcome
          if (a.state !== "queued") return { state: "gone", cause: "forced" } satisfies WaitOutcome
          if (options?.onProgress !== undefined && a.position !== last) {
            last = a.position
            yield* options.onProgress({ position: a.position, paused: false, holders: entries.filter((e) => e.budget === t.budget && e.grantedAt !== undefined).map(view) })
          }
          if (options?.deadline !== undefined && now >= options.deadline) return { state: "timeout" } satisfies WaitOutcome
          yield* Effect.sleep(options?.deadline === undefined ? pollMs : Math.max(1, Math.min(pollMs, options.deadline - now)))
        }
      }),
    release: (t) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        calls.push(`release ${t.id}`)
        const e = ownedBy(t)
        if (e === undefined) return { state: "already" } as const
        if (e.token !== t.token) return { state: "refused", reason: "not yours" } as const
        remove(e.id, now)
        return { state: "released" } as const
      }),
    cancel: (t, cause) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        calls.push(`cancel ${t.id} ${cause}`)
        const e = ownedBy(t)
        if (e === undefined) return { state: "already" } as const
        if (e.token !== t.token) return { state: "refused", reason: "not yours" } as const
        remove(e.id, now)
        return { state: "gone", cause } as const
      }),
    rebind: (t, group) =>
      Effect.sync(() => {
        calls.push(`rebind ${t.id} ${group.pgid}`)
        const e = ownedBy(t)
        if (e === undefined || e.token !== t.token) return { state: "refused", reason: "not yours" } as const
        entries = entries.map((x) => (x.id === e.id ? { ...x, holder: { ...x.holder, group } } : x))
        return answerOf(e.id)
      }),
    free: (id, force) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        calls.push(`free ${id} ${force}`)
        const e = entries.find((x) => x.id === id)
        if (e === undefined) return { answer: { state: "refused", reason: "unknown permit" } as const, found: undefined }
        const found = view(e)
        if (found.gone) {
          remove(id, now)
          return { answer: { state: "gone", cause: "holder gone" } as const, found }
        }
        if (!force) return { answer: { state: "refused", reason: "holder alive" } as const, found }
        remove(id, now)
        return { answer: { state: "gone", cause: "forced" } as const, found }
      }),
    status: Effect.sync(() =>
      budgets.map((b): BudgetView => {
        const mine = entries.filter((e) => e.budget === b.name).map(view)
        const holders = mine.filter((e) => e.grantedAt !== undefined)
        return { name: b.name, capacity: b.capacity, source: b.source, used: holders.reduce((n, e) => n + e.weight, 0), holders, queue: mine.filter((e) => e.grantedAt === undefined).sort((x, y) => x.seq - y.seq) }
      })
    )
  }

  const layer = Layer.mergeAll(Layer.succeed(Permits, service), Layer.succeed(MachineFacts, { read: Effect.succeed(FACTS) }))

  return {
    service,
    calls,
    stateDirs,
    /** Another process holds (or queues for) `weight` units; returns its entry. */
    hold: (budget: string, weight: number, reason: string, holder: Partial<PermitHolder> = {}, at = Date.now()) =>
      add(budget, weight, reason, { host: "h", pid: 4242, startToken: "1", via: "plugin", ...holder }, at),
    /** Another process releases its entry. */
    drop: (id: string) => remove(id, Date.now()),
    markGone: (id: string) => void gone.add(id),
    /** Changes an entry in place (a pausedAt, a session, an older grant). */
    patch: (id: string, fields: Partial<PermitView>) => void (entries = entries.map((e) => (e.id === id ? { ...e, ...fields } : e))),
    entries: () => entries.map(view),
    /** Provide this around `runCli`: the permit commands get the fake. */
    provide: <A, E, R>(self: Effect.Effect<A, E, R>) =>
      Effect.provideService(self, PermitsCliLayer, (dir: Option.Option<string>) => {
        stateDirs.push(dir)
        return layer
      })
  }
}

export type Fake = ReturnType<typeof makeFake>
