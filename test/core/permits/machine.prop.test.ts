/**
 * Properties of the permit machine (issue 21) over random op sequences and capacities: the capacity
 * holds, FIFO order among non-paused entries, no double grant, every request ends, and the changes
 * turn the input into the output.
 */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { stepPermits } from "../../../src/core/permits/machine.js"
import type { CancelCause, Capacities, PermitEntry, PermitOp, PermitStep, PermitView } from "../../../src/core/permits/types.js"

const T = 1_796_115_600_000
const holder = { host: "h", pid: 1, startToken: null, via: "mcp" as const }

type Action =
  | { readonly k: "request"; readonly budget: string; readonly weight: number; readonly pausable: boolean }
  | { readonly k: "poll" | "release"; readonly pick: number; readonly wrong: boolean }
  | { readonly k: "cancel"; readonly pick: number; readonly cause: CancelCause }
  | { readonly k: "free"; readonly pick: number; readonly force: boolean }
  | { readonly k: "kill"; readonly pick: number }
  | { readonly k: "settle" }

const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ k: fc.constant("request" as const), budget: fc.constantFrom("heavy", "heavy", "gpu", "tpu"), weight: fc.integer({ min: 0, max: 5 }), pausable: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constantFrom("poll" as const, "release" as const), pick: fc.nat(), wrong: fc.constantFrom(false, false, false, false, true) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("cancel" as const), pick: fc.nat(), cause: fc.constantFrom<CancelCause>("aborted", "timeout", "wait", "error", "dispose") }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("free" as const), pick: fc.nat(), force: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("kill" as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.constant({ k: "settle" as const }) }
)

const capacities: fc.Arbitrary<Capacities> = fc.record({ heavy: fc.integer({ min: 1, max: 4 }), gpu: fc.integer({ min: 1, max: 3 }) })

/** The input with the changes applied: remove, then upsert by id. */
const applyChanges = (input: ReadonlyArray<PermitEntry>, step: PermitStep): Map<string, PermitEntry> => {
  const m = new Map(input.map((e) => [e.id, e] as const))
  for (const id of step.changes.remove) m.delete(id)
  for (const e of step.changes.put) m.set(e.id, e)
  return m
}

const strip = (v: PermitView): PermitEntry => {
  const { gone: _gone, ...e } = v
  return e
}

/** Runs a sequence, checking the per-step properties; returns what it saw. */
const simulate = (caps: Capacities, actions: ReadonlyArray<readonly [Action, number]>) => {
  let table: ReadonlyArray<PermitView> = []
  let now = T
  let n = 0
  const killed = new Set<string>()
  const ids: Array<string> = []
  const accepted = new Set<string>()
  const granted = new Set<string>()
  const ended = new Set<string>()
  const acts = new Set<string>()

  const stepOnce = (op: PermitOp) => {
    const input = table.map((e) => (killed.has(e.id) ? { ...e, gone: true } : e))
    const r = stepPermits(input, caps, op, now)
    // changes applied to the input give the output entries
    const applied = applyChanges(input.map(strip), r)
    expect([...applied.values()].sort((a, b) => a.seq - b.seq)).toEqual(r.entries.map(strip))
    expect(r.entries.every((e) => !e.gone)).toBe(true)
    // held units per known budget never exceed its capacity
    for (const [budget, cap] of Object.entries(caps)) {
      const used = r.entries.filter((e) => e.budget === budget && e.grantedAt !== undefined).reduce((s, e) => s + e.weight, 0)
      expect(used).toBeLessThanOrEqual(cap)
    }
    for (const d of r.decisions) {
      acts.add(d.act === "refuse" ? `refuse ${d.reason}` : d.act === "release" || d.act === "cancel" ? `${d.act} ${d.cause}` : d.act)
      if (d.act === "grant") {
        // no entry granted twice
        expect(granted.has(d.id)).toBe(false)
        granted.add(d.id)
        // FIFO: every earlier entry of its budget still queued is paused
        const g = r.entries.find((e) => e.id === d.id)!
        for (const e of r.entries) if (e.budget === g.budget && e.seq < g.seq && e.grantedAt === undefined) expect(e.pausedAt).toBeDefined()
      }
      if (d.act === "release" || d.act === "cancel") {
        expect(ended.has(d.id)).toBe(false)
        ended.add(d.id)
      }
    }
    // grants of one step come in seq order per budget
    const seqOf = new Map(r.entries.map((e) => [e.id, e.seq] as const))
    const lastSeq = new Map<string, number>()
    for (const d of r.decisions) {
      if (d.act !== "grant") continue
      const s = seqOf.get(d.id)!
      expect(s).toBeGreaterThan(lastSeq.get(d.budget) ?? -Infinity)
      lastSeq.set(d.budget, s)
    }
    if (op.op === "request") {
      expect(r.answer.state === "granted").toBe(r.decisions.some((d) => d.act === "grant" && d.id === op.entry.id))
      if (r.answer.state !== "refused") accepted.add(op.entry.id)
    }
    table = r.entries
    return r
  }

  const tokenOf = (id: string) => `tok-${id}`
  for (const [a, dt] of actions) {
    now += dt
    const id = ids.length === 0 ? "nobody" : (ids[("pick" in a ? a.pick : 0) % (ids.length + 1)] ?? "nobody")
    switch (a.k) {
      case "request": {
        const fresh = `p-${++n}`
        ids.push(fresh)
        stepOnce({ op: "request", entry: { id: fresh, token: tokenOf(fresh), budget: a.budget, weight: a.weight, reason: "r", holder, requestedAt: now, ...(a.pausable ? { seenAt: now } : {}) } })
        break
      }
      case "poll":
      case "release":
        stepOnce({ op: a.k, id, token: a.wrong ? "wrong" : tokenOf(id) })
        break
      case "cancel":
        stepOnce({ op: "cancel", id, token: tokenOf(id), cause: a.cause })
        break
      case "free":
        stepOnce({ op: "free", id, force: a.force })
        break
      case "kill":
        killed.add(id)
        stepOnce({ op: "settle" })
        break
      case "settle":
        stepOnce({ op: "settle" })
        break
    }
  }
  // every holder releases; every waiting client comes back: every request ends granted or gone
  for (let round = 0; round < 500 && table.length > 0; round++) {
    now += 1000
    const before = table
    for (const e of before) {
      if (!table.some((x) => x.id === e.id)) continue
      stepOnce(e.grantedAt !== undefined ? { op: "release", id: e.id, token: e.token } : { op: "poll", id: e.id, token: e.token })
    }
  }
  return { table, accepted, granted, ended, acts }
}

describe("permit machine properties", () => {
  it("US-51 random op sequences: capacity, FIFO among non-paused, no double grant, changes give the output, every request ends", () => {
    fc.assert(
      fc.property(capacities, fc.array(fc.tuple(action, fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 45_000 }))), { minLength: 10, maxLength: 60, size: "max" }), (caps, actions) => {
        const r = simulate(caps, actions)
        expect(r.table).toEqual([])
        // the unknown budget is refused, so every accepted request was granted or left (released, cancelled, dropped)
        for (const id of r.accepted) expect(r.granted.has(id) || r.ended.has(id)).toBe(true)
        for (const id of r.granted) expect(r.ended.has(id)).toBe(true)
      }),
      { numRuns: 300, seed: 20261202 }
    )
  })

  it("US-51 the random sequences reach every rule: grants, queues, pauses, resumes, refusals, drops, forced frees", () => {
    const seen = new Set<string>()
    for (const [caps, actions] of fc.sample(fc.tuple(capacities, fc.array(fc.tuple(action, fc.integer({ min: 0, max: 45_000 })), { minLength: 10, maxLength: 60, size: "max" })), { numRuns: 200, seed: 7 })) {
      for (const a of simulate(caps, actions).acts) seen.add(a)
    }
    expect([...seen].sort()).toEqual(
      ["cancel aborted", "cancel dispose", "cancel error", "cancel forced", "cancel requester gone", "cancel timeout", "cancel wait", "grant", "pause", "queue", "refuse holder alive", "refuse not yours", "refuse unknown budget", "refuse unknown permit", "refuse weight outside 1..capacity", "release forced", "release holder gone", "release released", "resume"].sort()
    )
  })
  it("US-51 total over any table it may read: duplicate seqs, odd weights, stale fields, unknown budgets; no exception, a grant never overfills", () => {
    const num = fc.oneof(fc.integer({ min: -3, max: 6 }), fc.double({ noNaN: true, noDefaultInfinity: true, min: -10, max: 10 }))
    const view = fc.record(
      {
        id: fc.constantFrom("a", "b", "c", "d", "e", "f"),
        token: fc.constantFrom("t", "u"),
        budget: fc.constantFrom("heavy", "gpu", "constructor", "__proto__"),
        weight: num,
        reason: fc.string(),
        holder: fc.constant(holder),
        seq: fc.integer({ min: -2, max: 5 }),
        requestedAt: fc.integer({ min: T - 100_000, max: T + 100_000 }),
        grantedAt: fc.integer({ min: T - 100_000, max: T + 100_000 }),
        seenAt: fc.integer({ min: T - 100_000, max: T + 100_000 }),
        headSince: fc.integer({ min: T - 100_000, max: T + 100_000 }),
        pausedAt: fc.integer({ min: T - 100_000, max: T + 100_000 }),
        ahead: fc.nat(4),
        gone: fc.boolean()
      },
      { requiredKeys: ["id", "token", "budget", "weight", "reason", "holder", "seq", "requestedAt", "gone"] }
    )
    const id = fc.constantFrom("a", "b", "z")
    const token = fc.constantFrom("t", "u")
    const op: fc.Arbitrary<PermitOp> = fc.oneof(
      fc.record({ op: fc.constant("request" as const), entry: fc.record({ id, token, budget: fc.constantFrom("heavy", "gpu", "toString"), weight: num, reason: fc.constant(""), holder: fc.constant(holder), requestedAt: fc.constant(T), seenAt: fc.constant(T) }, { requiredKeys: ["id", "token", "budget", "weight", "reason", "holder", "requestedAt"] }) }),
      fc.record({ op: fc.constantFrom("poll" as const, "release" as const), id, token }),
      fc.record({ op: fc.constant("cancel" as const), id, token, cause: fc.constant<CancelCause>("aborted") }),
      fc.record({ op: fc.constant("rebind" as const), id, token, group: fc.record({ pgid: fc.nat(), startToken: fc.constant(null) }) }),
      fc.record({ op: fc.constant("free" as const), id, force: fc.boolean() }),
      fc.constant({ op: "settle" as const })
    )
    fc.assert(
      fc.property(fc.uniqueArray(view, { selector: (v) => v.id, maxLength: 6 }), capacities, op, fc.integer({ min: T - 100_000, max: T + 100_000 }), (input, caps, o, now) => {
        const r = stepPermits(input, caps, o, now)
        expect(r.entries.every((e) => !e.gone)).toBe(true)
        expect([...applyChanges(input.map(strip), r).values()].sort((a, b) => a.seq - b.seq || (a.id < b.id ? -1 : 1))).toEqual(r.entries.map(strip))
        for (const d of r.decisions) {
          if (d.act !== "grant") continue
          const used = r.entries.filter((e) => e.budget === d.budget && e.grantedAt !== undefined).reduce((s, e) => s + e.weight, 0)
          // each grant checks used + weight ≤ capacity, and nothing after it adds units: the budget ends within its capacity
          expect(used).toBeLessThanOrEqual(caps[d.budget]!)
        }
      }),
      { numRuns: 500, seed: 20261203 }
    )
  })
})
