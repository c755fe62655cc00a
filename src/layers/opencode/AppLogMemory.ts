import type { LogDetails, LogLevel } from "../../services/opencode/AppLog.js"
import { appLogLayer } from "./LoggerAppLog.js"

export interface MemoryLine {
  readonly level: LogLevel
  readonly message: string
  /** Only for `Effect.log*` lines that had a cause or annotations (claim, session, model: `details.annotations`). */
  readonly details?: LogDetails
}

/** Collects lines in memory (tests), `Effect.log*` lines included, with their annotations. */
export const AppLogMemory = (lines: Array<MemoryLine>) =>
  appLogLayer((level, message, details) => void lines.push(details === undefined ? { level, message } : { level, message, details }))
