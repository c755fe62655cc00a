import { describe, expect, it } from "@effect/vitest"
import { liveLoadByModel, slotLoadsOf } from "../../../src/core/pool/slotStatus.js"
import { pickSlot } from "../../../src/core/pool/routing.js"
import { pool, routes, run, T0, trace } from "../../helpers.js"

/** Routes n spawns (every claim held) over weights, with some slots cooling, and returns slots and passes. */
const fill = (weights: ReadonlyArray<number>, n: number, coolingSlots: ReadonlyArray<number> = []) => {
  const loads = weights.map(() => 0)
  const cooling = weights.map((_, i) => coolingSlots.includes(i + 1))
  const picks: Array<{ slot: number; pass: string }> = []
  for (let i = 0; i < n; i++) {
    const p = pickSlot({ weights, loads, cooling })!
    loads[p.position]!++
    picks.push({ slot: p.position + 1, pass: p.pass })
  }
  return { slots: picks.map((p) => p.slot), passes: picks.map((p) => p.pass), loads }
}

describe("routing (SPEC §6)", () => {
  it("US-5 weights [3,2,1,1]: spawns 1-7 fill the first pass in declaration order", () => {
    const r = fill([3, 2, 1, 1], 7)
    expect(r.slots).toEqual([1, 1, 1, 2, 2, 3, 4])
    expect(r.passes.every((p) => p === "first")).toBe(true)
  })

  it("US-5 spawns 8-14 repeat the order in the second pass, loads [6,4,2,2]", () => {
    const r = fill([3, 2, 1, 1], 14)
    expect(r.slots.slice(7)).toEqual([1, 1, 1, 2, 2, 3, 4])
    expect(r.passes.slice(7).every((p) => p === "second")).toBe(true)
    expect(r.loads).toEqual([6, 4, 2, 2])
  })

  it("US-5 spawns 15-25 overflow to the least loaded, ties to the lowest index (SPEC §6.2 table)", () => {
    const r = fill([3, 2, 1, 1], 25)
    expect(r.slots.slice(14, 19)).toEqual([3, 4, 3, 4, 2])
    expect(r.slots.slice(19, 24)).toEqual([3, 4, 2, 3, 4])
    expect(r.slots[24]).toBe(1)
    expect(r.passes.slice(14).every((p) => p === "overflow")).toBe(true)
    expect(r.loads).toEqual([7, 6, 6, 6])
  })

  it("US-5 slot 2 cooling: 12 spawns go 1,1,1,3,4,1,1,1,3,4,3,4 and slot 2 stays empty", () => {
    const r = fill([3, 2, 1, 1], 12, [2])
    expect(r.slots).toEqual([1, 1, 1, 3, 4, 1, 1, 1, 3, 4, 3, 4])
    expect(r.loads[1]).toBe(0)
  })

  it("US-5 weights [0.5,1], [1,2], [3,1] and [1,1,1]", () => {
    expect(fill([0.5, 1], 5).slots).toEqual([1, 2, 2, 1, 1])
    expect(fill([1, 2], 6).slots).toEqual([1, 2, 2, 1, 2, 2])
    expect(fill([3, 1], 10).slots).toEqual([1, 1, 1, 2, 1, 1, 1, 2, 2, 2])
    expect(fill([1, 1, 1], 9).slots).toEqual([1, 2, 3, 1, 2, 3, 1, 2, 3])
  })

  it("US-4 every slot cooling: the least-loaded slot, ties to the lowest index, pass overflow", () => {
    expect(pickSlot({ weights: [1, 1], loads: [1, 0], cooling: [true, true] })).toEqual({ position: 1, pass: "overflow" })
    expect(pickSlot({ weights: [1, 1], loads: [0, 0], cooling: [true, true] })).toEqual({ position: 0, pass: "overflow" })
  })

  it("US-4 a cooling model is skipped while another slot is usable", () => {
    expect(pickSlot({ weights: [3, 1], loads: [0, 5], cooling: [true, false] })).toEqual({ position: 1, pass: "overflow" })
  })

  it("US-5 releases reopen a slot: after 7 spawns a slot-2 release routes to slot 2 (first); after 14 a slot-1 release routes to slot 1 (second)", () => {
    const base = [pool(T0, ["zen/a", 3], ["zen/b", 2], ["go/c", 1], ["go/d", 1])]
    const spawns = (n: number) => Array.from({ length: n }, (_, i) => ({ at: T0 + 1 + i, type: "spawn", claim: `c${i + 1}`, base: "explore" }))
    const after7 = routes(run(trace(...base, ...spawns(7), { at: T0 + 100, type: "release", claim: "c4" }, { at: T0 + 101, type: "spawn", claim: "n", base: "explore" })))
    expect(after7.at(-1)).toMatchObject({ slot: 2, pass: "first" })
    const after14 = routes(run(trace(...base, ...spawns(14), { at: T0 + 100, type: "release", claim: "c1" }, { at: T0 + 101, type: "spawn", claim: "n", base: "explore" })))
    expect(after14.at(-1)).toMatchObject({ slot: 1, pass: "second" })
  })

  it("US-5 mixing bases gives the same slot sequence as one base (load counts per model)", () => {
    const bases = ["explore", "implement", "context"]
    const mk = (pick: (i: number) => string) =>
      routes(run(trace(pool(T0, ["zen/a", 3], ["zen/b", 2], ["go/c", 1]), ...Array.from({ length: 9 }, (_, i) => ({ at: T0 + i + 1, type: "spawn", claim: `c${i}`, base: pick(i) }))))).map((r) => r.slot)
    expect(mk((i) => bases[i % 3]!)).toEqual(mk(() => "explore"))
  })

  it("US-5 peer load counts: 3 peer claims on slot 1's model send the spawn to slot 2", () => {
    const r = routes(run(trace(pool(T0, ["zen/a", 3], ["zen/b", 2]), { at: T0 + 1, type: "spawn", claim: "c", base: "explore", peers: { "zen/a": 3 } })))
    expect(r[0]).toMatchObject({ slot: 2, pass: "first" })
  })

  it("US-5 claims whose heartbeat is 11 min old no longer count as load", () => {
    const now = T0 + 11 * 60_000
    const claims = [0, 1, 2].map(() => ({ model: "zen/a", heartbeatAt: T0 }))
    const slots = [{ index: 1, model: "zen/a", provider: "zen", weight: 3 }, { index: 2, model: "zen/b", provider: "zen", weight: 2 }]
    const slotLoads = (at: number) => {
      const byModel = liveLoadByModel(claims, at)
      return slotLoadsOf(slots, (m) => byModel.get(m) ?? 0)
    }
    expect(slotLoads(T0 + 60_000)).toEqual([3, 0])
    const loads = slotLoads(now)
    expect(loads).toEqual([0, 0])
    expect(pickSlot({ weights: [3, 2], loads, cooling: [false, false] })).toEqual({ position: 0, pass: "first" })
  })

  it("US-5 a hand-named variant is refused naming the bare base and claims nothing; other names pass untouched", () => {
    const ds = run(
      trace(
        pool(T0, ["zen/a", 1]),
        { at: T0 + 1, type: "spawn", claim: "x", base: "explore-1" },
        { at: T0 + 2, type: "spawn", claim: "y", base: "implement-12" },
        { at: T0 + 3, type: "spawn", claim: "z", base: "explore-0" },
        { at: T0 + 4, type: "spawn", claim: "w", base: "explore-deep" },
        { at: T0 + 5, type: "spawn", claim: "v", base: "my-agent-3" },
        { at: T0 + 6, type: "status" }
      )
    )
    expect(ds.slice(0, 2)).toEqual([
      { type: "refuse", at: T0 + 1, claim: "x", requested: "explore-1", base: "explore" },
      { type: "refuse", at: T0 + 2, claim: "y", requested: "implement-12", base: "implement" }
    ])
    expect(ds).toHaveLength(3)
    expect(ds[2]).toMatchObject({ type: "status", slots: [{ load: 0 }] })
  })
})
