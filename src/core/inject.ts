/**
 * Config injection (SPEC §4): the three pooled bases and one hidden variant per base per slot, merged
 * into opencode's config without ever clobbering the user's definitions. Pure: a config in, a new
 * config out (the hook copies it back into opencode's object).
 */
import { MAX_SLOTS_LIMIT, POOLED_BASES } from "./constants.js"
import { deepCopy, isRecord, type JsonRecord } from "./json.js"
import { describeSlots, type Slot } from "./pool.js"

type Json = JsonRecord

export const variantName = (base: string, slot: number): string => `${base}-${slot}`

const RETRY_NOTE =
  "If the pool stops you (a rate limit, an outage or a hang), you are aborted on purpose: the caller may simply spawn the same base again and it will run on a model that answers."

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

export interface Injection {
  readonly config: Json
  readonly warnings: ReadonlyArray<string>
  /** `bound <k> slots from <origin>: 1=<model> w<w>, ...` */
  readonly info: string
}

/** SPEC §4 steps 1–4, plus the delegation policy unless `delegate` is false. Running it on its own output gives the same config. */
export const injectConfig = (input: Json, slots: ReadonlyArray<Slot>, origin: string, delegate = true): Injection => {
  const config = deepCopy(input)
  const warnings: Array<string> = []
  const agents: Json = isRecord(config.agent) ? config.agent : {}
  config.agent = agents
  for (const base of POOLED_BASES) {
    if (!(base in agents)) agents[base] = deepCopy(BASE_DEFINITIONS[base])
  }
  if (delegate) {
    for (const [name, definition] of Object.entries(DELEGATION_DEFINITIONS)) {
      if (!(name in agents)) agents[name] = deepCopy(definition)
    }
  }
  for (const base of POOLED_BASES) {
    const effective = isRecord(agents[base]) ? (agents[base] as Json) : BASE_DEFINITIONS[base]!
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
  return { config, warnings, info: `bound ${slots.length} slots from ${origin}: ${describeSlots(slots)}` }
}
