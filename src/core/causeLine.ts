/**
 * The first line of a failure's cause, for a log line (docs/OPERATIONS.md): what the plugin's hooks and
 * the pool engine log when applying an event fails unexpectedly. Total: rendering a hostile thrown
 * value (a getter that throws, a revoked Proxy) can throw, so the rendering falls back to a one-line
 * description of the squashed failure, and past that to a fixed text.
 */
import { Cause } from "effect"
import { describe } from "./extract.js"

export const causeLine = (cause: Cause.Cause<unknown>): string => {
  try {
    return Cause.pretty(cause).split("\n")[0]!
  } catch {
    try {
      return describe(Cause.squash(cause))
    } catch {
      return "unknown (the failure could not be rendered)"
    }
  }
}
