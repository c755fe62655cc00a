/** The holder judgement (SPEC §5.2, §5.3): lease everywhere, pid and start token on this host (every backend's holders: claims rows, permits). */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { holderGone, permitGone, type Holder, type HolderFacts, type PermitFacts, type PermitHolderLike } from "../../../src/core/state/holder.js"

const NOW = 1_000_000_000
const here: Holder = { host: "h", pid: 7, startToken: "100" }
const there: Holder = { host: "elsewhere", pid: 7, startToken: "100" }

describe("holderGone", () => {
  const rows: ReadonlyArray<readonly [string, Holder, number, HolderFacts, boolean]> = [
    ["a live local holder within its lease", here, NOW + 1, { pidState: "alive", liveStartToken: "100" }, false],
    ["a local holder whose lease ran out", here, NOW - 1, { pidState: "alive", liveStartToken: "100" }, true],
    ["a local holder whose pid is dead", here, NOW + 1, { pidState: "dead" }, true],
    ["a local holder whose pid was reused (another start token)", here, NOW + 1, { pidState: "alive", liveStartToken: "200" }, true],
    ["a local holder without a start token of its own", { ...here, startToken: null }, NOW + 1, { pidState: "alive", liveStartToken: "200" }, false],
    ["a local holder whose live token could not be read", here, NOW + 1, { pidState: "alive", liveStartToken: null }, false],
    ["a local holder with no facts gathered", here, NOW + 1, {}, false],
    ["a holder on another host within its lease, whatever this host's pid says", there, NOW + 1, { pidState: "dead" }, false],
    ["a holder on another host past its lease", there, NOW - 1, {}, true],
    ["a lease ending exactly now still holds", here, NOW, { pidState: "alive" }, false]
  ]
  for (const [name, holder, lease, facts, gone] of rows) {
    it(`US-41 ${name}: ${gone ? "gone" : "holds"}`, () => expect(holderGone(holder, lease, facts, "h", NOW)).toBe(gone))
  }
})

describe("permitGone", () => {
  const group = { pgid: 40, startToken: "90" }
  const run: PermitHolderLike = { ...here, group }
  const runThere: PermitHolderLike = { ...there, group }
  const never = Number.POSITIVE_INFINITY
  const rows: ReadonlyArray<readonly [string, PermitHolderLike, number, PermitFacts, boolean]> = [
    ["a live local holder without a group", here, never, { pidState: "alive", liveStartToken: "100" }, false],
    ["a dead local holder without a group", here, never, { pidState: "dead" }, true],
    ["a local holder without a group whose pid was reused", here, never, { pidState: "alive", liveStartToken: "200" }, true],
    ["a runner that died while its group lives", run, never, { pidState: "dead", groupAlive: true }, false],
    ["a runner that died and whose group has no live member", run, never, { pidState: "dead", groupAlive: false }, true],
    ["a runner whose pid was reused while its group lives", run, never, { pidState: "alive", liveStartToken: "200", groupAlive: true }, false],
    ["a runner whose pid was reused and whose group is gone", run, never, { pidState: "alive", liveStartToken: "200", groupAlive: false }, true],
    ["a live runner whose group is gone (the runner still releases it)", run, never, { pidState: "alive", liveStartToken: "100", groupAlive: false }, false],
    ["a dead runner whose group was not looked at", run, never, { pidState: "dead" }, false],
    ["a runner past its lease, its group alive", run, NOW - 1, { pidState: "alive", groupAlive: true }, true],
    ["a runner on another host within its lease", runThere, NOW + 1, {}, false],
    ["a runner on another host past its lease", runThere, NOW - 1, {}, true],
    ["a holder on another host within its lease, whatever this host's pid says", there, NOW + 1, { pidState: "dead" }, false]
  ]
  for (const [name, holder, lease, facts, gone] of rows) {
    it(`US-51 ${name}: ${gone ? "gone" : "holds"}`, () => expect(permitGone(holder, lease, facts, "h", NOW)).toBe(gone))
  }

  it("US-51 an entry without a group is judged exactly as holderGone judges its holder; with one it is gone only when holderGone says so too", () =>
    fc.assert(
      fc.property(
        fc.record({
          host: fc.constantFrom("h", "elsewhere"),
          startToken: fc.constantFrom("100", null),
          pidState: fc.constantFrom("alive" as const, "dead" as const, undefined),
          liveStartToken: fc.constantFrom("100", "200", null, undefined),
          groupAlive: fc.constantFrom(true, false, undefined),
          grouped: fc.boolean(),
          lease: fc.integer({ min: NOW - 10, max: NOW + 10 })
        }),
        (f) => {
          const holder: Holder = { host: f.host, pid: 7, startToken: f.startToken }
          const facts = { pidState: f.pidState, liveStartToken: f.liveStartToken, groupAlive: f.groupAlive }
          const base = holderGone(holder, f.lease, facts, "h", NOW)
          const gone = permitGone(f.grouped ? { ...holder, group } : holder, f.lease, facts, "h", NOW)
          if (!f.grouped) expect(gone).toBe(base)
          else expect(gone).toBe(base && (NOW > f.lease || f.groupAlive === false))
        }
      )
    ))
})
