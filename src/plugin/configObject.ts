/** Whether opencode's config object can be worked on; shared by the boot entry and the engine's hooks. */
import { isPlainObject } from "../core/extract.js"
import { deepCopy, type JsonRecord } from "../core/json.js"

/**
 * Whether opencode's config object can be worked on: a plain object (prototype `Object.prototype` or
 * none, extensible, not a Proxy: those never copy), that copies without throwing, whose `agent` and
 * `provider` are absent or writable data properties. Functions in it (a provider's `fetch`, this plugin's
 * quota wrapper among them) are fine. The engine keeps it for hot reload and writes
 * those two keys into it; anything else could throw a hostile value from inside the engine.
 */
export const workable = (v: unknown): v is JsonRecord => {
  if (!isPlainObject(v)) return false
  try {
    const proto = Object.getPrototypeOf(v) as unknown
    if ((proto !== Object.prototype && proto !== null) || !Object.isExtensible(v)) return false
    for (const key of ["agent", "provider"]) {
      const d = Object.getOwnPropertyDescriptor(v, key)
      if (d !== undefined && !("value" in d && d.writable === true)) return false
    }
    deepCopy(v)
    return true
  } catch {
    return false
  }
}
