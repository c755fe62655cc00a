/**
 * `Effect.log*` sent to the plugin's log (the `AppLog` service: opencode's `client.app.log`, or memory
 * in tests). The level maps to the log's four (Fatal and Error → error, Warning → warn, Info → info,
 * the rest → debug); a cause, when there is one, is rendered to its first line for the message (after
 * the message, when there is one too) and handed to the log as it is, typed, with the annotations.
 * Effect's own minimum level is lowered to All: the log's configured level decides what is kept.
 *
 * The AppLog layers install this logger themselves (AppLogSdk, AppLogMemory), so every program that
 * has a log also has its `Effect.log*` lines in it; installing a second one replaces the first rather
 * than logging each line twice.
 */
import { Cause, Effect, FiberRef, HashMap, HashSet, Layer, Logger, LogLevel } from "effect"
import { causeLine as coreCauseLine } from "../../core/causeLine.js"
import { AppLog, type AppLogService, type LogLevel as AppLevel } from "../../services/opencode/AppLog.js"

/** Effect's level → the log's. */
export const appLevelOf = (level: LogLevel.LogLevel): AppLevel => {
  switch (level._tag) {
    case "Fatal":
    case "Error":
      return "error"
    case "Warning":
      return "warn"
    case "Info":
      return "info"
    default:
      return "debug"
  }
}

/** The log's level → Effect's (for lines whose level is a decision of the core). */
export const effectLevelOf = (level: AppLevel): LogLevel.LogLevel =>
  level === "error" ? LogLevel.Error : level === "warn" ? LogLevel.Warning : level === "info" ? LogLevel.Info : LogLevel.Debug

const firstLine = (text: string): string => text.split("\n", 1)[0]!.trim()

/**
 * A cause in one line: a typed failure's `reason` (this project's errors carry one), else the core's
 * total rendering (core/causeLine.ts), which survives hostile thrown values.
 */
export const causeLine = (cause: Cause.Cause<unknown>): string => {
  try {
    const failure = Cause.squash(cause)
    if (typeof failure === "object" && failure !== null && "reason" in failure && typeof failure.reason === "string") return firstLine(failure.reason)
  } catch {
    // a getter that throws: rendered below
  }
  return coreCauseLine(cause)
}

const part = (m: unknown): string => {
  if (typeof m === "string") return m
  try {
    return m instanceof Error ? m.message : (JSON.stringify(m) ?? String(m))
  } catch {
    return "(unprintable)"
  }
}

/** The text of a log call's message (several arguments are joined by spaces) and its cause. */
export const lineOf = (message: unknown, cause: Cause.Cause<unknown>): string => {
  const text = (Array.isArray(message) ? message.map(part) : [part(message)]).join(" ")
  if (Cause.isEmpty(cause)) return text
  const why = causeLine(cause)
  return text === "" ? why : `${text}: ${why}`
}

/** The loggers made here, so that installing one removes any other. */
const appLoggers = new WeakSet<Logger.Logger<unknown, unknown>>()

export const appLogLogger = (log: AppLogService): Logger.Logger<unknown, void> => {
  const logger = Logger.make<unknown, void>(({ logLevel, message, cause, annotations }) => {
    const details = Cause.isEmpty(cause) && HashMap.isEmpty(annotations) ? undefined : { cause, annotations: Object.fromEntries(annotations) }
    // runs at once (both logs are synchronous); a log that waits would finish in the background
    Effect.runFork(log.log(appLevelOf(logLevel), lineOf(message, cause), details))
  })
  appLoggers.add(logger)
  return logger
}

/** Installs the logger of `log` in place of Effect's default one (and of any logger made here before). */
export const installAppLogger = (log: AppLogService): Layer.Layer<never> =>
  Layer.merge(
    Layer.fiberRefLocallyScopedWith(FiberRef.currentLoggers, (loggers) =>
      HashSet.add(
        HashSet.filter(loggers, (l) => l !== Logger.defaultLogger && !appLoggers.has(l)),
        appLogLogger(log)
      )
    ),
    Logger.minimumLogLevel(LogLevel.All)
  )

/** The logger over the `AppLog` in context. */
export const LoggerAppLog: Layer.Layer<never, never, AppLog> = Layer.unwrapEffect(Effect.map(AppLog, installAppLogger))
