/** Plugin options and environment (SPEC §2.2–2.3): parsed into one settings record, with warnings; the decoding uses effect/Schema. Pure. */
import { Option, Schema } from "effect"
import { FIRST_TOKEN_MS, QUOTA_RESERVE_DEFAULT } from "./constants.js"
import { resolveMaxSlots } from "./pool/pool.js"
import { parseFallbackModels } from "./quota/fallback.js"
import type { NotifyVia } from "./notify/channel.js"
import { JsonObject } from "./tolerant.js"
import { DEFAULT_HEAVY_RULES, type HeavyRules } from "./permits/heavy.js"
import { parsePermitSettings, type BudgetSetting } from "./permits/settings.js"
import { LOCAL_BACKEND, parseStateBackend, type StateBackend } from "./state/fleet.js"

/** A log line's level: the one definition (the engine's log lines, the `logLevel` option). */
export type LogLevel = "debug" | "info" | "warn" | "error"
/** The `logLevel` option's values: the same levels. */
export type LogLevelName = LogLevel

export interface Settings {
  readonly enabled: boolean
  readonly models: unknown
  readonly modelsFile: string | undefined
  readonly maxSlots: number
  readonly stateDir: string | undefined
  readonly reapMs: number
  readonly hangMinAgeMs: number
  readonly hangSilenceMs: number
  /** Issue 35: a pooled child with no first token this long after its spawn is aborted and re-routed. */
  readonly firstTokenMs: number
  readonly lockWaitMs: number
  readonly trace: string | undefined
  readonly logLevel: LogLevelName
  /** SPEC §2.3 notifications: `notify:false` sends none (events are still tracked for hang detection). */
  readonly notify: boolean
  readonly notifyVia: NotifyVia
  readonly notifyHost: string | undefined
  /** The option `sound`, before `OCPOOL_SOUND` (see `soundsOn`). */
  readonly sound: boolean
  readonly fade: boolean
  /** The OmniRoute option as given (read by `core/omniroute.ts`; SPEC §13). */
  readonly omniroute: unknown
  /** The delegation policy (US-1): inject `build`/`plan` when the user has not defined them; `false` opts out. */
  readonly delegate: boolean
  /** Quota sensing (issue 12): the fraction of a limit below which a slot cools as `quota_low`. */
  readonly quotaReserve: number
  /** Coaching (issue 12, US-49): a GO / THROTTLE / STOP line in root sessions' system prompts; `false` turns it off. */
  readonly coach: boolean
  /** Budgets a provider will tell when asked (issue 35): read its budget endpoint while its slots are in use; `false` reads none. */
  readonly keyBudgets: boolean
  /** Counters in the shared state (issue 36): every engine counts in the transaction that already writes; `false` writes none. */
  readonly metrics: boolean
  /** Fallback models for root sessions (issue 12, US-50), in order, validated like pool entries. */
  readonly fallbackModels: ReadonlyArray<string>
  /** Heavy-work budgets (issue 21): `heavy` first (capacity `auto` unless set), then the user's. */
  readonly permits: ReadonlyArray<BudgetSetting>
  /** Which bash commands wait for a permit; `false` (option `heavyCommands: false`) turns gating off. */
  readonly heavy: HeavyRules | false
  /** Where shared state lives (issue 22): the state directory's files, or PostgreSQL for a fleet of machines. */
  readonly state: StateBackend
  /** The context map (SPEC §13): on unless `contextMap: false`; `maxBytes` the budget of its five files. */
  readonly contextMap: ContextMapSetting
}

export const DEFAULTS: Settings = {
  enabled: true,
  models: undefined,
  modelsFile: undefined,
  maxSlots: 4,
  stateDir: undefined,
  reapMs: 30_000,
  hangMinAgeMs: 300_000,
  hangSilenceMs: 180_000,
  firstTokenMs: FIRST_TOKEN_MS,
  lockWaitMs: 250,
  trace: undefined,
  logLevel: "info",
  notify: true,
  notifyVia: "auto",
  notifyHost: undefined,
  sound: true,
  fade: true,
  omniroute: undefined,
  delegate: true,
  quotaReserve: QUOTA_RESERVE_DEFAULT,
  coach: true,
  keyBudgets: true,
  metrics: true,
  fallbackModels: [],
  permits: [{ name: "heavy", capacity: "auto", source: "default" }],
  heavy: DEFAULT_HEAVY_RULES,
  state: LOCAL_BACKEND,
  contextMap: CONTEXT_MAP_DEFAULT
}

const LogLevelSchema = Schema.Literal("debug", "info", "warn", "error")

/** The off switch (`enabled: false`, `OCPOOL_DISABLE`): one rule, which the boot entry reads too. */
export { envDisables, isDisabled } from "./boot/options.js"
import { CONTEXT_MAP_DEFAULT, isDisabled, parseContextMap, type ContextMapSetting } from "./boot/options.js"
export type { ContextMapSetting } from "./boot/options.js"

/** One option: `undefined` when absent; its decoded value when `schema` accepts it; else `undefined` and the warning. */
const decodeOption = <A, I>(schema: Schema.Schema<A, I>, value: unknown, warning: () => string, warnings: Array<string>): A | undefined => {
  if (value === undefined) return undefined
  const decoded = Schema.decodeUnknownOption(schema)(value)
  if (Option.isSome(decoded)) return decoded.value
  warnings.push(warning())
  return undefined
}

const intIn = (name: string, value: unknown, min: number, max: number, dflt: number, warnings: Array<string>): number =>
  decodeOption(
    Schema.Int.pipe(Schema.between(min, max)),
    value,
    () => `option ${name} ${JSON.stringify(value)} invalid (an integer ${min}${max === Number.MAX_SAFE_INTEGER ? " or more" : `-${max}`}), using ${dflt}`,
    warnings
  ) ?? dflt

const bool = (name: string, value: unknown, dflt: boolean, warnings: Array<string>): boolean =>
  decodeOption(Schema.Boolean, value, () => `option ${name} must be a boolean; using ${dflt}`, warnings) ?? dflt

const NotifyViaSchema = Schema.Literal("auto", "local", "ssh", "none")

const str = (name: string, value: unknown, warnings: Array<string>): string | undefined =>
  decodeOption(Schema.String, value, () => `option ${name} must be a string; ignored`, warnings)

/** Options first, then the environment wins (SPEC §2.2). */
export const parseSettings = (
  options: Readonly<Record<string, unknown>> | undefined,
  env: Readonly<Record<string, string | undefined>>
): { readonly settings: Settings; readonly warnings: ReadonlyArray<string> } => {
  const o = options ?? {}
  const warnings: Array<string> = []
  decodeOption(Schema.Boolean, o.enabled, () => "option enabled must be a boolean; using true", warnings)
  const max = resolveMaxSlots(o.maxSlots)
  if (max.warning !== undefined) warnings.push(max.warning)
  const models = decodeOption(JsonObject, o.models, () => "option models must be an object with slots; ignored", warnings)
  let logLevel: LogLevelName = "info"
  const optLevel = str("logLevel", o.logLevel, warnings)
  const envLevel = env.OCPOOL_LOG_LEVEL
  const level = envLevel !== undefined && envLevel !== "" ? envLevel : optLevel
  if (level !== undefined) {
    const decoded = Schema.decodeUnknownOption(LogLevelSchema)(level.trim().toLowerCase())
    if (Option.isSome(decoded)) logLevel = decoded.value
    else warnings.push(`log level ${JSON.stringify(level)} invalid (debug, info, warn or error), using info`)
  }
  const fallbackModels = parseFallbackModels(o.fallbackModels)
  warnings.push(...fallbackModels.warnings)
  const permitSettings = parsePermitSettings(o, env)
  warnings.push(...permitSettings.warnings)
  const stateBackend = parseStateBackend(o.state, env)
  warnings.push(...stateBackend.warnings)
  const contextMap = parseContextMap(o.contextMap)
  warnings.push(...contextMap.warnings)
  const envTrace = env.OCPOOL_TRACE
  const settings: Settings = {
    enabled: !isDisabled(o, env),
    models,
    modelsFile: str("modelsFile", o.modelsFile, warnings),
    maxSlots: max.maxSlots,
    stateDir: str("stateDir", o.stateDir, warnings),
    reapMs: intIn("reapMs", o.reapMs, 1000, Number.MAX_SAFE_INTEGER, DEFAULTS.reapMs, warnings),
    hangMinAgeMs: intIn("hangMinAgeMs", o.hangMinAgeMs, 1000, Number.MAX_SAFE_INTEGER, DEFAULTS.hangMinAgeMs, warnings),
    hangSilenceMs: intIn("hangSilenceMs", o.hangSilenceMs, 1000, Number.MAX_SAFE_INTEGER, DEFAULTS.hangSilenceMs, warnings),
    firstTokenMs: intIn("firstTokenMs", o.firstTokenMs, 1000, Number.MAX_SAFE_INTEGER, DEFAULTS.firstTokenMs, warnings),
    lockWaitMs: intIn("lockWaitMs", o.lockWaitMs, 0, 60_000, DEFAULTS.lockWaitMs, warnings),
    trace: envTrace !== undefined && envTrace !== "" ? envTrace : str("trace", o.trace, warnings),
    logLevel,
    notify: bool("notify", o.notify, DEFAULTS.notify, warnings),
    notifyVia:
      decodeOption(NotifyViaSchema, o.notifyVia, () => `option notifyVia ${JSON.stringify(o.notifyVia)} invalid (auto, local, ssh or none), using auto`, warnings) ??
      DEFAULTS.notifyVia,
    notifyHost: str("notifyHost", o.notifyHost, warnings),
    sound: bool("sound", o.sound, DEFAULTS.sound, warnings),
    fade: bool("fade", o.fade, DEFAULTS.fade, warnings),
    omniroute: o.omniroute,
    delegate: bool("delegate", o.delegate, DEFAULTS.delegate, warnings),
    quotaReserve:
      decodeOption(
        Schema.Number.pipe(Schema.greaterThanOrEqualTo(0), Schema.lessThan(1)),
        o.quotaReserve,
        () => `option quotaReserve ${JSON.stringify(o.quotaReserve)} invalid (a fraction of the limit from 0 up to 1, e.g. 0.05), using ${QUOTA_RESERVE_DEFAULT}`,
        warnings
      ) ?? QUOTA_RESERVE_DEFAULT,
    coach: bool("coach", o.coach, DEFAULTS.coach, warnings),
    keyBudgets: bool("keyBudgets", o.keyBudgets, DEFAULTS.keyBudgets, warnings),
    metrics: bool("metrics", o.metrics, DEFAULTS.metrics, warnings),
    fallbackModels: fallbackModels.models,
    permits: permitSettings.permits,
    heavy: permitSettings.heavy,
    state: stateBackend.state,
    contextMap: contextMap.setting
  }
  return { settings, warnings }
}
