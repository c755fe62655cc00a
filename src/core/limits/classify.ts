/**
 * Limit classification (SPEC §7.1–§7.3 as extended by issue 19): the first row of LIMIT_RULES whose
 * conditions hold for the error's view decides the class, its scope and its reset rules.
 * docs/CLASSIFICATION.md explains each row. Pure.
 */
import { errorView, type ErrorView, type ViewInput } from "./errorView.js"
import { LIMIT_RULES, type LimitClass, type LimitRule, type RuleScope } from "./limitRules.js"
import { phraseMatcher } from "./phrase.js"
import { familyOf, type Family, type Zone } from "./providerFamily.js"

export type { LimitClass } from "./limitRules.js"

interface CompiledRule {
  readonly rule: LimitRule
  readonly phrases: RegExp | undefined
  readonly values: ReadonlySet<string> | undefined
  readonly statuses: ReadonlySet<number> | undefined
  readonly families: ReadonlySet<Family> | undefined
}

const COMPILED: ReadonlyArray<CompiledRule> = LIMIT_RULES.map((rule) => ({
  rule,
  phrases: rule.phrases === undefined ? undefined : phraseMatcher(rule.phrases),
  values: rule.values === undefined ? undefined : new Set(rule.values),
  statuses: rule.statuses === undefined ? undefined : new Set(rule.statuses),
  families: rule.families === undefined ? undefined : new Set(rule.families)
}))

/** What the rules decided for one error. */
export interface Verdict {
  readonly cls: LimitClass
  /** The row that matched (`LIMIT_RULES[i].id`). */
  readonly rule: string
  /** The row's own scope, when it states one. */
  readonly scope: RuleScope | undefined
  readonly credit: boolean
  readonly dayEnd: Zone | undefined
  readonly family: Family | undefined
  readonly view: ErrorView
}

const idOf = (model: string): string => model.slice(model.indexOf("/") + 1).toLowerCase()

const BUDGET = /limit:?\s*~?(\d{1,12}),\s*used:?\s*~?(\d{1,12}),\s*requested:?\s*~?(\d{1,12})/

/** The text's own numbers say the request alone exceeds the budget. */
const overBudget = (lower: string): boolean => {
  const m = BUDGET.exec(lower)
  return m !== null && Number(m[3]) > Number(m[1])
}

/** A quota id of a per-day, or per-minute (or per-second), quota: `…PerDay…`, `…PerMinute…`. */
const QUOTA_WINDOWS: Readonly<Record<"day" | "minute", (id: string) => boolean>> = {
  day: (id) => id.includes("perday"),
  minute: (id) => id.includes("perminute") || id.includes("persecond")
}

const anyValue = (wanted: ReadonlySet<string>, have: ReadonlySet<string>): boolean => {
  for (const v of have) if (wanted.has(v)) return true
  return false
}

const holds = (c: CompiledRule, view: ErrorView, family: Family | undefined, model: string | undefined): boolean => {
  if (c.families !== undefined && (family === undefined || !c.families.has(family))) return false
  if (c.statuses !== undefined && (view.status === undefined || !c.statuses.has(view.status))) return false
  if (c.phrases !== undefined || c.values !== undefined) {
    const byValue = c.values !== undefined && anyValue(c.values, view.values)
    if (!byValue && !(c.phrases !== undefined && c.phrases.test(view.lower))) return false
  }
  if (c.rule.overBudget === true && !overBudget(view.lower)) return false
  if (c.rule.fits === true && overBudget(view.lower)) return false
  if (c.rule.quotaWindow !== undefined && !view.quotaIds.some(QUOTA_WINDOWS[c.rule.quotaWindow])) return false
  if (c.rule.relayed === true && view.upstream === undefined) return false
  if (c.rule.namesModel === true) {
    const id = model === undefined ? "" : idOf(model)
    if (id === "" || !view.lower.includes(id)) return false
  }
  return true
}

/** The first row that holds for `view`, or `undefined` (not a limit). */
export const classifyView = (view: ErrorView, model: string | undefined, provider: string | undefined): Verdict | undefined => {
  const family = familyOf(view.host, provider ?? (model === undefined ? undefined : model.slice(0, Math.max(0, model.indexOf("/")))))
  for (const c of COMPILED) {
    if (!holds(c, view, family, model)) continue
    const r = c.rule
    return { cls: r.cls, rule: r.id, scope: r.scope, credit: r.credit === true, dayEnd: r.dayEnd, family, view }
  }
  return undefined
}

export interface ClassifyInput extends ViewInput {
  /** The attributed model, `provider/model-id`. */
  readonly model?: string | undefined
  /** A provider the signal names. */
  readonly provider?: string | undefined
}

/** The verdict on one recorded error (see errorView for what `text` may be). */
export const classifyError = (input: ClassifyInput): Verdict | undefined => classifyView(errorView(input), input.model, input.provider)
