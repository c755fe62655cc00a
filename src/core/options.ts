/** Plugin options and environment (SPEC §2.2–2.3): parsed into one settings record, with warnings. Pure. */
import { resolveMaxSlots } from "./pool.js"

export type LogLevelName = "debug" | "info" | "warn" | "error"

export interface Settings {
  readonly enabled: boolean
  readonly models: unknown
  readonly modelsFile: string | undefined
  readonly maxSlots: number
  readonly stateDir: string | undefined
  readonly reapMs: number
  readonly hangMinAgeMs: number
  readonly hangSilenceMs: number
  readonly lockWaitMs: number
  readonly trace: string | undefined
  readonly logLevel: LogLevelName
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
  lockWaitMs: 250,
  trace: undefined,
  logLevel: "info"
}

const LEVELS: ReadonlySet<string> = new Set(["debug", "info", "warn", "error"])

/** `OCPOOL_DISABLE` turns the plugin off for `1`, `true`, `yes`, `on` (any case); nothing else. */
export const envDisables = (value: string | undefined): boolean =>
  value !== undefined && ["1", "true", "yes", "on"].includes(value.trim().toLowerCase())

export const isDisabled = (options: Readonly<Record<string, unknown>> | undefined, env: Readonly<Record<string, string | undefined>>): boolean =>
  options?.enabled === false || envDisables(env.OCPOOL_DISABLE)

const intIn = (name: string, value: unknown, min: number, max: number, dflt: number, warnings: Array<string>): number => {
  if (value === undefined) return dflt
  if (typeof value === "number" && Number.isInteger(value) && value >= min && value <= max) return value
  warnings.push(`option ${name} ${JSON.stringify(value)} invalid (an integer ${min}-${max === Number.MAX_SAFE_INTEGER ? "" : max}), using ${dflt}`.replace("-)", " or more)"))
  return dflt
}

const str = (name: string, value: unknown, warnings: Array<string>): string | undefined => {
  if (value === undefined) return undefined
  if (typeof value === "string") return value
  warnings.push(`option ${name} must be a string; ignored`)
  return undefined
}

/** Options first, then the environment wins (SPEC §2.2). */
export const parseSettings = (
  options: Readonly<Record<string, unknown>> | undefined,
  env: Readonly<Record<string, string | undefined>>
): { readonly settings: Settings; readonly warnings: ReadonlyArray<string> } => {
  const o = options ?? {}
  const warnings: Array<string> = []
  if (o.enabled !== undefined && typeof o.enabled !== "boolean") warnings.push("option enabled must be a boolean; using true")
  const max = resolveMaxSlots(o.maxSlots)
  if (max.warning !== undefined) warnings.push(max.warning)
  let models = o.models
  if (models !== undefined && (typeof models !== "object" || models === null || Array.isArray(models))) {
    warnings.push("option models must be an object with slots; ignored")
    models = undefined
  }
  let logLevel: LogLevelName = "info"
  const optLevel = str("logLevel", o.logLevel, warnings)
  const envLevel = env.OCPOOL_LOG_LEVEL
  const level = envLevel !== undefined && envLevel !== "" ? envLevel : optLevel
  if (level !== undefined) {
    if (LEVELS.has(level.trim().toLowerCase())) logLevel = level.trim().toLowerCase() as LogLevelName
    else warnings.push(`log level ${JSON.stringify(level)} invalid (debug, info, warn or error), using info`)
  }
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
    lockWaitMs: intIn("lockWaitMs", o.lockWaitMs, 0, 60_000, DEFAULTS.lockWaitMs, warnings),
    trace: envTrace !== undefined && envTrace !== "" ? envTrace : str("trace", o.trace, warnings),
    logLevel
  }
  return { settings, warnings }
}
