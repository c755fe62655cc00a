/**
 * Config injection (SPEC §4): the three pooled bases and one hidden variant per base per slot, merged
 * into opencode's config without ever clobbering the user's definitions; with the context map on (SPEC
 * §13), the map's maintainer, the one-writer edit rules and the map's commands too. Pure: a config in,
 * a new config out (the hook copies `agent`, `provider` and `command` back into opencode's object).
 */
import { MAX_SLOTS_LIMIT, POOLED_BASES } from "./constants.js"
import {
  BUILD_READ_RULES,
  CONTEXT_EDIT_RULES,
  MAINTAINER_DEFINITION,
  MAP_FIRST,
  MAP_FIRST_BUILD,
  RETRY_NOTE,
  withEditRules,
  withPromptLine,
  writerEditRules
} from "./context/agents.js"
import { MAP_COMMANDS } from "./context/commands.js"
import { deepCopy, isRecord, type JsonRecord } from "./json.js"
import { describeSlots, type Slot } from "./pool/pool.js"

type Json = JsonRecord

export const variantName = (base: string, slot: number): string => `${base}-${slot}`

/** The shipped base definitions (SPEC §4 step 1). */
export const BASE_DEFINITIONS: Readonly<Record<string, Json>> = {
  explore: {
    mode: "subagent",
    description: "Read-only exploration on a pooled model: find files, read and grep code, answer questions about the codebase.",
    prompt: `You explore the codebase for the caller: search, read and summarise. You never edit files. Report paths and line numbers. ${RETRY_NOTE}`,
    tools: { write: false, edit: false, patch: false },
    permission: { edit: "deny" }
  },
  implement: {
    mode: "subagent",
    description: "Mechanical edits on a pooled model: apply a precisely described change across files.",
    prompt: `You make the precise, mechanical change the caller describes, and report every file you changed. ${RETRY_NOTE}`
  },
  context: {
    mode: "subagent",
    description: "Read-only context gathering on a pooled model: summarise the architecture, conventions and workflows of the project.",
    prompt: `You gather and summarise context about the project for the caller. You never edit files. ${RETRY_NOTE}`,
    tools: { write: false, edit: false, patch: false },
    permission: { edit: "deny" }
  }
}

/** The read family the delegating `build` may not use itself (US-1 criterion 1). */
export const READ_FAMILY = ["read", "glob", "grep", "list", "webfetch", "websearch"] as const

/**
 * `task` rules that allow only the named bases. opencode checks `task` against the agent the call
 * finally names, after the pool rewrote `explore` to `explore-2`, so each base's slot variants
 * `<base>-1` … `<base>-8` are allowed with it; everything else (general, user agents) is denied.
 * opencode evaluates rules last-match-wins, so `"*": "deny"` comes first.
 */
export const taskOnly = (bases: ReadonlyArray<string>): Json => {
  const rules: Json = { "*": "deny" }
  for (const base of bases) {
    rules[base] = "allow"
    for (let n = 1; n <= MAX_SLOTS_LIMIT; n++) rules[variantName(base, n)] = "allow"
  }
  return rules
}

const SPAWN_BARE =
  'Always spawn the bare names "explore", "implement" and "context" (the task tool\'s subagent_type); never a numbered variant such as "explore-1": the pool picks the model, and a numbered name is refused.'

/**
 * The delegation policy (US-1, SPEC §13 "build may not read and delegates to the pooled bases"),
 * injected for `build` and `plan` only when the user has not defined them, and not at all with the
 * option `delegate: false`. `plan` keeps its own reading (a plan needs it) and may spawn only the
 * read-only bases: `implement` edits, and plan does not.
 */
export const DELEGATION_DEFINITIONS: Readonly<Record<"build" | "plan", Json>> = {
  build: {
    prompt: [
      "You are the primary coding agent, and you delegate the bulk work to pooled subagents on cheap models.",
      "You cannot read, glob, grep, list or fetch the web yourself: spawn \"explore\" to find files, read code and answer questions about the codebase, \"context\" for a summary of the project's architecture, conventions and workflows, and \"implement\" to make a precise, mechanical change across files.",
      SPAWN_BARE,
      "Give each subagent a self-contained brief: what to find or change, where, and what to report back (paths, line numbers, the diff). Spawn independent subagents in parallel.",
      "You decide, review what comes back, and run commands (builds, tests) yourself.",
      "A subagent aborted by the pool (a rate limit, an outage or a hang) was stopped on purpose: spawn the same base again and it runs on a model that answers."
    ].join("\n"),
    permission: { ...Object.fromEntries(READ_FAMILY.map((tool) => [tool, "deny"])), task: taskOnly(POOLED_BASES) }
  },
  plan: {
    prompt: [
      "You plan; you never edit files.",
      "Hand the reading and searching to pooled subagents on cheap models: spawn \"explore\" to find files, read code and answer questions about the codebase, and \"context\" for a summary of the project's architecture, conventions and workflows. Read a file yourself only when the detail matters to the plan.",
      'Always spawn the bare names "explore" and "context" (the task tool\'s subagent_type); never a numbered variant such as "explore-1": the pool picks the model.',
      "A subagent aborted by the pool (a rate limit, an outage or a hang) was stopped on purpose: spawn it again and it runs on a model that answers."
    ].join("\n"),
    permission: { task: taskOnly(["explore", "context"]) }
  }
}

/**
 * The shipped definitions with the context map on (SPEC §13): `context` is the map's maintainer and may
 * edit only the map; every other prompt says to check the map first; the delegating `build` may read
 * the map (and nothing else). The edit rules of `build`, `implement` and `general` depend on the user's
 * global rules and are added by `injectConfig`.
 */
export const MAP_BASE_DEFINITIONS: Readonly<Record<string, Json>> = {
  explore: withPromptLine(BASE_DEFINITIONS.explore!, MAP_FIRST),
  implement: withPromptLine(BASE_DEFINITIONS.implement!, MAP_FIRST),
  context: { ...MAINTAINER_DEFINITION, permission: { edit: { ...CONTEXT_EDIT_RULES } } }
}

export const MAP_DELEGATION_DEFINITIONS: Readonly<Record<"build" | "plan", Json>> = {
  build: { ...withPromptLine(DELEGATION_DEFINITIONS.build, MAP_FIRST_BUILD), permission: { ...(DELEGATION_DEFINITIONS.build.permission as Json), read: { ...BUILD_READ_RULES } } },
  plan: withPromptLine(DELEGATION_DEFINITIONS.plan, MAP_FIRST)
}

/** What `injectConfig` injects besides the pool. */
export interface InjectOptions {
  /** The delegation policy (US-1): inject `build` and `plan` where the user has not defined them. Default true. */
  readonly delegate?: boolean
  /** The context map (SPEC §13, option `contextMap`): its agents, edit rules and commands. Default true. */
  readonly contextMap?: boolean
}

export interface Injection {
  readonly config: Json
  readonly warnings: ReadonlyArray<string>
  /** `bound <k> slots from <origin>: 1=<model> w<w>, ...` */
  readonly info: string
}

/**
 * SPEC §4 steps 1–4, plus the delegation policy unless `delegate` is false, plus the context map unless
 * `contextMap` is false: every agent and command is added only where its name is absent. Running it on
 * its own output gives the same config.
 */
export const injectConfig = (input: Json, slots: ReadonlyArray<Slot>, origin: string, options: InjectOptions = {}): Injection => {
  const delegate = options.delegate ?? true
  const map = options.contextMap ?? true
  const config = deepCopy(input)
  const warnings: Array<string> = []
  const agents: Json = isRecord(config.agent) ? config.agent : {}
  config.agent = agents
  const bases = map ? MAP_BASE_DEFINITIONS : BASE_DEFINITIONS
  const delegation = map ? MAP_DELEGATION_DEFINITIONS : DELEGATION_DEFINITIONS
  // the edit rules of an agent that can write (SPEC §13): the user's global edit rules, then the map denied
  const writer = map ? writerEditRules(config.permission) : undefined
  /** A base as shipped: with the map on, `implement` gains the writer's edit rules. */
  const shipped = (base: string): Json => {
    const definition = deepCopy(bases[base]!)
    return base === "implement" && writer !== undefined ? { ...definition, permission: withEditRules(definition.permission, writer) } : definition
  }
  for (const base of POOLED_BASES) if (!(base in agents)) agents[base] = shipped(base)
  if (delegate) {
    for (const [name, definition] of Object.entries(delegation)) {
      if (name in agents) continue
      const copy = deepCopy(definition)
      agents[name] = name === "build" && writer !== undefined ? { ...copy, permission: withEditRules(copy.permission, writer) } : copy
    }
  }
  if (writer !== undefined) {
    // opencode's own writers, when neither the user nor the delegation policy defined them
    for (const name of ["build", "general"]) if (!(name in agents)) agents[name] = { permission: { edit: { ...writer } } }
  }
  for (const base of POOLED_BASES) {
    const effective = isRecord(agents[base]) ? (agents[base] as Json) : shipped(base)
    for (const slot of slots) {
      const name = variantName(base, slot.index)
      const existing = agents[name]
      if (isRecord(existing)) {
        if (typeof existing.model === "string" && existing.model !== slot.model) {
          warnings.push(`agent ${name} pins model ${existing.model}; the pool binds it to slot ${slot.index}'s ${slot.model}`)
        }
        existing.model = slot.model
      } else {
        const copy = deepCopy(effective)
        copy.hidden = true
        copy.mode = "subagent"
        copy.model = slot.model
        copy.description = `Pool slot ${slot.index} of ${base} (${slot.model}). Do not spawn this directly: spawn "${base}", and the pool picks the slot.`
        agents[name] = copy
      }
    }
  }
  if (isRecord(config.provider)) {
    for (const slot of slots) {
      const block = config.provider[slot.provider]
      if (!isRecord(block)) continue
      const id = slot.model.slice(slot.provider.length + 1)
      if (Array.isArray(block.whitelist) && !block.whitelist.includes(id)) block.whitelist.push(id)
      if (Array.isArray(block.blacklist) && block.blacklist.includes(id)) {
        warnings.push(`provider ${slot.provider} blacklists ${id}, which slot ${slot.index} uses`)
      }
    }
  }
  // the map's commands, each only where its name is free; a `command` value that is not an object is the user's
  if (map && (config.command === undefined || isRecord(config.command))) {
    const commands: Json = isRecord(config.command) ? config.command : {}
    const fresh = Object.entries(MAP_COMMANDS).filter(([name]) => !(name in commands))
    if (fresh.length > 0) {
      for (const [name, command] of fresh) commands[name] = { ...command }
      config.command = commands
    }
  }
  return { config, warnings, info: `bound ${slots.length} slots from ${origin}: ${describeSlots(slots)}` }
}
