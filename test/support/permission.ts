/**
 * opencode 1.18.33's permission semantics, for tests: a config `permission` block becomes a ruleset
 * (`"tool": "deny"` is the rule `{tool, "*", deny}`; `"task": {pattern: action}` one rule per pattern,
 * in key order), and a call is judged by the LAST rule whose permission and pattern both match
 * (`*` any run of characters, `?` one), `ask` when none does. The e2e test checks the same rules on the
 * ruleset the real opencode reports at `GET /agent`.
 */
export interface Rule {
  readonly permission: string
  readonly pattern: string
  readonly action: string
}

const wildcard = (text: string, pattern: string): boolean =>
  new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".")}$`, "s").test(text)

export const rulesOf = (permission: unknown): ReadonlyArray<Rule> => {
  if (typeof permission !== "object" || permission === null) return []
  const rules: Array<Rule> = []
  for (const [tool, value] of Object.entries(permission)) {
    if (typeof value === "string") rules.push({ permission: tool, pattern: "*", action: value })
    else if (typeof value === "object" && value !== null) {
      for (const [pattern, action] of Object.entries(value)) rules.push({ permission: tool, pattern, action: String(action) })
    }
  }
  return rules
}

export const evaluate = (rules: ReadonlyArray<Rule>, permission: string, pattern: string): string => {
  let action = "ask"
  for (const r of rules) if (wildcard(permission, r.permission) && wildcard(pattern, r.pattern)) action = r.action
  return action
}
