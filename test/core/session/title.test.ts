/** The one title rule: the agent opencode's `(@<agent> subagent)` mark names (SPEC §8.2 binding, §10.1 context agent). */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { childAgent, isContextAgent, isContextSession, titleAgent, titleAgents } from "../../../src/core/session/title.js"

describe("a title's agent mark", () => {
  it.each([
    ["probe subagent (@explore-2 subagent)", "explore-2"],
    ["x (@explore-2 subagent)  \n", "explore-2"],
    ["x (@general subagent)", "general"],
    ["x (@my_agent.v2 subagent)", "my_agent.v2"],
    ["(@a(@explore-2 subagent)", "explore-2"],
    ["x (@explore-2 subagent) and more", undefined],
    ["x (@explore 2 subagent)", undefined],
    ["x (@ subagent)", undefined],
    ["x (explore-2 subagent)", undefined],
    ["x (@explore-2 Subagent)", undefined],
    ["", undefined]
  ])("US-5 %j ends with a mark naming %j", (title, agent) => {
    expect(titleAgent(title)).toBe(agent)
  })

  it("US-5 every mark of a title, in order; none without a title", () => {
    expect(titleAgents("(@context subagent) then (@explore-1 subagent)")).toEqual(["context", "explore-1"])
    expect(titleAgents(undefined)).toEqual([])
    expect(titleAgent(undefined)).toBeUndefined()
  })

  it.each([
    ["explore-2", "t (@implement-1 subagent)", "explore-2"],
    [undefined, "t (@implement-1 subagent)", "implement-1"],
    [undefined, "t (@general subagent)", undefined],
    [undefined, "t (@Explore-1 subagent)", undefined],
    [undefined, "t (@explore-1x subagent)", undefined],
    [undefined, undefined, undefined],
    ["general", undefined, "general"]
  ])("US-5 a child with agent %j and title %j was created for %j", (agent, title, expected) => {
    expect(childAgent(agent, title)).toBe(expected)
  })

  it.each([
    [undefined, "Map refresh (@context subagent)", true],
    [undefined, "Map refresh (@context-3 subagent)", true],
    [undefined, "(@context subagent) renamed later", true],
    ["context", undefined, true],
    ["context-12", "T", true],
    ["contextual", "T", false],
    ["context-", undefined, false],
    [undefined, "Map refresh (@context-x subagent)", false],
    [undefined, "about the context subagent", false],
    ["build", "w (@explore-1 subagent)", false]
  ])("US-11 agent %j with title %j is the context agent's: %j", (agent, title, expected) => {
    expect(isContextSession(agent, title)).toBe(expected)
  })

  it("US-11 the context agent's names", () => {
    expect(["context", "context-1", "context-42"].every(isContextAgent)).toBe(true)
    expect(["Context", "context-", "context-1a", "xcontext", ""].some(isContextAgent)).toBe(false)
  })

  it.prop(
    "US-5 a title built as opencode builds it names its agent, whatever the description",
    [fc.string({ maxLength: 40 }), fc.stringMatching(/^[a-z]{1,8}-[1-9][0-9]{0,2}$/)],
    ([description, agent]) => {
      expect(titleAgent(`${description} (@${agent} subagent)`)).toBe(agent)
      expect(childAgent(undefined, `${description} (@${agent} subagent)`)).toBe(agent)
    }
  )
})
