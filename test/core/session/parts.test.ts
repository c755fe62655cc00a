/** What a message part says about its session (`message.part.updated`): nothing, activity, or output (which ends a spin count). */
import { describe, expect, it } from "@effect/vitest"
import { partSignal } from "../../../src/core/session/parts.js"

describe("message parts", () => {
  it.each([
    ["text", "output"],
    ["reasoning", "output"],
    ["tool", "output"],
    ["retry", "none"],
    ["step-start", "activity"],
    ["step-finish", "activity"],
    ["file", "activity"],
    ["patch", "activity"],
    ["snapshot", "activity"],
    ["agent", "activity"],
    ["compaction", "activity"],
    ["Text", "activity"],
    ["", "activity"],
    [undefined, "activity"],
    [null, "activity"],
    [7, "activity"],
    [["text"], "activity"],
    [{ type: "text" }, "activity"]
  ])("US-47 a part of type %j is %s", (type, signal) => {
    expect(partSignal(type)).toBe(signal)
  })
})
