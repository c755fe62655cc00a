/**
 * What a permit step counts (issue 36, core/metrics/permitCounts.ts), over real steps of the permit
 * machine: requests queued or granted at once, grants with their wait in the histogram, cancels; budgets
 * by name when configured here, `other` when not.
 */
import { describe, expect, it } from "@effect/vitest"
import { stepPermits } from "../../../src/core/permits/machine.js"
import type { Capacities, PermitEntry, PermitOp, PermitView } from "../../../src/core/permits/types.js"
import { count, observeWait } from "../../../src/core/metrics/counters.js"
import { OTHER_BUDGET, permitCounts } from "../../../src/core/metrics/permitCounts.js"

const T = 1_796_115_600_000
const CAPS: Capacities = { heavy: 1, gpu: 1 }
const holder = { host: "h", pid: 100, startToken: "7", via: "plugin" as const }

const request = (id: string, at: number, budget = "heavy"): PermitOp => ({
  op: "request",
  entry: { id, token: `tok-${id}`, budget, weight: 1, reason: `job ${id}`, holder, requestedAt: at }
})

/** Steps the machine over the entries as stored, and what each step counted. */
const machine = (caps: Capacities = CAPS) => {
  let entries: ReadonlyArray<PermitView> = []
  return (op: PermitOp, now: number, gone: ReadonlySet<string> = new Set()) => {
    const s = stepPermits(entries.map((e) => ({ ...e, gone: gone.has(e.id) })), caps, op, now)
    const removed = new Set(s.changes.remove)
    const byId = new Map<string, PermitEntry>(entries.filter((e) => !removed.has(e.id)).map((e) => [e.id, e]))
    for (const e of s.changes.put) byId.set(e.id, e)
    entries = [...byId.values()].map((e) => ({ ...e, gone: false }))
    return permitCounts(op, s.decisions, caps)
  }
}

describe("US-53 a permit step's counts", () => {
  it("US-53 a request granted at once counts a request, a grant and a zero wait; one queued counts a request; its later grant the wait", () => {
    const step = machine()
    expect(step(request("a", T), T)).toEqual([count("permit_requests_total", ["heavy"]), count("permit_grants_total", ["heavy"]), ...observeWait("heavy", 0)])
    expect(step(request("b", T + 1_000), T + 1_000)).toEqual([count("permit_requests_total", ["heavy"])])
    // a poll of the queued one counts nothing; the release of the holder grants it after 20 s
    expect(step({ op: "poll", id: "b", token: "tok-b" }, T + 2_000)).toEqual([])
    expect(step({ op: "release", id: "a", token: "tok-a" }, T + 21_000)).toEqual([count("permit_grants_total", ["heavy"]), ...observeWait("heavy", 20)])
    expect(observeWait("heavy", 20)[0]!.labels).toEqual(["heavy", "30"])
  })

  it("US-53 cancels are counted: by the requester, a queued entry released, a gone requester dropped", () => {
    const step = machine()
    step(request("a", T), T)
    step(request("b", T), T)
    step(request("c", T), T)
    step(request("d", T), T)
    expect(step({ op: "cancel", id: "b", token: "tok-b", cause: "aborted" }, T + 1)).toEqual([count("permit_cancels_total", ["heavy"])])
    expect(step({ op: "release", id: "c", token: "tok-c" }, T + 2)).toEqual([count("permit_cancels_total", ["heavy"])])
    expect(step({ op: "settle" }, T + 3, new Set(["d"]))).toEqual([count("permit_cancels_total", ["heavy"])])
    // a holder's own release is no cancel
    expect(step({ op: "release", id: "a", token: "tok-a" }, T + 4)).toEqual([])
  })

  it("US-53 a request for a budget this process does not know is refused and counted nowhere; another process's budget is `other`", () => {
    const step = machine()
    expect(step(request("x", T, "made-up-by-a-client"), T)).toEqual([])
    expect(step(request("y", T, "gpu"), T)).toEqual([count("permit_requests_total", ["gpu"]), count("permit_grants_total", ["gpu"]), ...observeWait("gpu", 0)])
    // an entry of a budget only another process configured, its requester gone: dropped here as `other`
    const mine = machine({ heavy: 1 })
    const theirs = stepPermits([], { heavy: 1, "their-budget": 1 }, request("z", T, "their-budget"), T)
    // queued there (its grant taken away): a gone requester's entry is cancelled
    const queued = theirs.changes.put.map(({ grantedAt: _g, ...e }) => ({ ...e, gone: true }))
    const s = stepPermits(queued, { heavy: 1 }, { op: "settle" }, T + 5)
    expect(permitCounts({ op: "settle" }, s.decisions, { heavy: 1 })).toEqual([count("permit_cancels_total", [OTHER_BUDGET])])
    expect(mine({ op: "settle" }, T)).toEqual([])
  })
})
