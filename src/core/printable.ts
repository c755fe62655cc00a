/**
 * Text from files made safe to print (docs/OPERATIONS.md "Limits"): terminal escape sequences are
 * removed, every other control character is shown as an escape (`\x07`, `\u009b`), and values echoed
 * in error lines are cut to ECHO_MAX_CHARS. Pure.
 */
import { stripVTControlCharacters } from "node:util"
import { ECHO_MAX_CHARS } from "./limits.js"

// C0 controls, DEL and C1 controls; the line separators U+2028/2029 break lines in some terminals too.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g

const escape = (c: string): string => {
  const code = c.charCodeAt(0)
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`
}

/** One line of text with no escape sequence and no control character (tabs and newlines included). */
export const printable = (text: string): string => stripVTControlCharacters(text).replace(CONTROL, escape)

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
 * JSON text made safe for a terminal: C1 controls and the line separators, which JSON.stringify
 * leaves raw, written as \u escapes (the text is still the same JSON).
 */
export const printableJson = (json: string): string => json.replace(/[\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
