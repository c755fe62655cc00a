/**
 * Reading what opencode hands a hook as untrusted data. Pure and total: a getter or Proxy trap that
 * throws, a revoked Proxy, a null prototype, a cycle, a huge string or a wrong type gives `undefined`
 * (or a bounded plain copy), never an exception.
 */
import { JSON_MAX_DEPTH } from "./readLimits.js"

/** Session, call and agent names longer than this are treated as absent (opencode's are about 30 characters). */
export const ID_MAX = 1_024
/** Longer strings are cut (inside copies) or treated as absent (agent names, titles). */
export const TEXT_MAX = 65_536

export interface CopyLimits {
  /** Nesting below this depth is dropped. */
  readonly depth: number
  /** Values copied in all; the rest are dropped. */
  readonly nodes: number
  /** Keys (or array items) copied per object. */
  readonly keys: number
  /** Strings are cut to this length. */
  readonly text: number
}

export const COPY_LIMITS: CopyLimits = { depth: 16, nodes: 10_000, keys: 1_000, text: TEXT_MAX }

/** An object or a function (both carry properties); `typeof` never throws, not even on a revoked Proxy. */
const isObject = (v: unknown): v is object => (typeof v === "object" && v !== null) || typeof v === "function"

/** `v[key]`, or `undefined` when `v` is not an object or the read throws. */
export const field = (v: unknown, key: string): unknown => {
  if (!isObject(v)) return undefined
  try {
    return (v as Record<string, unknown>)[key]
  } catch {
    return undefined
  }
}

/** Reads along `keys`: `at(e, "properties", "info")` is `e.properties.info`, guarded at every step. */
export const at = (v: unknown, ...keys: ReadonlyArray<string>): unknown => keys.reduce<unknown>(field, v)

/** The value if it is a string of at most `max` characters. */
export const text = (v: unknown, max: number = ID_MAX): string | undefined => (typeof v === "string" && v.length <= max ? v : undefined)

/** The value if it is a string, cut to `max` characters. */
export const cut = (v: unknown, max: number = TEXT_MAX): string | undefined => (typeof v !== "string" ? undefined : v.length > max ? v.slice(0, max) : v)

/** The value if it is a finite number. */
export const finite = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined)

/** Calls `f`; its result, or `fallback` when it throws. */
const attempt = <A>(f: () => A, fallback: A): A => {
  try {
    return f()
  } catch {
    return fallback
  }
}

/** An object that is not an array (guarded: `Array.isArray` throws on a revoked Proxy). */
export const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && attempt(() => !Array.isArray(v), false)

/** The first `max` items of an array (guarded reads; anything else, or an unreadable array, gives none). */
export const items = (v: unknown, max: number): ReadonlyArray<unknown> => {
  if (!attempt(() => Array.isArray(v), false)) return []
  const length = finite(field(v, "length")) ?? 0
  const out: Array<unknown> = []
  for (let i = 0; i < Math.min(length, max); i++) out.push(field(v, String(i)))
  return out
}

/** Sets `target[key] = value`; false when `target` is not an object or the write throws. */
export const assign = (target: unknown, key: string, value: unknown): boolean => {
  if (!isObject(target)) return false
  return attempt(() => {
    ;(target as Record<string, unknown>)[key] = value
    return true
  }, false)
}

/** Sets an own enumerable property, even `__proto__`, without touching the prototype. */
const define = (o: Record<string, unknown>, key: string, value: unknown): void => {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true })
}

/**
 * A plain JSON-safe copy: what `JSON.stringify` would keep, read with guarded reads and bounded by
 * `limits`. Cycles and values past the limits are dropped, unreadable properties skipped, bigints
 * become strings, non-finite numbers `null`; an `Error` keeps its `name` and `message`, a `Date` its
 * ISO text. `JSON.stringify` of the result never throws.
 */
export const jsonCopy = (value: unknown, limits: CopyLimits = COPY_LIMITS): unknown => {
  let budget = limits.nodes
  const ancestors = new Set<object>()

  const copy = (v: unknown, depth: number): unknown => {
    if (--budget < 0) return undefined
    switch (typeof v) {
      case "string":
        return v.length > limits.text ? v.slice(0, limits.text) : v
      case "number":
        return Number.isFinite(v) ? v : null
      case "boolean":
        return v
      case "bigint":
        return v.toString()
      case "object":
        break
      default:
        return undefined
    }
    if (v === null) return null
    if (depth >= limits.depth || ancestors.has(v)) return undefined
    ancestors.add(v)
    try {
      return copyObject(v, depth + 1)
    } finally {
      ancestors.delete(v)
    }
  }

  const copyObject = (v: object, depth: number): unknown => {
    if (attempt(() => Array.isArray(v), false)) {
      const length = Math.min(finite(field(v, "length")) ?? 0, limits.keys)
      const out: Array<unknown> = []
      for (let i = 0; i < length && budget > 0; i++) {
        const item = copy(field(v, String(i)), depth)
        out.push(item === undefined ? null : item)
      }
      return out
    }
    // a plain object (the usual case) needs none of the instance checks
    const plain = attempt(() => Object.getPrototypeOf(v) === Object.prototype, false)
    if (!plain) {
      if (attempt(() => v instanceof Date, false)) return attempt(() => (v as Date).toISOString(), null)
      if (attempt(() => v instanceof Number || v instanceof String || v instanceof Boolean, false)) return copy(attempt(() => v.valueOf(), null), depth)
    }
    const out: Record<string, unknown> = {}
    const keys = attempt(() => Object.keys(v), [] as Array<string>)
    if (!plain && attempt(() => v instanceof Error, false)) for (const k of ["message", "name"]) if (!keys.includes(k)) keys.unshift(k)
    for (const k of keys.length > limits.keys ? keys.slice(0, limits.keys) : keys) {
      if (budget <= 0) break
      const item = copy(field(v, k), depth)
      if (item === undefined) continue
      if (k === "__proto__") define(out, k, item)
      else out[k] = item
    }
    return out
  }

  return copy(value, 0)
}

/** The plugin options as plain data: a bounded copy, `undefined` when they are not an object. */
export const pluginOptions = (options: unknown): Record<string, unknown> | undefined => {
  const copy = jsonCopy(options)
  return isPlainObject(copy) ? copy : undefined
}

/** A one-line description of a thrown value for a log line; never throws. */
export const describe = (e: unknown): string => {
  const message = cut(field(e, "message"), 500)
  if (message !== undefined) return message.split("\n")[0] ?? ""
  if (typeof e === "string") return (cut(e, 500) ?? "").split("\n")[0] ?? ""
  return attempt(() => (cut(String(e), 500) ?? "unknown error").split("\n")[0] ?? "unknown error", "unknown error")
}

/**
 * Whether JSON text nests arrays and objects deeper than `max`. A linear scan that skips strings:
 * cheap enough to run before every `JSON.parse` of file text, so deep nesting is refused with a
 * reason instead of overflowing the stack of whatever walks the parsed value later.
 */
export const jsonTooDeep = (text: string, max: number = JSON_MAX_DEPTH): boolean => {
  // fast path (a trace line has a handful of brackets): with at most `max` openers the depth cannot exceed it
  let openers = 0
  for (let i = text.indexOf("{"); i >= 0 && openers <= max; i = text.indexOf("{", i + 1)) openers++
  for (let i = text.indexOf("["); i >= 0 && openers <= max; i = text.indexOf("[", i + 1)) openers++
  if (openers <= max) return false
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++ // backslash: skip the escaped character
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true
    } else if (c === 0x5d || c === 0x7d) depth--
  }
  return false
}
