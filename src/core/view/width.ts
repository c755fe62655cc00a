/**
 * Terminal widths for the views (issue 24): how many columns a text takes (colour codes 0, wide
 * characters and emoji 2, by Unicode's East Asian Width table, kept by get-east-asian-width) and a text
 * cut or padded to a width. Pure.
 */
import { eastAsianWidth } from "get-east-asian-width"

// eslint-disable-next-line no-control-regex
const SGR = /\x1b\[[0-9;]*m/g
// eslint-disable-next-line no-control-regex
const SGR_AT = /\x1b\[[0-9;]*m/y
export const RESET = "\x1b[0m"

const EMOJI = /\p{Emoji_Presentation}/u
const ZERO_WIDTH = /[\p{Mn}\p{Me}\p{Cf}]/u

/**
 * The columns one code point takes on a terminal: 0 (controls, combining marks, Hangul medial and final
 * jamo), 2 (East Asian Wide and Fullwidth by Unicode's table, kept by get-east-asian-width; emoji), else 1.
 */
const charWidth = (ch: string): number => {
  const cp = ch.codePointAt(0) ?? 0
  if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) return 0
  if (cp < 0x300) return 1
  if (ZERO_WIDTH.test(ch) || (cp >= 0x1160 && cp <= 0x11ff)) return 0
  return eastAsianWidth(cp) === 2 || EMOJI.test(ch) ? 2 : 1
}

/** The columns `s` takes on a terminal: colour codes count 0, wide characters and emoji 2. */
export const visibleWidth = (s: string): number => {
  let w = 0
  for (const ch of s.replace(SGR, "")) w += charWidth(ch)
  return w
}

/**
 * `s` cut to at most `cols` columns, ending with `…` when cut (never inside a wide character or a
 * colour code; a reset follows when a colour was cut open). Unchanged when it fits.
 */
export const fit = (s: string, cols: number): string => {
  if (!(cols >= 1)) return ""
  if (visibleWidth(s) <= cols) return s
  const room = Math.floor(cols) - 1
  let out = ""
  let w = 0
  let painted = false
  let i = 0
  while (i < s.length) {
    SGR_AT.lastIndex = i
    const code = s.charCodeAt(i) === 0x1b ? SGR_AT.exec(s) : null
    if (code !== null) {
      out += code[0]
      painted = true
      i += code[0].length
      continue
    }
    const ch = String.fromCodePoint(s.codePointAt(i) ?? 0x3f)
    const cw = charWidth(ch)
    if (w + cw > room) break
    out += ch
    w += cw
    i += ch.length
  }
  return `${out}…${painted ? RESET : ""}`
}

/** `s` cut to `cols` and padded with spaces to exactly `cols` columns. */
export const padTo = (s: string, cols: number): string => {
  const cut = fit(s, cols)
  return `${cut}${" ".repeat(Math.max(0, cols - visibleWidth(cut)))}`
}
