import { describe, expect, it } from "@effect/vitest"
import { DELEGATION_DEFINITIONS, injectConfig, READ_FAMILY } from "../../src/core/inject.js"
import { parseSettings } from "../../src/core/options.js"
import { parsePoolText, type Slot } from "../../src/core/pool/pool.js"
import { evaluate, rulesOf } from "../support/permission.js"

const slots = (text: string): ReadonlyArray<Slot> => {
  const r = parsePoolText(text, 4)
  if (r._tag !== "Usable") throw new Error(r.reason)
  return r.slots
}
const POOL = slots("zen/alpha 2\ngo/gamma 1\n")
type Agents = Record<string, Record<string, unknown> | null>
const agentsOf = (input: Record<string, unknown>, delegate = true, contextMap = true) => injectConfig(input, POOL, "x", { delegate, contextMap }).config.agent as Agents

describe("delegation policy (US-1, SPEC §13)", () => {
  it("US-1 the injected build agent, evaluated last-match-wins, denies read, glob, grep, list, webfetch and websearch", () => {
    const rules = rulesOf(agentsOf({})["build"]!.permission)
    for (const tool of ["read", "glob", "grep", "list", "webfetch", "websearch"]) expect(evaluate(rules, tool, "src/index.ts"), tool).toBe("deny")
    expect([...READ_FAMILY]).toEqual(["read", "glob", "grep", "list", "webfetch", "websearch"])
    // what build still does itself is not touched by the policy (edit: everything but the context map, SPEC §13)
    for (const tool of ["bash", "todowrite"]) expect(evaluate(rules, tool, "x"), tool).toBe("ask")
    expect(evaluate(rules, "edit", "src/index.ts")).toBe("allow")
    // without the context map, build's edits are left to opencode's rules
    const plain = rulesOf(agentsOf({}, true, false)["build"]!.permission)
    for (const tool of ["read", "glob", "grep", "list", "webfetch", "websearch"]) expect(evaluate(plain, tool, "src/index.ts"), tool).toBe("deny")
    for (const tool of ["edit", "bash", "todowrite"]) expect(evaluate(plain, tool, "x"), tool).toBe("ask")
  })

  it("US-1 the injected build's task allows only explore, implement and context (with the slot variants the pool rewrites them to)", () => {
    const rules = rulesOf(agentsOf({})["build"]!.permission)
    for (const agent of ["explore", "implement", "context", "explore-1", "implement-4", "context-8"]) expect(evaluate(rules, "task", agent), agent).toBe("allow")
    for (const agent of ["general", "build", "plan", "explore-deep", "explore-9", "explore-0", "my-agent", "implementer"]) expect(evaluate(rules, "task", agent), agent).toBe("deny")
  })

  it("US-1 the injected build prompt tells the agent to spawn the bare base names, never <base>-<n>", () => {
    const prompt = String(agentsOf({})["build"]!.prompt)
    expect(prompt).toContain('Always spawn the bare names "explore", "implement" and "context"')
    expect(prompt).toContain('never a numbered variant such as "explore-1"')
    expect(prompt).toMatch(/aborted by the pool/)
  })

  it("US-1 the injected plan keeps its reading and may spawn only the read-only bases", () => {
    const plan = agentsOf({})["plan"]!
    const rules = rulesOf(plan.permission)
    expect(evaluate(rules, "read", "a.ts")).toBe("ask")
    for (const agent of ["explore", "context", "explore-2", "context-1"]) expect(evaluate(rules, "task", agent), agent).toBe("allow")
    for (const agent of ["implement", "implement-1", "general"]) expect(evaluate(rules, "task", agent), agent).toBe("deny")
    expect(String(plan.prompt)).toContain("never a numbered variant")
  })

  it("US-1 a user's build or plan, even null, is left byte-identical; the other one is still injected", () => {
    const user = { build: { model: "anthropic/claude", prompt: "mine", permission: { read: "allow" } } }
    const agents = agentsOf({ agent: structuredClone(user) }, true, false)
    expect(agents["build"]).toEqual(user.build)
    expect(agents["plan"]).toEqual(DELEGATION_DEFINITIONS.plan)
    const withNull = agentsOf({ agent: { plan: null } }, true, false)
    expect(withNull["plan"]).toBeNull()
    expect(withNull["build"]).toEqual(DELEGATION_DEFINITIONS.build)
    // with the context map on, the user's build is still byte-identical
    expect(agentsOf({ agent: structuredClone(user) })["build"]).toEqual(user.build)
  })

  it("US-1 delegate:false injects neither build nor plan; the pooled bases and variants are still there", () => {
    const agents = agentsOf({}, false, false)
    expect(agents["build"]).toBeUndefined()
    expect(agents["plan"]).toBeUndefined()
    expect(Object.keys(agents).sort()).toEqual(["context", "context-1", "context-2", "explore", "explore-1", "explore-2", "implement", "implement-1", "implement-2"])
    // with the context map on, build gets only its edit rules (no prompt, no read or task rules) and plan nothing
    const mapped = agentsOf({}, false)
    expect(Object.keys(mapped["build"]!)).toEqual(["permission"])
    expect(Object.keys(mapped["build"]!.permission as object)).toEqual(["edit"])
    expect(mapped["plan"]).toBeUndefined()
  })

  it("US-1 injecting twice gives the same config, and the definitions are copies (editing one never changes the shipped one)", () => {
    const once = injectConfig({}, POOL, "x").config
    expect(injectConfig(once, POOL, "x").config).toEqual(once)
    ;((once.agent as Agents)["build"]!.permission as Record<string, unknown>).read = "allow"
    expect((DELEGATION_DEFINITIONS.build.permission as Record<string, unknown>).read).toBe("deny")
  })

  it("US-1 the option delegate: true by default, false opts out, anything else warns and keeps the default", () => {
    expect(parseSettings({}, {}).settings.delegate).toBe(true)
    expect(parseSettings({ delegate: false }, {}).settings.delegate).toBe(false)
    const bad = parseSettings({ delegate: "no" }, {})
    expect(bad.settings.delegate).toBe(true)
    expect(bad.warnings).toEqual(["option delegate must be a boolean; using true"])
  })
})
