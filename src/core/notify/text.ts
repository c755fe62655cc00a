/**
 * Text cleaning for notifications (SPEC §10.2, §12.1): control characters (U+0000–U+001F, U+007F)
 * become spaces, runs of whitespace collapse to one space, the text is trimmed, and a cap in code
 * points keeps the first N−1 plus `…`. Lone surrogates become U+FFFD first, so what is cleaned is
 * exactly what reaches a process's argv (which is UTF-8).
 */

/** Every whitespace character of JavaScript's `\s` plus the control characters of the spec. */
const SPACE_RUN = /[\s\u0000-\u001f\u007f]+/gu

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

/** Lone surrogates as U+FFFD (what a UTF-8 encoder writes for them anyway). */
export const wellFormed = (s: string): string => s.replace(LONE_SURROGATE, "\ufffd")

/** `s` cut to `max` code points: the first `max − 1` plus `…` when longer. */
export const capCodePoints = (s: string, max: number): string => {
  // cheap path: a string of at most `max` UTF-16 units has at most `max` code points
  if (s.length <= max) return s
  const points = Array.from(s)
  return points.length <= max ? s : points.slice(0, Math.max(0, max - 1)).join("") + "…"
}

/** Cleaned, then capped at `max` code points. */
export const cleanText = (s: string, max: number): string => capCodePoints(wellFormed(s).replace(SPACE_RUN, " ").trim(), max)

/** A value that should be a text: strings are cleaned, anything else is empty. */
export const cleanValue = (v: unknown, max: number): string => (typeof v === "string" ? cleanText(v, max) : "")

/** The first line of a text (the part before the first line break), for `Failed: <first line>`. */
export const firstLineOf = (s: string): string => {
  const line = /^[^\r\n]*/.exec(s.trimStart())
  return line === null ? "" : line[0]
}
