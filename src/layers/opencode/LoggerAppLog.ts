/**
 * `Effect.log*` sent to the plugin's log (the `AppLog` service: opencode's `client.app.log`, or memory
 * in tests). The level maps to the log's four (Fatal and Error → error, Warning → warn, Info → info,
 * the rest → debug); a cause, when there is one, is rendered to its first line for the message (after
 * the message, when there is one too) and handed to the log as it is, typed, with the annotations.
 * Effect's own minimum level is lowered to All: the log's configured level decides what is kept.
 *
 * The AppLog layers install this logger themselves (AppLogSdk, AppLogMemory, through `appLogLayer`),
 * so every program that has a log also has its `Effect.log*` lines in it, forked fibers included (a
 * fork inherits its parent's loggers); installing a second one replaces the first rather than logging
 * each line twice. The shell logs only this way (issue 34): `logLine` writes a line of the core with
 * its annotations (claim, session, model), which reach the log as `details.annotations` beside the
 * fiber's own (`Effect.annotateLogs`).
 */
import { Cause, Effect, FiberRef, HashMap, HashSet, Layer, Logger, LogLevel } from "effect"
import { causeLine as coreCauseLine } from "../../core/causeLine.js"
import type { LogAnnotations, LogLine } from "../../core/engine/events.js"
import { AppLog, type AppLogService, type LogDetails, type LogLevel as AppLevel } from "../../services/opencode/AppLog.js"

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

/** A log message with what it is about (`logLine`). */
export class AboutLine {
  constructor(
    readonly text: string,
    readonly about: LogAnnotations
  ) {}
  toString(): string {
    return this.text
  }
  toJSON(): string {
    return this.text
  }
}

/** The line's own annotations, when the message is one `AboutLine` (Effect hands a logger its arguments as an array). */
const aboutOf = (message: unknown): LogAnnotations | undefined => {
  const m = Array.isArray(message) && message.length === 1 ? (message[0] as unknown) : message
  return m instanceof AboutLine ? m.about : undefined
}

const part = (m: unknown): string => {
  if (typeof m === "string") return m
  if (m instanceof AboutLine) return m.text
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

/** A log's synchronous write: what both AppLog layers are made of. */
export type AppLogWrite = (level: AppLevel, message: string, details?: LogDetails) => void

/** The loggers made here, so that installing one removes any other. */
const appLoggers = new WeakSet<Logger.Logger<unknown, unknown>>()

const loggerOf = (send: AppLogWrite): Logger.Logger<unknown, void> => {
  const logger = Logger.make<unknown, void>(({ logLevel, message, cause, annotations }) => {
    const about = aboutOf(message)
    const details =
      Cause.isEmpty(cause) && HashMap.isEmpty(annotations) && about === undefined
        ? undefined
        : { cause, annotations: about === undefined ? Object.fromEntries(annotations) : { ...Object.fromEntries(annotations), ...about } }
    send(appLevelOf(logLevel), lineOf(message, cause), details)
  })
  appLoggers.add(logger)
  return logger
}

/** The logger over any log service: each line runs its `log` at once (a log that waits finishes in the background). */
export const appLogLogger = (log: AppLogService): Logger.Logger<unknown, void> =>
  loggerOf((level, message, details) => void Effect.runFork(log.log(level, message, details)))

const install = (logger: Logger.Logger<unknown, void>, minimum: LogLevel.LogLevel): Layer.Layer<never> =>
  Layer.merge(
    Layer.fiberRefLocallyScopedWith(FiberRef.currentLoggers, (loggers) =>
      HashSet.add(
        HashSet.filter(loggers, (l) => l !== Logger.defaultLogger && !appLoggers.has(l)),
        logger
      )
    ),
    Logger.minimumLogLevel(minimum)
  )

/** Installs the logger of `log` in place of Effect's default one (and of any logger made here before). */
export const installAppLogger = (log: AppLogService): Layer.Layer<never> => install(appLogLogger(log), LogLevel.All)

/**
 * An AppLog layer over a synchronous write: the service, and the logger calling the write directly (no
 * fiber per line). `minimum`, the log's configured level, lets Effect drop a line below it before it
 * is built; the write must drop the service's own calls below it.
 */
export const appLogLayer = (write: AppLogWrite, minimum: AppLevel = "debug"): Layer.Layer<AppLog> => {
  const service: AppLogService = { log: (level, message, details) => Effect.sync(() => write(level, message, details)) }
  return Layer.merge(Layer.succeed(AppLog, service), install(loggerOf(write), minimum === "debug" ? LogLevel.All : effectLevelOf(minimum)))
}

/** The logger over the `AppLog` in context. */
export const LoggerAppLog: Layer.Layer<never, never, AppLog> = Layer.unwrapEffect(Effect.map(AppLog, installAppLogger))

/**
 * A line the core decided, at its level, with its annotations when it has any (issue 34). The
 * annotations travel in the message (an `AboutLine`), which the loggers made here read as the fiber's
 * annotations with the line's added: setting and restoring the fiber's own for each line
 * (`Effect.annotateLogs`, or its FiberRef steps) was a twentieth of a spawn's routing time (bench:route,
 * DECISIONS 269). Any other logger sees the line's text (`toString`, `toJSON`).
 */
export const logLine = (line: LogLine): Effect.Effect<void> =>
  Effect.logWithLevel(effectLevelOf(line.level), line.annotations === undefined ? line.message : new AboutLine(line.message, line.annotations))

/** Runs an effect with given loggers and minimum level (issue 34). */
export type LogPin = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

/**
 * The loggers (and minimum level) of the fiber that runs this, pinned: an effect run through the pin
 * logs there whichever fiber runs it, and so do the fibers it forks. A service built in a layer keeps
 * the log of its layer this way when it is called from outside the runtime (a test's `runPromise`, a
 * driver), as it did when it held the log service itself. Where the loggers are already those (every
 * call from the runtime), the effect runs as it is.
 */
export const pinLogs: Effect.Effect<LogPin> = Effect.map(
  Effect.zip(FiberRef.get(FiberRef.currentLoggers), FiberRef.get(FiberRef.currentMinimumLogLevel)),
  ([loggers, minimum]) =>
    <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
      Effect.withFiberRuntime<A, E, R>((fiber) =>
        fiber.getFiberRef(FiberRef.currentLoggers) === loggers && fiber.getFiberRef(FiberRef.currentMinimumLogLevel) === minimum
          ? effect
          : effect.pipe(Effect.locally(FiberRef.currentLoggers, loggers), Effect.locally(FiberRef.currentMinimumLogLevel, minimum))
      )
)

/** `service` with every effect it holds, and every effect its functions return, run through `pin`. */
export const pinned = <S extends object>(pin: LogPin, service: S): S =>
  Object.fromEntries(
    Object.entries(service).map(([k, v]) => [
      k,
      Effect.isEffect(v)
        ? pin(v)
        : typeof v === "function"
          ? (...args: ReadonlyArray<unknown>) => {
              const out: unknown = (v as (...a: ReadonlyArray<unknown>) => unknown)(...args)
              return Effect.isEffect(out) ? pin(out) : out
            }
          : v
    ])
  ) as S
