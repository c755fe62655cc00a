/** The live view's keys and its "last decisions" lines (issue 24): pure. */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { applyKey, INITIAL_UI, keyActions } from "../../../src/core/view/keys.js"
import { decisionSummary, recentDecisions } from "../../../src/core/view/recentDecisions.js"

describe("US-6 live view keys", () => {
  it("US-6 q, Ctrl-C and Ctrl-D quit; j/k and arrows scroll; ? toggles help; unknown escape sequences are skipped whole", () => {
    expect(keyActions("q")).toEqual(["quit"])
    expect(keyActions("\x03")).toEqual(["quit"])
    expect(keyActions("jk\x1b[B\x1b[A\x1bOB")).toEqual(["down", "up", "down", "up", "down"])
    expect(keyActions("?")).toEqual(["help"])
    // F5 and a mouse report: nothing, and the j after them still counts
    expect(keyActions("\x1b[15~\x1b[<0;3;4Mj")).toEqual(["down"])
    expect(keyActions("x")).toEqual([])
  })

  it("US-6 scrolling stays within [0, maxScroll]; any key but ? closes the help without scrolling", () => {
    let ui = INITIAL_UI
    ui = applyKey(ui, "up", 5, 10)
    expect(ui.scroll).toBe(0)
    ui = applyKey(applyKey(ui, "pageDown", 5, 10), "down", 5, 10)
    expect(ui.scroll).toBe(5)
    ui = applyKey(ui, "help", 5, 10)
    expect(ui.help).toBe(true)
    ui = applyKey(ui, "up", 5, 10)
    expect(ui).toEqual({ scroll: 5, help: false })
    expect(applyKey(ui, "top", 5, 10).scroll).toBe(0)
  })

  it.prop("US-6 whatever the keys, the scroll is never out of range", [fc.string(), fc.nat(50), fc.integer({ min: 1, max: 60 })], ([input, maxScroll, page]) => {
    let ui = INITIAL_UI
    for (const a of keyActions(input)) if (a !== "quit") ui = applyKey(ui, a, maxScroll, page)
    expect(ui.scroll).toBeGreaterThanOrEqual(0)
    expect(ui.scroll).toBeLessThanOrEqual(maxScroll)
  })
})

describe("US-6 the last decisions of a recorded trace", () => {
  it("US-6 each recorded decision type is one short line with its time", () => {
    const at = Date.UTC(2026, 0, 1, 12, 0, 3)
    expect(decisionSummary(JSON.stringify({ at, type: "route", claim: "ses_1:call_7", base: "explore", slot: 1, model: "a/x", agent: "explore-1", pass: "first" }))).toBe(
      "12:00:03 route call_7 explore -> explore-1 (a/x) first pass"
    )
    expect(decisionSummary(JSON.stringify({ at, type: "cool", models: ["a/x"], scope: "model", reason: "rate_limit", until: at + 60_000, strike: 2 }))).toBe("12:00:03 cool a/x rate_limit strike 2 until 12:01:03Z")
    expect(decisionSummary(JSON.stringify({ at, type: "release", claim: "ses_1:call_7", cooled: true, reason: "hung" }))).toBe("12:00:03 release call_7 hung (cooled)")
    expect(decisionSummary("not json")).toBe("(not a decision: not json)")
    // a time no Date can hold is shown as unknown, not thrown
    expect(decisionSummary(JSON.stringify({ at: 1e300, type: "ignore", reason: "x" }))).toBe("--:--:-- ignore x")
  })

  it("US-6 the tail keeps the newest n, drops a cut first line, and nothing from the file reaches the terminal raw", () => {
    const line = (i: number) => JSON.stringify({ at: 0, type: "ignore", reason: `r${i}` })
    const tail = `cut-off-line"}\n${[1, 2, 3, 4].map(line).join("\n")}\n`
    expect(recentDecisions(tail, 2, false)).toEqual(["00:00:00 ignore r3", "00:00:00 ignore r4"])
    expect(recentDecisions(`${line(1)}\n`, 8, true)).toEqual(["00:00:00 ignore r1"])
    const hostile = JSON.stringify({ at: 0, type: "ignore", reason: "\x1b]0;pwned\x07" })
    expect(recentDecisions(hostile, 1, true)[0]).not.toMatch(/[\x00-\x1f]/)
  })
})
