import { Effect, Layer } from "effect"
import { AppLog, type AppLogService, type LogDetails, type LogLevel } from "../../services/opencode/AppLog.js"
import { installAppLogger } from "./LoggerAppLog.js"

export interface MemoryLine {
  readonly level: LogLevel
  readonly message: string
  /** Only for `Effect.log*` lines that had a cause or annotations. */
  readonly details?: LogDetails
}

/** Collects lines in memory (tests), `Effect.log*` lines included. */
export const AppLogMemory = (lines: Array<MemoryLine>) => {
  const log: AppLogService = { log: (level, message, details) => Effect.sync(() => void lines.push(details === undefined ? { level, message } : { level, message, details })) }
  return Layer.merge(Layer.succeed(AppLog, log), installAppLogger(log))
}
