import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { CONTEXT_EDIT_RULES, MAP_FIRST, MAP_PATTERNS } from "../../../src/core/context/agents.js"
import { MAP_COMMANDS } from "../../../src/core/context/commands.js"
import { MANAGER_FILE, MAP_DIR, MAP_FILES, MAP_MAX_BYTES_DEFAULT } from "../../../src/core/context/map.js"
import { agentRuleset, evaluate, opencodeRuleset } from "../../../src/core/context/rules.js"
import { bootInjection } from "../../../src/core/boot/config.js"
import { bootOptions } from "../../../src/core/boot/options.js"
import { BASE_DEFINITIONS, DELEGATION_DEFINITIONS, injectConfig } from "../../../src/core/inject.js"
import { parseSettings } from "../../../src/core/options.js"
import { parsePoolText, type Slot } from "../../../src/core/pool/pool.js"

const slots = (text: string): ReadonlyArray<Slot> => {
  const r = parsePoolText(text, 8)
  if (r._tag !== "Usable") throw new Error(r.reason)
  return r.slots
}
const POOL = slots("zen/alpha 2\ngo/gamma 1\nzen/beta 1\n")
type Json = Record<string, unknown>
type Agents = Record<string, Json>

const inject = (input: Json, contextMap = true, delegate = true) => injectConfig(structuredClone(input), POOL, "x", { contextMap, delegate }).config
const agentsOf = (input: Json, contextMap = true, delegate = true) => inject(input, contextMap, delegate).agent as Agents

const MAP_SPELLINGS = [`${MAP_DIR}/architecture.md`, `home/u/${MAP_DIR}/architecture.md`]
const MANAGER_SPELLINGS = [`${MAP_DIR}/${MANAGER_FILE}`, `home/u/${MAP_DIR}/${MANAGER_FILE}`]
const PROMPTED = ["build", "plan", "explore", "implement"] as const

describe("the context map in config injection (US-19, US-21, US-22, SPEC §13)", () => {
  it("US-19 an empty config: context is a subagent with no model, context-1..n exist, hidden, with the same permissions", () => {
    const agents = agentsOf({})
    expect(agents.context).toMatchObject({ mode: "subagent" })
    expect(agents.context!.model).toBeUndefined()
    expect(agents.context!.tools).toBeUndefined()
    expect(agents.context!.permission).toEqual({ edit: CONTEXT_EDIT_RULES })
    for (const slot of POOL) {
      const variant = agents[`context-${slot.index}`]!
      expect(variant).toMatchObject({ hidden: true, mode: "subagent", model: slot.model })
      expect(variant.permission).toEqual(agents.context!.permission)
      expect(variant.prompt).toBe(agents.context!.prompt)
    }
  })

  it("US-19 the context prompt names the five map files, asks for a short Start here list per subsystem, forbids file inventories", () => {
    const prompt = String(agentsOf({}).context!.prompt)
    for (const file of MAP_FILES) expect(prompt, file).toContain(`${MAP_DIR}/${file}`)
    expect(prompt).toMatch(/short "Start here" list/)
    expect(prompt).toMatch(/per subsystem|each subsystem/)
    expect(prompt).toMatch(/No file inventories/)
    expect(prompt).toMatch(/decision.*why/)
    expect(prompt).toContain(`ls ${MAP_DIR}/`)
    expect(prompt).toContain(MANAGER_FILE)
    expect(prompt).toMatch(/never write/)
    expect(prompt).toMatch(/condense/)
    expect(prompt).toContain("spawn the same base again")
  })

  it("US-19 the prompts of build, plan, explore and implement say to check .opencode/context/ with ls before exploring", () => {
    const agents = agentsOf({})
    for (const name of PROMPTED) {
      const prompt = String(agents[name]!.prompt)
      expect(prompt, name).toContain(`run \`ls ${MAP_DIR}/\``)
      expect(prompt, name).toMatch(/Before (exploring|spawning)/)
      expect(prompt, name).toContain(MANAGER_FILE)
    }
    // the variants carry their base's prompt
    expect(agents["explore-1"]!.prompt).toBe(agents.explore!.prompt)
    expect(String(agents["implement-2"]!.prompt)).toContain(MAP_FIRST)
  })

  it("US-21 only context and its variants resolve edit to allow for a map file, in both spellings, among all injected agents", () => {
    const agents = agentsOf({})
    const names = Object.keys(agents)
    expect(names).toEqual(expect.arrayContaining(["build", "plan", "explore", "implement", "context", "general", "context-1", "implement-3", "explore-2"]))
    for (const path of MAP_SPELLINGS) {
      // the agents' own rules after the (empty) global ones
      const allowed = names.filter((n) => evaluate(agentRuleset({}, agents[n]!.permission), "edit", path) === "allow")
      expect(allowed.sort(), path).toEqual(["context", "context-1", "context-2", "context-3"])
      // and as opencode 1.18.33 assembles them: its defaults (everything allowed) and its native agents' rules first
      const resolved = names.filter((n) => evaluate(opencodeRuleset(n, {}, agents[n]!.permission), "edit", path) === "allow")
      expect(resolved.sort(), path).toEqual(["context", "context-1", "context-2", "context-3"])
    }
    // context writes nothing else
    expect(evaluate(agentRuleset({}, agents.context!.permission), "edit", "src/a.ts")).toBe("deny")
  })

  it("US-21 build, implement and implement-<n> end their edit rules with both map denies after \"*\": \"allow\"", () => {
    const agents = agentsOf({})
    for (const name of ["build", "implement", "implement-1", "implement-3", "general"]) {
      const edit = (agents[name]!.permission as Json).edit
      expect(Object.entries(edit as Json), name).toEqual([["*", "allow"], [MAP_PATTERNS[0], "deny"], [MAP_PATTERNS[1], "deny"]])
      expect(evaluate(agentRuleset({}, agents[name]!.permission), "edit", "src/a.ts"), name).toBe("allow")
    }
    // with delegate:false, opencode's own build still gets the rules, and nothing else
    expect(agentsOf({}, true, false).build).toEqual({ permission: { edit: { "*": "allow", [MAP_PATTERNS[0]]: "deny", [MAP_PATTERNS[1]]: "deny" } } })
  })

  it("US-21 the writers' rules start from the user's global edit rules, so a global ask or deny is never widened", () => {
    const ask = agentsOf({ permission: { edit: "ask" } })
    expect(Object.entries((ask.build!.permission as Json).edit as Json)).toEqual([["*", "ask"], [MAP_PATTERNS[0], "deny"], [MAP_PATTERNS[1], "deny"]])
    const scoped = agentsOf({ permission: { edit: { "*": "ask", "docs/**": "allow" } } })
    expect(Object.entries((scoped.implement!.permission as Json).edit as Json)).toEqual([
      ["*", "ask"],
      ["docs/**", "allow"],
      [MAP_PATTERNS[0], "deny"],
      [MAP_PATTERNS[1], "deny"]
    ])
    const all = agentsOf({ permission: { "*": "deny" } })
    const rules = agentRuleset({ "*": "deny" }, all.general!.permission)
    expect(evaluate(rules, "edit", "src/a.ts")).toBe("deny")
    for (const path of MAP_SPELLINGS) expect(evaluate(rules, "edit", path)).toBe("deny")
  })

  it("US-21 every injected agent may read the map: no injected read rule denies it", () => {
    const agents = agentsOf({})
    for (const [name, agent] of Object.entries(agents)) {
      for (const path of [...MAP_SPELLINGS, ...MANAGER_SPELLINGS]) {
        expect(evaluate(agentRuleset({}, agent.permission), "read", path), `${name} ${path}`).not.toBe("deny")
        expect(evaluate(opencodeRuleset(name, {}, agent.permission), "read", path), `${name} ${path}`).toBe("allow")
      }
    }
    // the delegating build still reads nothing but the map
    expect(evaluate(agentRuleset({}, agents.build!.permission), "read", "src/a.ts")).toBe("deny")
  })

  it("US-21 context's edit of manager.md is denied, in both spellings", () => {
    const agents = agentsOf({})
    for (const name of ["context", "context-1"]) {
      for (const path of MANAGER_SPELLINGS) {
        expect(evaluate(agentRuleset({}, agents[name]!.permission), "edit", path), `${name} ${path}`).toBe("deny")
        expect(evaluate(opencodeRuleset(name, { edit: "allow" }, agents[name]!.permission), "edit", path), `${name} ${path}`).toBe("deny")
      }
    }
    expect(Object.entries(CONTEXT_EDIT_RULES)).toEqual([
      ["*", "deny"],
      [".opencode/context/**", "allow"],
      ["*/.opencode/context/**", "allow"],
      [".opencode/context/manager.md", "deny"],
      ["*/.opencode/context/manager.md", "deny"]
    ])
  })

  it("US-21 a user's agents stay byte-identical: their own build, implement, general and context get no map rules", () => {
    const user = {
      build: { prompt: "mine", permission: { edit: "allow" } },
      implement: { mode: "subagent", prompt: "my implement" },
      general: null,
      context: { mode: "subagent", prompt: "my context", permission: { edit: "deny" } }
    }
    const agents = agentsOf({ agent: structuredClone(user) })
    for (const [name, mine] of Object.entries(user)) expect(JSON.stringify(agents[name]), name).toBe(JSON.stringify(mine))
    // their variants copy the user's definitions
    expect(agents["implement-1"]).toMatchObject({ prompt: "my implement", model: "zen/alpha" })
    expect((agents["implement-1"]!.permission as Json | undefined)?.edit).toBeUndefined()
    expect(agents["context-2"]).toMatchObject({ prompt: "my context", permission: { edit: "deny" } })
  })

  it("US-22 an empty config gets /context-init, /context-update and /context-review, each with agent context and subtask true", () => {
    const command = inject({}).command as Record<string, Json>
    expect(Object.keys(command)).toEqual(["context-init", "context-update", "context-review"])
    for (const name of Object.keys(command)) {
      expect(command[name], name).toMatchObject({ agent: "context", subtask: true })
      expect(command[name], name).toEqual(MAP_COMMANDS[name as keyof typeof MAP_COMMANDS])
    }
  })

  it("US-22 a user's command context-review is unchanged and the other two are added; other commands are untouched", () => {
    const mine = { template: "my review of $ARGUMENTS", agent: "build" }
    const probe = { template: "probe $ARGUMENTS" }
    const command = inject({ command: { probe: structuredClone(probe), "context-review": structuredClone(mine) } }).command as Record<string, Json>
    expect(JSON.stringify(command["context-review"])).toBe(JSON.stringify(mine))
    expect(command.probe).toEqual(probe)
    expect(Object.keys(command)).toEqual(["probe", "context-review", "context-init", "context-update"])
    // a command value that is not an object is the user's to fix: left as it is
    expect(inject({ command: null }).command).toBeNull()
  })

  it("US-19 contextMap:false injects none of it: today's definitions, no general, no command key", () => {
    const config = inject({}, false)
    const agents = config.agent as Agents
    expect("command" in config).toBe(false)
    expect(agents.general).toBeUndefined()
    for (const base of ["explore", "implement", "context"]) expect(agents[base], base).toEqual(BASE_DEFINITIONS[base])
    expect(agents.build).toEqual(DELEGATION_DEFINITIONS.build)
    expect(agents.plan).toEqual(DELEGATION_DEFINITIONS.plan)
    for (const name of Object.keys(agents)) expect(JSON.stringify(agents[name]), name).not.toContain(MAP_DIR)
    expect(agentsOf({}, false, false).build).toBeUndefined()
  })

  it.prop(
    "US-22 injection with the context map is idempotent: running it on its own output gives the same config",
    [
      fc.record(
        {
          agent: fc.dictionary(fc.constantFrom("build", "plan", "general", "context", "implement", "explore-1", "context-2", "mine"), fc.oneof(fc.constant(null), fc.record({ prompt: fc.string({ maxLength: 5 }), model: fc.constantFrom("a/b", "zen/alpha") }, { requiredKeys: ["prompt"] }))),
          command: fc.dictionary(fc.constantFrom("context-init", "context-review", "probe"), fc.record({ template: fc.string({ maxLength: 8 }) })),
          permission: fc.oneof(fc.constant({}), fc.record({ edit: fc.oneof(fc.constantFrom("allow", "ask", "deny"), fc.dictionary(fc.constantFrom("*", "src/**", ".opencode/context/**"), fc.constantFrom("allow", "ask", "deny"))) }))
        },
        { requiredKeys: [] }
      ),
      fc.boolean(),
      fc.boolean()
    ],
    ([input, contextMap, delegate]) => {
      const once = injectConfig(structuredClone(input) as Json, POOL, "x", { contextMap, delegate }).config
      const twice = injectConfig(structuredClone(once), POOL, "x", { contextMap, delegate }).config
      expect(JSON.stringify(twice)).toBe(JSON.stringify(once))
      // the boot's injection writes the same agents and commands
      const boot = bootInjection(structuredClone(input) as Json, POOL, "x", { contextMap, delegate })
      expect(JSON.stringify(boot.agent)).toBe(JSON.stringify(once.agent))
      expect(JSON.stringify(boot.command)).toBe(JSON.stringify(once.command))
    }
  )

  it("US-19 the option contextMap: true by default, false or {enabled:false} off, {maxBytes} on with its budget, anything else warns once", () => {
    expect(parseSettings({}, {}).settings.contextMap).toEqual({ enabled: true, maxBytes: MAP_MAX_BYTES_DEFAULT })
    expect(parseSettings({ contextMap: true }, {}).settings.contextMap).toEqual({ enabled: true, maxBytes: MAP_MAX_BYTES_DEFAULT })
    expect(parseSettings({ contextMap: false }, {}).settings.contextMap.enabled).toBe(false)
    expect(parseSettings({ contextMap: { enabled: false } }, {}).settings.contextMap.enabled).toBe(false)
    const sized = parseSettings({ contextMap: { maxBytes: 8192 } }, {})
    expect(sized.settings.contextMap).toEqual({ enabled: true, maxBytes: 8192 })
    expect(sized.warnings).toEqual([])
    for (const bad of ["no", 1, null, []]) {
      const { settings, warnings } = parseSettings({ contextMap: bad }, {})
      expect(settings.contextMap, JSON.stringify(bad)).toEqual({ enabled: true, maxBytes: MAP_MAX_BYTES_DEFAULT })
      expect(warnings.filter((w) => w.includes("contextMap")), JSON.stringify(bad)).toHaveLength(1)
    }
    for (const maxBytes of [0, -1, 1.5, "24k"]) {
      const { settings, warnings } = parseSettings({ contextMap: { maxBytes } }, {})
      expect(settings.contextMap).toEqual({ enabled: true, maxBytes: MAP_MAX_BYTES_DEFAULT })
      expect(warnings).toEqual([`option contextMap.maxBytes ${JSON.stringify(maxBytes)} invalid (an integer 1 or more), using ${MAP_MAX_BYTES_DEFAULT}`])
    }
    // the boot entry reads it the same way
    for (const value of [undefined, true, false, { enabled: false }, { maxBytes: 10 }, "no"]) {
      expect(bootOptions({ contextMap: value }).contextMap, JSON.stringify(value)).toBe(parseSettings({ contextMap: value }, {}).settings.contextMap.enabled)
    }
  })

  it("US-22 the boot's injection returns command only when there is one to write", () => {
    expect(bootInjection({}, POOL, "x", { contextMap: false, delegate: true }).command).toBeUndefined()
    expect(Object.keys(bootInjection({}, POOL, "x", { contextMap: true, delegate: true }).command as Json)).toEqual(["context-init", "context-update", "context-review"])
  })
})
