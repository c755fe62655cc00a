import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { HEADLINE_MAX, MESSAGE_MAX, TITLE_MAX } from "../../../src/core/notify/limits.js"
import { capCodePoints, cleanText, cleanValue, firstLineOf, wellFormed } from "../../../src/core/notify/text.js"

const CONTROLS = [...Array.from({ length: 32 }, (_, i) => i), 0x7f]
const codePoints = (s: string): number => Array.from(s).length
const hasLoneSurrogate = (s: string): boolean => /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s)

/** Texts rich in what cleaning must handle: controls, whitespace of every kind, emoji, lone surrogates. */
const nasty = fc.oneof(
  fc.string({ unit: "binary", maxLength: 300 }),
  fc.string({ unit: "grapheme", maxLength: 300 }),
  fc.string({
    unit: fc.constantFrom("a", "é", " ", "\t", "\n", "\r", "\u0000", "\u0007", "\u001b", "\u001f", "\u007f", "\u00a0", "\u2028", "\ufeff", "👍", "\ud800", "\udc00", "…"),
    maxLength: 500
  })
)
const cap = fc.constantFrom(1, 2, 5, HEADLINE_MAX, TITLE_MAX, MESSAGE_MAX)

describe("notification text cleaning (SPEC §10.2)", () => {
  it.each(CONTROLS)("US-18 the control character with code %i becomes a space", (code) => {
    expect(cleanText(`a${String.fromCharCode(code)}b`, TITLE_MAX)).toBe("a b")
  })

  it("US-18 a title with TAB and BEL arrives with spaces in their place", () => {
    expect(cleanText("Build\tdone\u0007now", TITLE_MAX)).toBe("Build done now")
  })

  it("US-18 runs of whitespace and controls collapse to one space, and the text is trimmed", () => {
    expect(cleanText("  Fix \t\t login\r\n\r\n  page \u0000\u0001 ", TITLE_MAX)).toBe("Fix login page")
    expect(cleanText(" \n\t\u0000 ", TITLE_MAX)).toBe("")
    expect(cleanText("", TITLE_MAX)).toBe("")
  })

  it("US-18 printable text, quotes and shell syntax are kept unchanged", () => {
    const s = `He said "hi"; $(id) \`id\` && rm -rf ~ 'x' é 👍`
    expect(cleanText(s, MESSAGE_MAX)).toBe(s)
  })

  it("US-18 cleanValue: a string is cleaned, anything else is empty", () => {
    expect(cleanValue(" a\tb ", TITLE_MAX)).toBe("a b")
    for (const v of [undefined, null, 42, {}, ["x"]]) expect(cleanValue(v, TITLE_MAX)).toBe("")
  })
})

describe("caps in code points (SPEC §1, §12.1)", () => {
  it("US-12 a 200-char question becomes a 70-char headline ending in …", () => {
    const h = cleanText("q".repeat(200), HEADLINE_MAX)
    expect(codePoints(h)).toBe(70)
    expect(h).toBe("q".repeat(69) + "…")
  })

  it("US-12 a text of exactly the cap is kept; one more code point gives N−1 plus …", () => {
    expect(cleanText("x".repeat(70), HEADLINE_MAX)).toBe("x".repeat(70))
    expect(cleanText("x".repeat(71), HEADLINE_MAX)).toBe("x".repeat(69) + "…")
    expect(cleanText("y".repeat(91), TITLE_MAX)).toBe("y".repeat(89) + "…")
    expect(cleanText("z".repeat(401), MESSAGE_MAX)).toBe("z".repeat(399) + "…")
  })

  it("US-12 an emoji counts as one code point: 70 emoji fit the headline, 71 do not", () => {
    expect(cleanText("👍".repeat(70), HEADLINE_MAX)).toBe("👍".repeat(70))
    expect(cleanText("👍".repeat(71), HEADLINE_MAX)).toBe("👍".repeat(69) + "…")
  })

  it("US-12 a cap never splits a surrogate pair", () => {
    const h = cleanText("a" + "😀".repeat(100), HEADLINE_MAX)
    expect(codePoints(h)).toBe(70)
    expect(h).toBe("a" + "😀".repeat(68) + "…")
    expect(hasLoneSurrogate(h)).toBe(false)
    expect(capCodePoints("😀😀😀", 2)).toBe("😀…")
  })

  it("US-18 lone surrogates become U+FFFD; a valid pair is kept", () => {
    expect(wellFormed("a\ud800b")).toBe("a\ufffdb")
    expect(wellFormed("\udc00x")).toBe("\ufffdx")
    expect(wellFormed("x\ud800")).toBe("x\ufffd")
    expect(wellFormed("\udc00\ud800")).toBe("\ufffd\ufffd")
    expect(wellFormed("😀")).toBe("😀")
    expect(cleanText("a\ud83d b", TITLE_MAX)).toBe("a\ufffd b")
  })

  it("US-11 firstLineOf keeps the text before the first line break, after leading blanks", () => {
    expect(firstLineOf("boom\nstack")).toBe("boom")
    expect(firstLineOf("boom\r\nstack")).toBe("boom")
    expect(firstLineOf("\n\n  boom\nx")).toBe("boom")
    expect(firstLineOf("")).toBe("")
  })
})

describe("cleaning properties", () => {
  it.prop("US-18 the cleaned text holds no control character and no line break", [nasty, cap], ([s, max]) => {
    expect(cleanText(s, max)).not.toMatch(/[\u0000-\u001f\u007f\u2028\u2029]/)
  })

  it.prop("US-18 the cleaned text has no leading, trailing or double space", [nasty, cap], ([s, max]) => {
    const c = cleanText(s, max)
    expect(c).toBe(c.trim())
    expect(c).not.toMatch(/\s\s/)
  })

  it.prop("US-12 the cleaned text never exceeds the cap in code points, and is well formed", [nasty, cap], ([s, max]) => {
    const c = cleanText(s, max)
    expect(codePoints(c)).toBeLessThanOrEqual(max)
    expect(hasLoneSurrogate(c)).toBe(false)
  })

  it.prop("US-18 cleaning is idempotent", [nasty, cap], ([s, max]) => {
    const c = cleanText(s, max)
    expect(cleanText(c, max)).toBe(c)
  })

  it.prop("US-12 a capped text is the cleaned text's first N−1 code points plus … exactly when it was longer", [nasty, cap], ([s, max]) => {
    const whole = cleanText(s, 1_000_000)
    const c = cleanText(s, max)
    if (codePoints(whole) <= max) expect(c).toBe(whole)
    else expect(c).toBe(Array.from(whole).slice(0, max - 1).join("") + "…")
  })
})
