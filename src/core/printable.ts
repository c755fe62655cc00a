/**
 * Text from files made safe to print (docs/OPERATIONS.md "Limits"): terminal escape sequences are
 * removed, every other control character is shown as an escape (`\x07`, `\u009b`), the invisible ones
 * that reorder or hide what follows (bidi controls, zero-width and other format characters, variation
 * selectors, emoji modifiers) are taken out, a lone surrogate is `?`, and values echoed in error lines
 * are cut to ECHO_MAX_CHARS. The one filter for every text the project prints from files, databases,
 * peers and clients (issue 33; the live view adds only its width rules). Pure.
 */
import { stripVTControlCharacters } from "node:util"
import { ECHO_MAX_CHARS } from "./readLimits.js"

// C0 controls, DEL and C1 controls; the line separators U+2028/2029 break lines in some terminals too.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g

const escape = (c: string): string => {
  const code = c.charCodeAt(0)
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`
}

// format characters (U+202E and the other bidi controls, zero-width spaces and joiners, the BOM, tags),
// variation selectors and emoji skin-tone modifiers: invisible, and some reorder the text around them
const INVISIBLE = /[\p{Cf}\u{fe00}-\u{fe0f}\u{e0100}-\u{e01ef}\u{1f3fb}-\u{1f3ff}]/gu
// a surrogate without its pair (a terminal shows garbage, or nothing)
const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

/** One line of text with no escape sequence, no control character (tabs and newlines included) and nothing invisible. */
export const printable = (text: string): string => stripVTControlCharacters(text).replace(CONTROL, escape).replace(INVISIBLE, "").replace(LONE, "?")

/** `text` cut to `max` characters with an ellipsis (never inside a surrogate pair). */
export const truncate = (text: string, max: number = ECHO_MAX_CHARS): string => {
  if (text.length <= max) return text
  let cut = max
  const code = text.charCodeAt(cut - 1)
  if (code >= 0xd800 && code <= 0xdbff) cut--
  return `${text.slice(0, cut)}…`
}

/** A value from a file as it is echoed in an error line: printable and cut to ECHO_MAX_CHARS. */
export const echo = (text: string, max: number = ECHO_MAX_CHARS): string => truncate(printable(truncate(text, max * 8)), max)

/**
 * JSON text made safe for a terminal: C1 controls, the line separators and the invisible format
 * characters (bidi controls among them), which JSON.stringify leaves raw, written as \u escapes (the
 * text is still the same JSON, and a reader sees where they are).
 */
export const printableJson = (json: string): string =>
  // a format character outside the BMP (the tag characters) is written as its surrogate pair
  json.replace(/[\u007f-\u009f\u2028\u2029]|\p{Cf}/gu, (c) => Array.from({ length: c.length }, (_, i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, "0")}`).join(""))
