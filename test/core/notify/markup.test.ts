/**
 * Markup and bidi in popups (issue 18 item 10; SPEC §10.2, §10.5). notify-send hands its body to a
 * daemon that may render the freedesktop body markup (`<a href>`, `<img src>`, `<b>`): the body's `&`,
 * `<` and `>` are escaped in the notify-send argv, once, after the caps; the summary is plain text by
 * the spec and osascript shows plain text, so neither is escaped. Bidi controls (U+202A–U+202E,
 * U+2066–U+2069) are removed and C1 controls (U+0080–U+009F) become spaces by the cleaning, on every
 * channel.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { notifySendArgs, osascriptArgs } from "../../../src/core/notify/channel.js"
import { notificationFor, withHostSuffix } from "../../../src/core/notify/content.js"
import { MESSAGE_MAX, TITLE_MAX } from "../../../src/core/notify/limits.js"
import { escapeBodyMarkup, notifySendBody } from "../../../src/core/notify/markup.js"
import { decodePayload, encodeShow } from "../../../src/core/notify/payload.js"
import { cleanText } from "../../../src/core/notify/text.js"

type Shown = Parameters<typeof notifySendArgs>[0]
const shown = (title: string, message: string): Shown => ({ title, message, urgency: "normal", icon: "utilities-terminal", sound: "none" })
/** The summary and the body notify-send is given. */
const texts = (n: Shown): [string, string] => {
  const argv = notifySendArgs(n, false)
  return [argv.at(-2)!, argv.at(-1)!]
}
const LINK = "<a href=file:///etc/passwd>x</a>"
const IMG = "<img src=http://tracker.example/p.png>"
const BIDI = ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069"]
const C1 = Array.from({ length: 32 }, (_, i) => String.fromCharCode(0x80 + i))
/** Any control the popup must not get: C0, DEL, C1, the bidi controls. */
const FORBIDDEN = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/
/** A raw `<` or `>`, or an `&` that does not start one of the three escapes. */
const RAW_MARKUP = /[<>]|&(?!amp;|lt;|gt;)/
/** The body as the daemon reads it back: escapes undone, then notify-send's C escapes (doubled backslashes). */
const unescapeBody = (b: string): string => b.replace(/&(amp|lt|gt);/g, (_, e: string) => ({ amp: "&", lt: "<", gt: ">" })[e]!).replace(/\\\\/g, "\\")

describe("markup in the notify-send body (issue 18 item 10)", () => {
  it("US-11 `<a href=file:///etc/passwd>x</a>` as a message reaches notify-send's body as &lt;a href=file:///etc/passwd&gt;x&lt;/a&gt;", () => {
    expect(texts(shown("T", LINK))).toEqual(["T", "&lt;a href=file:///etc/passwd&gt;x&lt;/a&gt;"])
    expect(texts(shown("T", IMG))).toEqual(["T", "&lt;img src=http://tracker.example/p.png&gt;"])
  })

  it("US-11 an `&` is escaped once: `Tom & Jerry` is `Tom &amp; Jerry`; a literal `&amp;` or `&#x202E;` stays visible as written (`&amp;amp;`, `&amp;#x202E;`)", () => {
    expect(texts(shown("T", "Tom & Jerry"))[1]).toBe("Tom &amp; Jerry")
    expect(texts(shown("T", "&amp; &lt;b&gt;"))[1]).toBe("&amp;amp; &amp;lt;b&amp;gt;")
    // a character reference cannot bring back a bidi control
    expect(texts(shown("T", "&#x202E;&#8238;"))[1]).toBe("&amp;#x202E;&amp;#8238;")
  })

  it("US-11 the summary is plain text (freedesktop spec: only the body has markup): the title is handed over unescaped", () => {
    expect(texts(shown(`${LINK} & more`, "m"))).toEqual([`${LINK} & more`, "m"])
  })

  it("US-11 escaping and notify-send's backslash doubling together: `C:\\<dir> & \\101` is `C:\\\\&lt;dir&gt; &amp; \\\\101`", () => {
    expect(texts(shown("T", "C:\\<dir> & \\101"))[1]).toBe("C:\\\\&lt;dir&gt; &amp; \\\\101")
  })

  it("US-11 osascript shows plain text: title and message are its argv items unescaped", () => {
    const argv = osascriptArgs(shown(LINK, `${IMG} & co`))
    expect(argv.slice(6)).toEqual([LINK, `${IMG} & co`])
  })

  it("US-11 an error message with markup, through the plugin's content and the notify-send argv", () => {
    const n = notificationFor("error", { sessionTitle: "<b>bold</b> & co", errorMessage: `${LINK}\nstack` }, false)
    expect(texts(n)).toEqual(["opencode — <b>bold</b> & co", "Failed: &lt;a href=file:///etc/passwd&gt;x&lt;/a&gt;"])
  })

  it("US-18 over the hop the payload carries the text as written and the receiver's argv escapes it once", () => {
    const payload = encodeShow("desk:ses_1", { ...shown("T & <i>t</i>", withHostSuffix("Tom & Jerry <b>!</b>", "box")), sound: "done" })
    expect(payload.split("\n").slice(3, 5)).toEqual(["T & <i>t</i>", "Tom & Jerry <b>!</b> [box]"])
    const r = decodePayload(payload)
    if (r._tag !== "Show") throw new Error(`not a show: ${r._tag}`)
    expect(texts(r)).toEqual(["T & <i>t</i>", "Tom &amp; Jerry &lt;b&gt;!&lt;/b&gt; [box]"])
  })
})

describe("caps and escapes (issue 18 item 10)", () => {
  it("US-12 the cap counts the visible text: 400 `&` are capped to 399 and … first, then each is escaped whole", () => {
    const message = cleanText("&".repeat(1_000), MESSAGE_MAX)
    expect(message).toBe("&".repeat(399) + "…")
    expect(texts(shown("T", message))[1]).toBe("&amp;".repeat(399) + "…")
  })

  it("US-12 a message of `<` up to the cap is never cut inside an escape", () => {
    for (const n of [398, 399, 400, 401]) {
      const message = cleanText("<".repeat(n), MESSAGE_MAX)
      const body = texts(shown("T", message))[1]
      expect(body).toBe(n <= MESSAGE_MAX ? "&lt;".repeat(n) : "&lt;".repeat(399) + "…")
      expect(RAW_MARKUP.test(body)).toBe(false)
    }
  })

  it.prop("US-11 whatever the message, the body argv has no raw `<`, `>` or unescaped `&`, and reads back as the message", [fc.string({ unit: fc.constantFrom("<", ">", "&", ";", "a", "\\", "amp", "lt;", "#x202E", " ", "é", "😀"), maxLength: 200 })], ([m]) => {
    const body = texts(shown("T", m))[1]
    expect(RAW_MARKUP.test(body)).toBe(false)
    expect(unescapeBody(body)).toBe(m)
  })
})

describe("bidi and C1 controls (issue 18 item 10, SPEC §10.2)", () => {
  it.each(BIDI.map((c) => [`U+${c.charCodeAt(0).toString(16).toUpperCase()}`, c]))("US-18 the bidi control %s is removed", (_, c) => {
    expect(cleanText(`ab${c}cd`, TITLE_MAX)).toBe("abcd")
    expect(cleanText(`a ${c} b`, TITLE_MAX)).toBe("a b")
    expect(cleanText(` ${c} x ${c} `, TITLE_MAX)).toBe("x")
  })

  it.each(C1.map((c) => [`U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`, c]))("US-18 the C1 control %s becomes a space, like a C0 control", (_, c) => {
    expect(cleanText(`a${c}b`, TITLE_MAX)).toBe("a b")
    expect(cleanText(`a ${c}\t${c} b`, TITLE_MAX)).toBe("a b")
    expect(cleanText(`${c}${c}`, TITLE_MAX)).toBe("")
  })

  it("US-18 `evil\\u202Etxt.exe` and a NEL (U+0085) leave title and body of a notification and of a received payload", () => {
    const n = notificationFor("error", { sessionTitle: "evil\u202etxt.exe\u0085here", errorMessage: "a\u202eb\u0085c" }, false)
    expect([n.title, n.message]).toEqual(["opencode — eviltxt.exe here", "Failed: ab c"])
    const r = decodePayload(["ocpool-notify/1", "show", "", "evil\u202etxt.exe\u0085here", "a\u202eb\u0085c\u2066d\u2069", "normal", "emblem-default", "done"].join("\n"))
    expect(r).toMatchObject({ _tag: "Show", title: "eviltxt.exe here", message: "ab cd" })
    const u = decodePayload("hello\u202e \u0085world")
    expect(u).toMatchObject({ _tag: "Unrecognised", message: "hello world" })
  })

  it("US-12 removed controls are not counted: 200 bidi controls and `x` fit a cap of 5", () => {
    expect(cleanText("\u202e".repeat(200) + "x", 5)).toBe("x")
    expect(cleanText("a\u202e".repeat(10), 5)).toBe("aaaa…")
  })

  it("US-18 a lone surrogate around a bidi control stays U+FFFD: removing the control never makes a pair", () => {
    expect(cleanText("\ud83d\u202e\ude00", TITLE_MAX)).toBe("\ufffd\ufffd")
  })

  it.prop(
    "US-18 no bidi or C1 control survives cleaning, and cleaning stays idempotent",
    [fc.string({ unit: fc.constantFrom(...BIDI, ...C1, "a", " ", "\t", "\n", "é", "😀", "\ud800", "<", "&"), maxLength: 300 }), fc.constantFrom(1, 5, TITLE_MAX, MESSAGE_MAX)],
    ([s, max]) => {
      const c = cleanText(s, max)
      expect(FORBIDDEN.test(c)).toBe(false)
      expect(cleanText(c, max)).toBe(c)
    }
  )
})

describe("the markup escape (src/core/notify/markup.ts)", () => {
  it("US-11 escapeBodyMarkup escapes exactly &, < and >; quotes and everything else are kept", () => {
    expect(escapeBodyMarkup(`<a href="x">'&'</a>`)).toBe(`&lt;a href="x"&gt;'&amp;'&lt;/a&gt;`)
    expect(escapeBodyMarkup("plain é 😀 \\")).toBe("plain é 😀 \\")
    expect(escapeBodyMarkup("")).toBe("")
  })

  it("US-11 notifySendBody is the escape plus notify-send's doubled backslashes, in either order the same", () => {
    expect(notifySendBody("\\<&>")).toBe("\\\\&lt;&amp;&gt;")
  })
})
