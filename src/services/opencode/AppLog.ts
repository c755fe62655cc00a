/** The plugin's log: opencode's `client.app.log`, with stderr as the fallback (SPEC §2.2 log level). */
import { Context, type Effect } from "effect"

export type LogLevel = "debug" | "info" | "warn" | "error"

export const LEVEL_RANK: Readonly<Record<LogLevel, number>> = { debug: 0, info: 1, warn: 2, error: 3 }

export interface AppLogService {
  readonly log: (level: LogLevel, message: string) => Effect.Effect<void>
}

export class AppLog extends Context.Tag("opencode-pool/AppLog")<AppLog, AppLogService>() {}
