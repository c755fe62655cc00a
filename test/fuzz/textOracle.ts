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

/** §10.2 cleaning: controls (U+0000–U+001F, U+007F) and whitespace runs are one space, trimmed, capped at `max` code points (max − 1 and `…`). */
export const clean = (s: string, max: number): string => {
  const out: Array<number> = []
  let gap = false
  for (const p of points(s)) {
    if (p <= 0x1f || p === 0x7f || WHITESPACE.has(p)) gap = out.length > 0
    else {
      if (gap) out.push(0x20)
      gap = false
      out.push(p)
    }
  }
  return text(out.length > max ? [...out.slice(0, max - 1), 0x2026] : out)
}
