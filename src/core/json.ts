/** Small JSON helpers shared by the decoders. Pure. */

export type JsonRecord = Record<string, unknown>

/** A plain object (not null, not an array). */
export const isRecord = (v: unknown): v is JsonRecord => typeof v === "object" && v !== null && !Array.isArray(v)

/**
 * A deep copy of plain objects and arrays; every other value (functions, such as a provider's `fetch`
 * that a plugin put in opencode's config, included) is shared, not copied. Cycles stay cycles. Throws
 * only what a throwing getter throws.
 */
export const deepCopy = <A>(value: A): A => {
  const seen = new Map<object, unknown>()
  const copy = (v: unknown): unknown => {
    if (typeof v !== "object" || v === null) return v
    const done = seen.get(v)
    if (done !== undefined) return done
    if (Array.isArray(v)) {
      const out: Array<unknown> = []
      seen.set(v, out)
      for (const x of v) out.push(copy(x))
      return out
    }
    const proto = Object.getPrototypeOf(v) as unknown
    if (proto !== Object.prototype && proto !== null) return v
    const out: Record<string, unknown> = proto === null ? Object.create(null) : {}
    seen.set(v, out)
    for (const key of Object.keys(v)) out[key] = copy((v as Record<string, unknown>)[key])
    return out
  }
  return copy(value) as A
}
