/**
 * Text cleaning for notifications (SPEC §10.2, §12.1), the same on every channel (the plugin's texts,
 * `ocpool notify`, the hop payload's encoder and `ocpool receive`'s decoder), in this order:
 *
 * 1. lone surrogates become U+FFFD, so what is cleaned is exactly what reaches a process's argv (UTF-8);
 * 2. the bidi embedding, override and isolate controls (U+202A–U+202E, U+2066–U+2069) are removed: a
 *    title such as `invoice\u202Efdp.exe` would otherwise show reordered (issue 18 item 10). They are
 *    zero-width, so nothing takes their place;
 * 3. control characters, C0 (U+0000–U+001F), DEL (U+007F) and C1 (U+0080–U+009F, NEL among them),
 *    become spaces, and runs of whitespace collapse to one space;
 * 4. the text is trimmed;
 * 5. a cap in code points keeps the first N−1 plus `…`. The cap counts the cleaned, visible text: the
 *    markup escape of notify-send's body (markup.ts) comes after it, when the argv is built.
 */

/** Every whitespace character of JavaScript's `\s` plus the control characters (C0, DEL, C1). */
const SPACE_RUN = /[\s\u0000-\u001f\u007f-\u009f]+/gu

/** The bidi embedding (LRE, RLE), override (LRO, RLO), pop (PDF) and isolate (LRI, RLI, FSI, PDI) controls. */
const BIDI_CONTROLS = /[\u202a-\u202e\u2066-\u2069]/g

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

/** Cleaned (well formed, bidi controls removed, controls and whitespace runs one space, trimmed), then capped at `max` code points. */
export const cleanText = (s: string, max: number): string => capCodePoints(wellFormed(s).replace(BIDI_CONTROLS, "").replace(SPACE_RUN, " ").trim(), max)

/** A value that should be a text: strings are cleaned, anything else is empty. */
export const cleanValue = (v: unknown, max: number): string => (typeof v === "string" ? cleanText(v, max) : "")

/** The first line of a text (the part before the first line break), for `Failed: <first line>`. */
export const firstLineOf = (s: string): string => {
  const line = /^[^\r\n]*/.exec(s.trimStart())
  return line === null ? "" : line[0]
}
