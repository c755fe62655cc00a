/** The holder judgement (SPEC §5.2, §5.3): lease everywhere, pid and start token on this host; the claim-file and lock verdicts are this judgement with their leases. */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { isLockStale, judgeClaimFile } from "../../../src/core/claims.js"
import { DEAD_FILE_MS, LOCK_STALE_MS } from "../../../src/core/constants.js"
import { holderGone, type Holder, type HolderFacts } from "../../../src/core/state/holder.js"

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

  const facts = fc.record({
    host: fc.constantFrom("h", "elsewhere", null),
    pid: fc.integer({ min: 1, max: 9 }),
    startToken: fc.constantFrom("100", "200", null),
    pidState: fc.constantFrom("alive" as const, "dead" as const, undefined),
    liveStartToken: fc.constantFrom("100", "200", null, undefined),
    age: fc.integer({ min: 0, max: DEAD_FILE_MS * 2 })
  })

  it("US-41 a readable claim file is dropped exactly when its holder is gone, its lease being the file's mtime + DEAD_FILE_MS", () =>
    fc.assert(
      fc.property(facts, (f) => {
        const mtimeMs = NOW - f.age
        const verdict = judgeClaimFile(
          { name: `claims.${f.pid}.json`, isTmp: false, mtimeMs, content: { pid: f.pid, host: f.host ?? "x", startTime: f.startToken }, pidState: f.pidState, liveStartTime: f.liveStartToken },
          "h",
          NOW
        )
        const gone = holderGone({ host: f.host ?? "x", pid: f.pid, startToken: f.startToken }, mtimeMs + DEAD_FILE_MS, { pidState: f.pidState, liveStartToken: f.liveStartToken }, "h", NOW)
        expect(verdict === "delete").toBe(gone)
      })
    ))

  it("US-41 a readable pool lock is stale exactly when its holder is gone, its lease being its `at` + LOCK_STALE_MS", () =>
    fc.assert(
      fc.property(facts, (f) => {
        const at = NOW - Math.floor(f.age / 100)
        const stale = isLockStale({ content: { pid: f.pid, host: f.host, startTime: f.startToken, at }, mtimeMs: at, pidState: f.pidState, liveStartTime: f.liveStartToken }, "h", NOW)
        expect(stale).toBe(holderGone({ host: f.host, pid: f.pid, startToken: f.startToken }, at + LOCK_STALE_MS, { pidState: f.pidState, liveStartToken: f.liveStartToken }, "h", NOW))
      })
    ))
})
