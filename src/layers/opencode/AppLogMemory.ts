import { Effect, Layer } from "effect"
import { AppLog, type LogLevel } from "../../services/opencode/AppLog.js"

/** Collects lines in memory (tests). */
export const AppLogMemory = (lines: Array<{ level: LogLevel; message: string }>) =>
  Layer.succeed(AppLog, { log: (level, message) => Effect.sync(() => void lines.push({ level, message })) })
