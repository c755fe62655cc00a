/**
 * The context map's side of config injection (SPEC §13, epic G): the `context` agent as the map's
 * maintainer, the line every other injected prompt gains (check the map with `ls` first), and the edit
 * rules that keep one writer: `context` may write only the map (never `manager.md`), every other agent
 * that can write ends its edit rules with both spellings of the map denied. Pure data and total
 * functions; no I/O.
 */
import { isRecord, type JsonRecord } from "../json.js"
import { agentRuleset, matches } from "./rules.js"
import { MANAGER_FILE, MAP_DIR, MAP_FILES } from "./map.js"

type Json = JsonRecord

/** Every pooled base's prompt ends with this: an abort by the pool is on purpose and the base may be spawned again. */
export const RETRY_NOTE =
  "If the pool stops you (a rate limit, an outage or a hang), you are aborted on purpose: the caller may simply spawn the same base again and it will run on a model that answers."

/**
 * The map in both spellings opencode's `edit` check may see: relative to the project root, and with a
 * leading directory (a path outside the worktree, or an absolute path made relative, as
 * `home/u/.opencode/context/x.md`).
 */
export const MAP_PATTERNS = [`${MAP_DIR}/**`, `*/${MAP_DIR}/**`] as const
/** `manager.md` in both spellings. */
export const MANAGER_PATTERNS = [`${MAP_DIR}/${MANAGER_FILE}`, `*/${MAP_DIR}/${MANAGER_FILE}`] as const

/** What each map file holds, in MAP_FILES order. */
const FILE_ROLES: Readonly<Record<(typeof MAP_FILES)[number], string>> = {
  "architecture.md": "the subsystems, how they fit together, and for each a short \"Start here\" list",
  "contexts.md": "the domain: its terms, the main data and where each lives",
  "conventions.md": "how code is written here: naming, error handling, tests, formatting, the rules a change must keep",
  "workflows.md": "how to build, test, run, debug and release, with the exact commands",
  "decisions.md": "decisions already taken, each with its why, so nobody reopens them blindly"
}

const fileLines = MAP_FILES.map((f) => `- ${MAP_DIR}/${f}: ${FILE_ROLES[f]}.`)

/**
 * The line every injected prompt but the maintainer's gains with the context map on (US-19 criterion
 * 3): look at the map with `ls` before exploring, and read it and `manager.md` when present.
 */
export const MAP_FIRST = `Before exploring the code, run \`ls ${MAP_DIR}/\`: when the project map is there, read it first (${MAP_FILES.join(", ")}, and ${MANAGER_FILE} when present: the user's notes, which win) and start from its "Start here" entries instead of searching from scratch. You never write ${MAP_DIR}/: the context agent keeps it.`

/** The delegating `build` cannot explore itself: it reads the map (allowed to it) and briefs subagents from it. */
export const MAP_FIRST_BUILD = `Before spawning explorers, run \`ls ${MAP_DIR}/\`: when the project map is there, read it yourself (${MAP_FILES.join(", ")}, and ${MANAGER_FILE} when present: the user's notes, which win; these are the only files you may read) and brief subagents from it with exact paths. Never write ${MAP_DIR}/: spawn "context" to update the map.`

/** The `context` agent's prompt with the map on: the map's maintainer (US-19 criterion 2). */
export const MAINTAINER_PROMPT = [
  `You maintain the project map in ${MAP_DIR}/: a small, curated map that every other agent reads instead of re-exploring the codebase. You are its only writer.`,
  `Start with \`ls ${MAP_DIR}/\`. If ${MAP_DIR}/${MANAGER_FILE} exists, read it first: it is the user's file, its guidance wins, and you never write, move or delete it.`,
  "The map is five files:",
  ...fileLines,
  'In architecture.md give each subsystem a short "Start here" list: a few entry-point paths, one line each on why to open it.',
  "No file inventories: never list every file of a directory or the repository; name only what a newcomer must open first.",
  "Record every decision in decisions.md with its why (the reason, the alternative rejected), not just the what.",
  "Read the code to verify what you write; fix stale entries rather than appending beside them. Keep the map small: prefer a precise sentence to a paragraph, and condense when asked or when the map grows.",
  "Write only inside the map directory, and report which map files you changed.",
  RETRY_NOTE
].join("\n")

/** The maintainer's definition (mode subagent, no model); its edit rules are CONTEXT_EDIT_RULES. */
export const MAINTAINER_DEFINITION: Readonly<Json> = {
  mode: "subagent",
  description: "Maintains the project map in .opencode/context/ on a pooled model: architecture, contexts, conventions, workflows and decisions, short and current.",
  prompt: MAINTAINER_PROMPT
}

/**
 * The `context` agent's edit rules (SPEC §13), in this order under opencode's last-match-wins: nothing,
 * then the map in both spellings, then never `manager.md` in both spellings.
 */
export const CONTEXT_EDIT_RULES: Readonly<Record<string, string>> = {
  "*": "deny",
  [MAP_PATTERNS[0]]: "allow",
  [MAP_PATTERNS[1]]: "allow",
  [MANAGER_PATTERNS[0]]: "deny",
  [MANAGER_PATTERNS[1]]: "deny"
}

/** Moves `key` to the end of `rules` with `value` (a repeated pattern keeps only its last, winning action). */
const putLast = (rules: Record<string, string>, key: string, value: string): void => {
  delete rules[key]
  rules[key] = value
}

/**
 * The edit rules of an injected agent that can write: the user's global edit rules as opencode applies
 * them to `edit` (the rules of every global key matching `edit`, `"*"` included, in order), or
 * `"*": "allow"` when there are none, then both map spellings denied last. The global rules are copied
 * because opencode appends an agent's rules after the global ones: a bare `"*": "allow"` here would
 * undo a user's global `edit: "ask"`.
 */
export const writerEditRules = (globalPermission: unknown): Record<string, string> => {
  const rules: Record<string, string> = {}
  for (const r of agentRuleset(globalPermission, undefined)) if (matches("edit", r.permission)) putLast(rules, r.pattern, r.action)
  if (Object.keys(rules).length === 0) rules["*"] = "allow"
  for (const p of MAP_PATTERNS) putLast(rules, p, "deny")
  return rules
}

/**
 * The delegating `build`'s read rules with the map on: nothing but the map (US-1 keeps it from reading
 * the code; US-21 criterion 3 lets every agent read the map).
 */
export const BUILD_READ_RULES: Readonly<Record<string, string>> = { "*": "deny", [MAP_PATTERNS[0]]: "allow", [MAP_PATTERNS[1]]: "allow" }

/** `definition` with `line` appended to its prompt (a copy; a definition without a string prompt gets `line` as its prompt). */
export const withPromptLine = (definition: Readonly<Json>, line: string): Json => {
  const prompt = definition.prompt
  return { ...definition, prompt: typeof prompt === "string" && prompt.length > 0 ? `${prompt}\n${line}` : line }
}

/** A permission block with `edit` set to `rules` (a copy; other keys kept in order). */
export const withEditRules = (permission: unknown, rules: Readonly<Record<string, string>>): Json => ({
  ...(isRecord(permission) ? permission : {}),
  edit: { ...rules }
})
