/**
 * SPEC §10.2's text rules written out again on code points, independently of src/core/notify/text.ts:
 * the oracle the notification fuzz families compare the plugin and `ocpool receive` against.
 */

/** JavaScript's whitespace (what `trim` and `\s` mean): Zs, the line terminators, TAB, VT, FF and BOM. */
export const WHITESPACE: ReadonlySet<number> = (() => {
  const ws = new Set([0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff])
  for (let c = 0x2000; c <= 0x200a; c++) ws.add(c)
  return ws
})()

/** The code points of `s` as UTF-8 would carry them: a lone surrogate is U+FFFD. */
export const points = (s: string): Array<number> => {
  const out: Array<number> = []
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1)
      if (d >= 0xdc00 && d <= 0xdfff) {
        out.push(((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000)
        i++
        continue
      }
    }
    out.push(c >= 0xd800 && c <= 0xdfff ? 0xfffd : c)
  }
  return out
}

export const text = (ps: ReadonlyArray<number>): string => ps.map((p) => String.fromCodePoint(p)).join("")

/** The bidi embedding, override and isolate controls: U+202A–U+202E, U+2066–U+2069 (issue 18 item 10). */
export const BIDI_CONTROLS: ReadonlySet<number> = new Set([0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069])

/** The control characters of §10.2: C0 (U+0000–U+001F), DEL and C1 (U+0080–U+009F). */
export const isControl = (p: number): boolean => p <= 0x1f || (p >= 0x7f && p <= 0x9f)

/**
 * §10.2 cleaning: bidi controls are dropped; controls (C0, DEL, C1) and whitespace runs are one space,
 * trimmed, capped at `max` code points (max − 1 and `…`).
 */
export const clean = (s: string, max: number): string => {
  const out: Array<number> = []
  let gap = false
  for (const p of points(s)) {
    if (BIDI_CONTROLS.has(p)) continue
    if (isControl(p) || WHITESPACE.has(p)) gap = out.length > 0
    else {
      if (gap) out.push(0x20)
      gap = false
      out.push(p)
    }
  }
  return text(out.length > max ? [...out.slice(0, max - 1), 0x2026] : out)
}

/** The freedesktop body markup's escapes of `&`, `<` and `>`, one code point at a time (issue 18 item 10). */
export const escapeBody = (s: string): string => [...s].map((c) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : c)).join("")

/** The body notify-send is given (§10.5): the markup escaped, and every backslash doubled (notify-send reads C escapes in the body). */
export const notifySendBody = (message: string): string => escapeBody(message).split("\\").join("\\\\")

/** A control (C0, DEL, C1), a line break or a bidi control: never in a popup's text. */
export const FORBIDDEN_IN_POPUP = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/

/** A raw `<` or `>`, or an `&` that does not start one of the three escapes. */
export const RAW_MARKUP = /[<>]|&(?!amp;|lt;|gt;)/

/** A notify-send body read back: the escapes undone, doubled backslashes single again. */
export const readBody = (body: string): string => body.replace(/&(amp|lt|gt);|\\\\/g, (_m, e: string | undefined) => (e === "amp" ? "&" : e === "lt" ? "<" : e === "gt" ? ">" : "\\"))
