import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { agentRuleset, evaluate, matches, opencodeRuleset, rulesOf } from "../../../src/core/context/rules.js"

describe("opencode's permission rules (SPEC §13: last-match-wins, on paths relative to the project root)", () => {
  it("US-21 wildcards: `*` spans any characters including `/`, `?` one character, the rest is literal", () => {
    expect(matches(".opencode/context/architecture.md", ".opencode/context/**")).toBe(true)
    expect(matches("home/u/.opencode/context/architecture.md", "*/.opencode/context/**")).toBe(true)
    expect(matches("home/u/.opencode/context/architecture.md", ".opencode/context/**")).toBe(false)
    expect(matches(".opencode/context/architecture.md", "*/.opencode/context/**")).toBe(false)
    expect(matches("src/a.ts", "*")).toBe(true)
    expect(matches("a.ts", "?.ts")).toBe(true)
    expect(matches("ab.ts", "?.ts")).toBe(false)
    // `.` and regex characters are literal
    expect(matches("axopencode/context/x", ".opencode/context/*")).toBe(false)
    expect(matches("a+b(c)", "a+b(c)")).toBe(true)
    // backslashes count as `/`; a trailing ` *` also matches without its tail (opencode's `git *` matches `git`)
    expect(matches(".opencode\\context\\x.md", ".opencode/context/*")).toBe(true)
    expect(matches("git", "git *")).toBe(true)
  })

  it("US-21 the last matching rule wins; no match is ask; a string value is one rule with the pattern *", () => {
    const rules = rulesOf({ edit: { "*": "allow", "secret/**": "deny", "secret/ok.md": "allow" }, bash: "deny" })
    expect(rules).toEqual([
      { permission: "edit", pattern: "*", action: "allow" },
      { permission: "edit", pattern: "secret/**", action: "deny" },
      { permission: "edit", pattern: "secret/ok.md", action: "allow" },
      { permission: "bash", pattern: "*", action: "deny" }
    ])
    expect(evaluate(rules, "edit", "src/a.ts")).toBe("allow")
    expect(evaluate(rules, "edit", "secret/key.pem")).toBe("deny")
    expect(evaluate(rules, "edit", "secret/ok.md")).toBe("allow")
    expect(evaluate(rules, "bash", "ls")).toBe("deny")
    expect(evaluate(rules, "read", "src/a.ts")).toBe("ask")
    expect(evaluate([], "edit", "x")).toBe("ask")
    // values that are not actions are no rules; a block that is not an object gives none (a bare action is "*" for all)
    expect(rulesOf({ edit: 3, read: { "*": "maybe" } })).toEqual([])
    expect(rulesOf(null)).toEqual([])
    expect(rulesOf("deny")).toEqual([{ permission: "*", pattern: "*", action: "deny" }])
  })

  it("US-21 an agent's rules come after the global ones, so the agent's win where both match", () => {
    const rules = agentRuleset({ edit: "ask" }, { edit: { ".opencode/context/**": "allow" } })
    expect(evaluate(rules, "edit", ".opencode/context/a.md")).toBe("allow")
    expect(evaluate(rules, "edit", "src/a.ts")).toBe("ask")
    expect(evaluate(agentRuleset({ edit: "deny" }, undefined), "edit", "x")).toBe("deny")
  })

  it("US-21 opencode's defaults allow everything, its native plan and explore deny edits, and the global and agent rules come last", () => {
    expect(evaluate(opencodeRuleset("my-agent", {}, {}), "edit", "src/a.ts")).toBe("allow")
    expect(evaluate(opencodeRuleset("plan", {}, {}), "edit", "src/a.ts")).toBe("deny")
    expect(evaluate(opencodeRuleset("plan", {}, {}), "edit", ".opencode/plans/p.md")).toBe("allow")
    expect(evaluate(opencodeRuleset("explore", {}, {}), "edit", "src/a.ts")).toBe("deny")
    expect(evaluate(opencodeRuleset("build", { edit: "ask" }, {}), "edit", "src/a.ts")).toBe("ask")
    expect(evaluate(opencodeRuleset("build", {}, {}), "read", ".env")).toBe("ask")
  })

  it.prop("US-21 evaluate is the action of the last rule that matches, or ask", [fc.array(fc.record({ pattern: fc.constantFrom("*", "src/*", "?rc/a.ts", "src/a.ts", "*.md"), action: fc.constantFrom("allow" as const, "deny" as const, "ask" as const) }), { maxLength: 8 }), fc.constantFrom("src/a.ts", "README.md", "x")], ([rs, path]) => {
    const rules = rs.map((r) => ({ permission: "edit", ...r }))
    const last = rules.filter((r) => matches(path, r.pattern)).at(-1)
    expect(evaluate(rules, "edit", path)).toBe(last?.action ?? "ask")
    expect(evaluate(rules, "read", path)).toBe("ask")
  })
})
