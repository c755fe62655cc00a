import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { printable, printableJson } from "../../src/core/printable.js"

/** What a terminal must never receive from untrusted text: escapes, controls, bidi and other invisible characters, lone surrogates. */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\p{Cf}\ufe00-\ufe0f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/u

/** Any UTF-16 text: code units at random (lone surrogates included) or whole code points. */
const text = fc.oneof(fc.array(fc.integer({ min: 0, max: 0xffff })).map((units) => String.fromCharCode(...units)), fc.string({ unit: "binary" }))

describe("the one printable filter (issue 33)", () => {
  it("US-51 bidi controls, zero-width characters, the BOM and tag characters are taken out; controls are escaped; a lone surrogate is ?", () => {
    expect(printable("a\u202eb\u2066c\u2069\u200bd\u200d\ufeffe\u{e0041}f")).toBe("abcdef")
    expect(printable("bell\u0007 esc\u001b[31mred")).toBe("bell\\x07 escred")
    expect(printable("x\ud800y")).toBe("x?y")
    expect(printable("ok 😀 é")).toBe("ok 😀 é")
  })

  it.prop("US-51 nothing unsafe survives, whatever the text", [text], ([s]) => {
    expect(printable(s)).not.toMatch(UNSAFE)
  })

  it.prop("US-51 printableJson keeps the JSON (it parses to the same value) and leaves no invisible character raw", [text], ([s]) => {
    const json = printableJson(JSON.stringify({ s }))
    expect(JSON.parse(json)).toEqual({ s })
    expect(json).not.toMatch(/[\u007f-\u009f\u2028\u2029\p{Cf}]/u)
  })
})
