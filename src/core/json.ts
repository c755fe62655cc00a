/** Small JSON helpers shared by the decoders. Pure. */

export type JsonRecord = Record<string, unknown>

/** A plain object (not null, not an array). */
export const isRecord = (v: unknown): v is JsonRecord => typeof v === "object" && v !== null && !Array.isArray(v)

/** The value if it is a string. */
export const asString = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined)
