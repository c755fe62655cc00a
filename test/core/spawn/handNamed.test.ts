/** A hand-named slot variant (SPEC §6.3): which names are refused, and what `tool.execute.before` does with a task call. */
import { describe, expect, it } from "@effect/vitest"
import { handNamedVariant, refusalLine, spawnGate } from "../../../src/core/spawn/handNamed.js"

describe("hand-named variants (SPEC §6.3)", () => {
  it.each([
    ["explore-1", "explore"],
    ["explore-2", "explore"],
    ["implement-12", "implement"],
    ["context-3", "context"]
  ])("US-5 %s is a hand-named variant of %s", (agent, base) => {
    expect(handNamedVariant(agent)).toEqual({ requested: agent, base })
  })

  it.each(["explore", "implement", "context", "explore-0", "explore-01", "explore-deep", "explore-1x", "xexplore-1", "build", "general", "Explore-1", "explore-", ""])(
    "US-5 %j is not a hand-named variant",
    (agent) => {
      expect(handNamedVariant(agent)).toBeUndefined()
    }
  )

  it("US-5 the refusal's log line names the variant and the base to spawn", () => {
    expect(refusalLine({ requested: "context-3", base: "context" })).toBe("refused manual variant context-3; spawn context")
  })

  it.each([
    ["a base with readable ids goes to the engine, nothing to refuse", "explore", "s", "c", { _tag: "engine", session: "s", call: "c", refusal: undefined }],
    ["a variant with readable ids goes to the engine, refused even if the engine fails", "explore-2", "s", "c", { _tag: "engine", session: "s", call: "c", refusal: { requested: "explore-2", base: "explore" } }],
    ["a base without a session id passes unchanged", "explore", undefined, "c", { _tag: "pass" }],
    ["a base without a call id passes unchanged", "implement", "s", undefined, { _tag: "pass" }],
    ["another agent without ids passes unchanged", "build", undefined, undefined, { _tag: "pass" }],
    [
      "a variant without a session id is refused here, with its log line",
      "context-3",
      undefined,
      "c",
      { _tag: "refuse", refusal: { requested: "context-3", base: "context" }, log: "refused manual variant context-3; spawn context" }
    ],
    [
      "a variant without a call id is refused here, with its log line",
      "implement-12",
      "s",
      undefined,
      { _tag: "refuse", refusal: { requested: "implement-12", base: "implement" }, log: "refused manual variant implement-12; spawn implement" }
    ]
  ])("US-5 spawnGate: %s", (_name, agent, session, call, gate) => {
    expect(spawnGate(agent as string, session as string | undefined, call as string | undefined)).toEqual(gate)
  })
})
