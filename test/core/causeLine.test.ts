import { describe, expect, it } from "@effect/vitest"
import { Cause, Data, FiberId } from "effect"
import { causeLine } from "../../src/core/causeLine.js"

class Boom extends Data.TaggedError("Boom")<{ readonly message: string }> {}

/** A value whose every property read and conversion throws: rendering it fails. */
const hostile = (): unknown => {
  const { proxy, revoke } = Proxy.revocable({}, {})
  revoke()
  return proxy
}

describe("causeLine", () => {
  it.each([
    ["a failure's message, first line only", Cause.fail(new Error("disk full\n    at write")), "Error: disk full"],
    ["a tagged error", Cause.fail(new Boom({ message: "no slot" })), "Boom: no slot"],
    ["a defect", Cause.die(new Error("bad state\nmore")), "Error: bad state"],
    ["a string failure", Cause.fail("plain words"), "Error: plain words"],
    ["an interruption", Cause.interrupt(FiberId.none), "All fibers interrupted without errors."],
    ["the first of two failures", Cause.sequential(Cause.fail(new Error("first")), Cause.fail(new Error("second"))), "Error: first"],
    ["a failure whose rendering throws", Cause.die(hostile()), "unknown error"]
  ])("US-17 %s", (_, cause, line) => {
    expect(causeLine(cause)).toBe(line)
  })
})
