/**
 * Config injection (SPEC §4): the three pooled bases and one hidden variant per base per slot, merged
 * into opencode's config without ever clobbering the user's definitions. Pure: a config in, a new
 * config out (the hook copies it back into opencode's object).
 */
import { POOLED_BASES } from "./constants.js"
import { isRecord, type JsonRecord } from "./json.js"
import { describeSlots, type Slot } from "./pool.js"

type Json = JsonRecord

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

export interface Injection {
  readonly config: Json
  readonly warnings: ReadonlyArray<string>
  /** `bound <k> slots from <origin>: 1=<model> w<w>, ...` */
  readonly info: string
}

export const variantName = (base: string, slot: number): string => `${base}-${slot}`

/** SPEC §4 steps 1–4. Running it on its own output gives the same config. */
export const injectConfig = (input: Json, slots: ReadonlyArray<Slot>, origin: string): Injection => {
  const config = structuredClone(input)
  const warnings: Array<string> = []
  const agents: Json = isRecord(config.agent) ? config.agent : {}
  config.agent = agents
  for (const base of POOLED_BASES) {
    if (!(base in agents)) agents[base] = structuredClone(BASE_DEFINITIONS[base])
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
        const copy = structuredClone(effective)
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
