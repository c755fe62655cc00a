/**
 * The log through opencode's `client.app.log` (service `opencode-pool`), falling back to stderr when
 * the client is missing or the call fails. Lines below the configured level are dropped. Sending is
 * fire-and-forget: a hook never waits for the log. The layer installs LoggerAppLog too, so
 * `Effect.log*` lines take the same way.
 *
 * The service name goes twice: as `service`, the field the API names, and in `extra`, the annotations
 * opencode prints: 1.18.33 writes `message=<text>` and the `extra` keys, and drops `service` (issue 33).
 * A line's own annotations (`Effect.annotateLogs`: claim, session, model) follow it in `extra`; the
 * service name stays first and is never replaced by one.
 */
import { LEVEL_RANK, type LogDetails, type LogLevel } from "../../services/opencode/AppLog.js"
import { appLogLayer } from "./LoggerAppLog.js"

export interface LogClient {
  readonly app?: { readonly log?: (options: { body: { service: string; level: LogLevel; message: string; extra?: Record<string, unknown> } }) => Promise<unknown> }
}

/** The service name every line carries (docs/OPERATIONS.md, "Log lines"). */
export const LOG_SERVICE = "opencode-pool"

/** An annotation as opencode prints it: text, a number or a boolean as it is, anything else as JSON. */
const extraValue = (v: unknown): unknown => {
  if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") return v
  try {
    return JSON.stringify(v) ?? String(v)
  } catch {
    return "(unprintable)"
  }
}

/** The annotations opencode prints first, in this order; any other follows by name. */
const FIRST = ["claim", "session", "model"]
const rank = (k: string): number => {
  const i = FIRST.indexOf(k)
  return i === -1 ? FIRST.length : i
}

/** `extra`: the service name, then the line's annotations in a fixed order (Effect keeps them unordered). */
export const extraOf = (details: LogDetails | undefined): Record<string, unknown> => {
  const extra: Record<string, unknown> = { service: LOG_SERVICE }
  if (details === undefined) return extra
  const keys = Object.keys(details.annotations).filter((k) => k !== "service")
  keys.sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0))
  for (const k of keys) extra[k] = extraValue(details.annotations[k])
  return extra
}

export const AppLogSdk = (client: LogClient | undefined, level: LogLevel) =>
  appLogLayer((lvl, message, details) => {
    if (LEVEL_RANK[lvl] < LEVEL_RANK[level]) return
    const fallback = () => process.stderr.write(`opencode-pool ${lvl}: ${message}\n`)
    const app = client?.app
    if (app?.log === undefined) return void fallback()
    try {
      // called as a method: the SDK's generated client reads its own `this`
      app.log({ body: { service: LOG_SERVICE, level: lvl, message, extra: extraOf(details) } }).then(
        (r) => {
          if (typeof r === "object" && r !== null && "error" in r && (r as { error?: unknown }).error !== undefined) fallback()
        },
        fallback
      )
    } catch {
      fallback()
    }
  }, level)
