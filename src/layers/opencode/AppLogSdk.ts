/**
 * The log through opencode's `client.app.log` (service `opencode-pool`), falling back to stderr when
 * the client is missing or the call fails. Lines below the configured level are dropped. Sending is
 * fire-and-forget: a hook never waits for the log. The layer installs LoggerAppLog too, so
 * `Effect.log*` lines take the same way.
 *
 * The service name goes twice: as `service`, the field the API names, and in `extra`, the annotations
 * opencode prints: 1.18.33 writes `message=<text>` and the `extra` keys, and drops `service` (issue 33).
 */
import { Effect, Layer } from "effect"
import { AppLog, LEVEL_RANK, type AppLogService, type LogLevel } from "../../services/opencode/AppLog.js"
import { installAppLogger } from "./LoggerAppLog.js"

export interface LogClient {
  readonly app?: { readonly log?: (options: { body: { service: string; level: LogLevel; message: string; extra?: Record<string, unknown> } }) => Promise<unknown> }
}

/** The service name every line carries (docs/OPERATIONS.md, "Log lines"). */
export const LOG_SERVICE = "opencode-pool"

export const AppLogSdk = (client: LogClient | undefined, level: LogLevel) => {
  const log: AppLogService = {
    log: (lvl, message) =>
      Effect.sync(() => {
        if (LEVEL_RANK[lvl] < LEVEL_RANK[level]) return
        const fallback = () => process.stderr.write(`opencode-pool ${lvl}: ${message}\n`)
        const app = client?.app
        if (app?.log === undefined) return fallback()
        try {
          // called as a method: the SDK's generated client reads its own `this`
          app.log({ body: { service: LOG_SERVICE, level: lvl, message, extra: { service: LOG_SERVICE } } }).then(
            (r) => {
              if (typeof r === "object" && r !== null && "error" in r && (r as { error?: unknown }).error !== undefined) fallback()
            },
            fallback
          )
        } catch {
          fallback()
        }
      })
  }
  return Layer.merge(Layer.succeed(AppLog, log), installAppLogger(log))
}
