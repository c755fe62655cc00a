/** The trace machine's persistent activity table against a plain Map model, branches included. */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { activityEntries, emptyActivity, filterActivity, getActivity, setActivity, type ActivityTable } from "../../src/core/trace/activity.js"

type Op = { readonly op: "set"; readonly from: number; readonly key: number; readonly at: number } | { readonly op: "filter"; readonly from: number; readonly below: number }

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ op: fc.constant("set" as const), from: fc.nat(), key: fc.nat(30), at: fc.nat(1000) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("filter" as const), from: fc.nat(), below: fc.nat(1000) }) }
)

describe("the activity table (a persistent map)", () => {
  it.prop("US-8 every version reads what a plain map built the same way reads, whichever older version later writes branch from", [fc.array(opArb, { maxLength: 400 }), fc.boolean()], ([ops, linear]) => {
    const tables: Array<ActivityTable> = [emptyActivity]
    const models: Array<Map<string, number>> = [new Map()]
    for (const o of ops) {
      // mostly the newest version (the replay's use), sometimes an older one (a branch)
      const i = linear || o.from % 4 !== 0 ? tables.length - 1 : o.from % tables.length
      if (o.op === "set") {
        tables.push(setActivity(tables[i]!, `s${o.key}`, o.at))
        models.push(new Map(models[i]!).set(`s${o.key}`, o.at))
      } else {
        tables.push(filterActivity(tables[i]!, (at) => at >= o.below))
        models.push(new Map([...models[i]!].filter(([, at]) => at >= o.below)))
      }
    }
    tables.forEach((t, i) => {
      const model = models[i]!
      expect(t.size).toBe(model.size)
      expect(new Map(activityEntries(t))).toEqual(model)
      for (let k = 0; k <= 30; k++) expect(getActivity(t, `s${k}`)).toBe(model.get(`s${k}`))
    })
  })

  it("US-8 a long run of writes to a few keys keeps the store compact", () => {
    let t = emptyActivity
    for (let i = 0; i < 100_000; i++) t = setActivity(t, `s${i % 10}`, i)
    expect(t.size).toBe(10)
    expect(t.store.held).toBeLessThanOrEqual(4 * 10 + 1024 + 1)
    expect(getActivity(t, "s3")).toBe(99_993)
  })
})
