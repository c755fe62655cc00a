/** The plugin's log: opencode's `client.app.log`, with stderr as the fallback (SPEC §2.2 log level). */
import { Context, Effect, Option, type Cause } from "effect"
import type { LogLevel } from "../../core/options.js"
export type { LogLevel }

export const LEVEL_RANK: Readonly<Record<LogLevel, number>> = { debug: 0, info: 1, warn: 2, error: 3 }

/** What an `Effect.log*` call carried besides its text: the cause, typed, and the annotations. */
export interface LogDetails {
  readonly cause: Cause.Cause<unknown>
  readonly annotations: Readonly<Record<string, unknown>>
}

export interface AppLogService {
  /** `details` comes only from `Effect.log*` calls (through LoggerAppLog) that had a cause or annotations. */
  readonly log: (level: LogLevel, message: string, details?: LogDetails) => Effect.Effect<void>
}

export class AppLog extends Context.Tag("opencode-pool/AppLog")<AppLog, AppLogService>() {}

/**
 * Requires the log without using it: a program that logs through `Effect.log*` yields this first, so
 * that whoever runs it must provide an `AppLog` layer, and with it the logger those lines go to (the
 * AppLog layers install it, layers/opencode/LoggerAppLog.ts).
 */
export const needsLog: Effect.Effect<void, never, AppLog> = Effect.asVoid(AppLog)

/** A log line to whatever `AppLog` is in context, or nowhere when there is none (the CLI reads without one). */
export const optionalLog: Effect.Effect<(level: LogLevel, message: string) => Effect.Effect<void>> = Effect.map(
  Effect.serviceOption(AppLog),
  (log) => (level, message) => Option.match(log, { onNone: () => Effect.void, onSome: (l) => l.log(level, message) })
)
