/**
 * The permit options (issue 21): `permits` (budgets and their capacities), `heavyCommands` (which bash
 * commands the plugin gates) and the env `OCPOOL_PERMITS` (the `heavy` capacity), read into budgets,
 * compiled rules and one warning per bad entry: a bad entry is skipped, never fatal. Pure.
 */
import { autoCapacity, describeCapacity, type EffectiveCpus } from "../machine/facts.js"
import { compileHeavyRules, compileRegex, type HeavyPatternInput, type HeavyRules } from "./heavy.js"
import { HEAVY } from "./types.js"
import { isRecord } from "../json.js"

export type CapacitySetting = number | "auto"

export interface BudgetSetting {
  readonly name: string
  readonly capacity: CapacitySetting
  readonly source: "default" | "option" | "env"
}

export interface PermitSettings {
  /** `heavy` first, then the user's budgets in the order given. */
  readonly permits: ReadonlyArray<BudgetSetting>
  /** The compiled rules, or `false` when `heavyCommands: false` turns gating off. */
  readonly heavy: HeavyRules | false
  readonly warnings: ReadonlyArray<string>
}

/** The largest capacity (and weight) accepted. */
export const CAPACITY_MAX = 1024
/** User regexes longer than this are refused. */
export const REGEX_MAX = 500
const BUDGET_NAME = /^[a-z][a-z0-9_-]{0,31}$/

const show = (v: unknown): string => {
  try {
    const s = JSON.stringify(v)
    if (s === undefined) return String(v)
    return s.length > 60 ? `${s.slice(0, 57)}...` : s
  } catch {
    return String(v)
  }
}

const isCount = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v >= 1 && v <= CAPACITY_MAX

/** `N` (1..1024) or `"auto"`; undefined otherwise. */
const capacitySetting = (v: unknown): CapacitySetting | undefined => (v === "auto" ? "auto" : isCount(v) ? v : undefined)

const CAPACITY_RULE = `a whole number 1-${CAPACITY_MAX} or "auto"`

const readPermits = (value: unknown, env: Readonly<Record<string, string | undefined>>, warnings: Array<string>): Array<BudgetSetting> => {
  let heavy: BudgetSetting = { name: HEAVY, capacity: "auto", source: "default" }
  const others: Array<BudgetSetting> = []
  if (value !== undefined && !isRecord(value)) warnings.push(`option permits must be an object like { "heavy": 2 }; using heavy: auto`)
  else if (value !== undefined) {
    for (const [name, v] of Object.entries(value)) {
      const capacity = capacitySetting(v)
      if (!BUDGET_NAME.test(name)) warnings.push(`option permits.${name}: a budget name is a-z, 0-9, _ or -, starting with a letter, at most 32; ignored`)
      else if (capacity === undefined) warnings.push(`option permits.${name} ${show(v)} invalid (${CAPACITY_RULE}); ${name === HEAVY ? "using auto" : "ignored"}`)
      else if (name === HEAVY) heavy = { name, capacity, source: "option" }
      else others.push({ name, capacity, source: "option" })
    }
  }
  const fromEnv = env.OCPOOL_PERMITS?.trim()
  if (fromEnv !== undefined && fromEnv !== "") {
    const capacity = capacitySetting(/^\d+$/.test(fromEnv) ? Number(fromEnv) : fromEnv)
    if (capacity === undefined) warnings.push(`OCPOOL_PERMITS ${show(env.OCPOOL_PERMITS)} invalid (${CAPACITY_RULE}); ignored`)
    else heavy = { name: HEAVY, capacity, source: "env" }
  }
  return [heavy, ...others]
}

const PATTERN_KEYS = new Set(["regex", "weight", "budget"])
const HEAVY_KEYS = new Set(["patterns", "ignore"])

/** The reason a regex source is refused, or its compiled form's absence of problems (undefined). */
const regexProblem = (v: unknown): string | undefined => {
  if (typeof v !== "string" || v === "") return `must be a non-empty string (a JS regex); skipped`
  if (v.length > REGEX_MAX) return `longer than ${REGEX_MAX} characters; skipped`
  const r = compileRegex(v)
  return r instanceof RegExp ? undefined : `${r.error}; skipped`
}

const readHeavy = (value: unknown, budgets: ReadonlySet<string>, warnings: Array<string>): HeavyRules | false => {
  if (value === false) return false
  if (value === undefined || value === true) return compileHeavyRules()
  if (!isRecord(value)) {
    warnings.push(`option heavyCommands must be false or an object { patterns, ignore }; using the built-in patterns`)
    return compileHeavyRules()
  }
  for (const key of Object.keys(value)) if (!HEAVY_KEYS.has(key)) warnings.push(`heavyCommands.${key}: unknown key (patterns, ignore); ignored`)
  const patterns: Array<HeavyPatternInput> = []
  const rawPatterns = value.patterns
  if (rawPatterns !== undefined && !Array.isArray(rawPatterns)) warnings.push(`heavyCommands.patterns must be an array of { regex, weight?, budget? }; ignored`)
  else
    (rawPatterns ?? []).forEach((entry: unknown, i: number) => {
      const at = `heavyCommands.patterns[${i}]`
      if (!isRecord(entry)) {
        warnings.push(`${at}: must be an object { regex, weight?, budget? }; skipped`)
        return
      }
      for (const key of Object.keys(entry)) if (!PATTERN_KEYS.has(key)) warnings.push(`${at}.${key}: unknown key (regex, weight, budget); ignored`)
      const problem = regexProblem(entry.regex)
      if (problem !== undefined) return void warnings.push(`${at}.regex: ${problem}`)
      if (entry.weight !== undefined && !isCount(entry.weight)) return void warnings.push(`${at}.weight: ${show(entry.weight)} is not a whole number 1-${CAPACITY_MAX}; skipped`)
      if (entry.budget !== undefined && (typeof entry.budget !== "string" || !budgets.has(entry.budget)))
        return void warnings.push(`${at}.budget: ${show(entry.budget)} is not a budget defined in permits (${[...budgets].join(", ")}); skipped`)
      patterns.push({ regex: entry.regex as string, weight: entry.weight as number | undefined, budget: entry.budget as string | undefined })
    })
  const ignore: Array<string> = []
  const rawIgnore = value.ignore
  if (rawIgnore !== undefined && !Array.isArray(rawIgnore)) warnings.push(`heavyCommands.ignore must be an array of regexes; ignored`)
  else
    (rawIgnore ?? []).forEach((entry: unknown, i: number) => {
      const problem = regexProblem(entry)
      if (problem !== undefined) warnings.push(`heavyCommands.ignore[${i}]: ${problem}`)
      else ignore.push(entry as string)
    })
  return compileHeavyRules({ patterns, ignore })
}

/** The permit settings from the plugin options and the environment. */
export const parsePermitSettings = (
  options: Readonly<Record<string, unknown>> | undefined,
  env: Readonly<Record<string, string | undefined>>
): PermitSettings => {
  const warnings: Array<string> = []
  const permits = readPermits(options?.permits, env, warnings)
  const heavy = readHeavy(options?.heavyCommands, new Set(permits.map((p) => p.name)), warnings)
  return { permits, heavy, warnings }
}

/** Every budget with its capacity in units and how it was found (layers/permits/permitsLayer.ts `resolveBudgets` reads the facts). */
export const budgetsOf = (settings: ReadonlyArray<BudgetSetting>, facts: EffectiveCpus): ReadonlyArray<{ readonly name: string; readonly capacity: number; readonly source: string }> =>
  settings.map((s) => ({ name: s.name, ...capacityOf(s, facts) }))

/** A budget's capacity in units, and how it was found (`ocpool permits`, `BudgetView.source`). */
export const capacityOf = (setting: BudgetSetting, facts: EffectiveCpus): { readonly capacity: number; readonly source: string } =>
  setting.capacity === "auto"
    ? { capacity: autoCapacity(facts.cpus), source: describeCapacity(facts) }
    : { capacity: setting.capacity, source: setting.source === "env" ? "OCPOOL_PERMITS" : "option" }
