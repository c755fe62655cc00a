/**
 * Time in opencode ids (SPEC §11.2). An id is `<prefix>_<12 hex><14 base62>`; the hex part is the
 * 48-bit value (ms × 4096 + counter) mod 2^48, so the millisecond part keeps 36 bits and wraps every
 * ID_ERA_MS. Decoding picks the one time in (now − ID_ERA_MS, now] that matches those 36 bits.
 */
import { ID_ERA_MS } from "../constants.js"

export const ID_PATTERN = /^[a-z]+_[0-9a-f]{12}[0-9A-Za-z]{14}$/

/** The 36-bit millisecond field of an id, or undefined when the id does not have opencode's shape. */
export const idTimeField = (id: string): number | undefined => {
  if (!ID_PATTERN.test(id)) return undefined
  const hex = id.slice(id.indexOf("_") + 1, id.indexOf("_") + 10)
  // The first 9 hex digits are the top 36 bits of the 48-bit value: floor(v / 4096).
  return parseInt(hex, 16)
}

/** The time an id was made, given the current time; undefined for an id that is never a candidate. */
export const decodeIdTime = (id: string, now: number): number | undefined => {
  const t36 = idTimeField(id)
  return t36 === undefined ? undefined : timeOfField(t36, now)
}

/** T = now − ((now mod 2^36 − t36) mod 2^36), with the non-negative remainder. */
export const timeOfField = (t36: number, now: number): number => {
  const r = mod(now, ID_ERA_MS)
  return now - mod(r - t36, ID_ERA_MS)
}

const mod = (a: number, m: number): number => ((a % m) + m) % m
