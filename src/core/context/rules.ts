/**
 * opencode 1.18.33's permission rules, evaluated as opencode evaluates them (its `Permission.fromConfig`,
 * `merge`, `evaluate` and `Wildcard.match`): a config `permission` block becomes a ruleset in key order
 * (`"edit": "deny"` is the rule `{edit, "*", deny}`; `"edit": {pattern: action}` one rule per pattern),
 * an agent's ruleset is the global rules followed by the agent's, and a call is judged by the LAST rule
 * whose permission and pattern both match; `ask` when none does. Pure.
 */
import { isRecord } from "../json.js"

export type Action = "allow" | "deny" | "ask"

export interface Rule {
  readonly permission: string
  readonly pattern: string
  readonly action: Action
}

const isAction = (v: unknown): v is Action => v === "allow" || v === "deny" || v === "ask"

/**
 * opencode's wildcard: `*` any run of characters (`/` included), `?` any one character, everything else
 * literal; backslashes count as `/`; a pattern ending in ` *` also matches without that tail (`git *`
 * matches `git`).
 */
export const matches = (text: string, pattern: string): boolean => {
  const t = text.replaceAll("\\", "/")
  let source = pattern
    .replaceAll("\\", "/")
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".")
  if (source.endsWith(" .*")) source = `${source.slice(0, -3)}( .*)?`
  return new RegExp(`^${source}$`, "s").test(t)
}

/**
 * A config `permission` block as opencode reads it: keys in order, a string value one rule with the
 * pattern `*`, an object one rule per pattern; values that are not actions are skipped (opencode's
 * config schema refuses them). A string block (`permission: "ask"`) is the rule `{"*", "*", ask}`.
 */
export const rulesOf = (permission: unknown): ReadonlyArray<Rule> => {
  if (isAction(permission)) return [{ permission: "*", pattern: "*", action: permission }]
  if (!isRecord(permission)) return []
  const rules: Array<Rule> = []
  for (const [key, value] of Object.entries(permission)) {
    if (isAction(value)) rules.push({ permission: key, pattern: "*", action: value })
    else if (isRecord(value)) {
      for (const [pattern, action] of Object.entries(value)) if (isAction(action)) rules.push({ permission: key, pattern, action })
    }
  }
  return rules
}

/** An agent's ruleset as opencode merges it: the global `permission` rules, then the agent's own. */
export const agentRuleset = (globalPermission: unknown, agentPermission: unknown): ReadonlyArray<Rule> => [
  ...rulesOf(globalPermission),
  ...rulesOf(agentPermission)
]

/** The action for `permission` on `pattern` (a path, a command, an agent name): the last matching rule's, else `ask`. */
export const evaluate = (rules: ReadonlyArray<Rule>, permission: string, pattern: string): Action => {
  for (let i = rules.length - 1; i >= 0; i--) {
    const r = rules[i]!
    if (matches(permission, r.permission) && matches(pattern, r.pattern)) return r.action
  }
  return "ask"
}

/**
 * The rules opencode 1.18.33 puts before the global ones for every agent (the parts that bear on files:
 * path-specific `external_directory` entries left out).
 */
export const OPENCODE_DEFAULTS: Readonly<Record<string, unknown>> = {
  "*": "allow",
  doom_loop: "ask",
  external_directory: { "*": "ask" },
  question: "deny",
  plan_enter: "deny",
  plan_exit: "deny",
  read: { "*": "allow", "*.env": "ask", "*.env.*": "ask", "*.env.example": "allow" }
}

/** The rules opencode 1.18.33's native agents add after the defaults (plan's data-directory path left out). */
export const OPENCODE_NATIVE: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {
  build: { question: "allow", plan_enter: "allow" },
  plan: { question: "allow", plan_exit: "allow", task: { general: "deny" }, edit: { "*": "deny", ".opencode/plans/*.md": "allow" } },
  general: { todowrite: "deny" },
  explore: { "*": "deny", grep: "allow", glob: "allow", list: "allow", bash: "allow", webfetch: "allow", websearch: "allow", read: "allow", external_directory: { "*": "ask" } }
}

/**
 * The ruleset opencode 1.18.33 gives the agent `name` when the config's global `permission` and the
 * agent's own entry are as given: its defaults, a native agent's own rules, the global rules, then the
 * agent's.
 */
export const opencodeRuleset = (name: string, globalPermission: unknown, agentPermission: unknown): ReadonlyArray<Rule> => [
  ...rulesOf(OPENCODE_DEFAULTS),
  ...(Object.hasOwn(OPENCODE_NATIVE, name) ? rulesOf(OPENCODE_NATIVE[name]) : []),
  ...agentRuleset(globalPermission, agentPermission)
]
