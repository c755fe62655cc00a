import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { notifySendArgs } from "../../../src/core/notify/channel.js"
import { MESSAGE_MAX, PAYLOAD_MAX_BYTES, TITLE_MAX } from "../../../src/core/notify/limits.js"
import { decodePayload, encodeClose, encodeShow, keyOf, PAYLOAD_HEADER, truncateUtf8, UNRECOGNISED_TITLE, utf8Length } from "../../../src/core/notify/payload.js"
import { ICONS, SOUNDS, URGENCIES } from "../../../src/core/notify/sound.js"
import { cleanText } from "../../../src/core/notify/text.js"

const KEY = /^[A-Za-z0-9._:@-]{1,128}$/
const payload = (...lines: ReadonlyArray<string>) => lines.join("\n")
const show = (title: string, message: string, urgency = "normal", icon = "emblem-default", sound = "done", key = "box:ses_1") =>
  payload(PAYLOAD_HEADER, "show", key, title, message, urgency, icon, sound)

describe("the hop payload encoder (SPEC §10.6)", () => {
  it("US-13 a show payload is the eight lines: header, op, key, title, message, urgency, icon, sound", () => {
    expect(encodeShow("box:ses_1", { title: "opencode — Fix login", message: "Finished — waiting for your review [box]", urgency: "normal", icon: "emblem-default", sound: "done" })).toBe(
      "ocpool-notify/1\nshow\nbox:ses_1\nopencode — Fix login\nFinished — waiting for your review [box]\nnormal\nemblem-default\ndone"
    )
  })

  it("US-18 the sender cleans every field, so none holds a newline", () => {
    const p = encodeShow("bad key\nwith newline", { title: "a\nb", message: "c\r\nd\u0000e", urgency: "low\n--x" as never, icon: "x\ny" as never, sound: "done\nrm" as never })
    expect(p.split("\n")).toEqual([PAYLOAD_HEADER, "show", "", "a b", "c d e", "normal", "utilities-terminal", "none"])
  })

  it("US-30 a close payload is the header, `close` and the key", () => {
    expect(encodeClose("box:ses_1")).toBe("ocpool-notify/1\nclose\nbox:ses_1")
    expect(decodePayload(encodeClose("box:ses_1"))).toEqual({ _tag: "Close", key: "box:ses_1" })
  })
})

describe("the receiver's decoding (SPEC §10.6)", () => {
  it("US-13 a valid payload decodes to the same title, message, urgency, icon and sound", () => {
    expect(decodePayload(show("opencode — Fix login", "Question: Ship it? [box]", "critical", "dialog-error", "error"))).toEqual({
      _tag: "Show",
      key: "box:ses_1",
      title: "opencode — Fix login",
      message: "Question: Ship it? [box]",
      urgency: "critical",
      icon: "dialog-error",
      sound: "error"
    })
  })

  it.each(["ocpool-notify/2", "OCPOOL-NOTIFY/1", "ocpool-notify/1x", "ocpool-notify", ""])("US-18 a header line %j is not understood", (header) => {
    const r = decodePayload(payload(header, "show", "k", "T", "M", "normal", "emblem-default", "done"))
    expect(r._tag).toBe("Unrecognised")
  })

  it("US-18 the header line is compared after trimming", () => {
    expect(decodePayload(payload("  ocpool-notify/1 \r", "show", "k", "T", "M", "normal", "emblem-default", "done"))._tag).toBe("Show")
  })

  it.each(["show", "SHOW", " Show ", "close", "CLOSE", "\tClose\r"])("US-18 the op %j is read trimmed and case-insensitively", (op) => {
    const r = decodePayload(payload(PAYLOAD_HEADER, op, "k", "T", "M", "normal", "emblem-default", "done"))
    expect(r._tag).toBe(op.trim().toLowerCase() === "show" ? "Show" : "Close")
  })

  it.each(["open", "", "show now", "delete"])("US-18 a bad op %j makes the payload unrecognised", (op) => {
    expect(decodePayload(payload(PAYLOAD_HEADER, op, "k", "T", "M"))._tag).toBe("Unrecognised")
  })

  it("US-18 lines 6–8 are trimmed, case-insensitive, and passed on lower-cased", () => {
    const r = decodePayload(show("T", "M", "  CRITICAL ", " Dialog-Warning\t", "PERMISSION "))
    expect(r).toMatchObject({ _tag: "Show", urgency: "critical", icon: "dialog-warning", sound: "permission" })
  })

  it("US-18 urgency `low --icon=dialog-error`, icon `../x` and sound `beep` fall back to normal, utilities-terminal and none (no hint)", () => {
    const r = decodePayload(show("T", "M", "low --icon=dialog-error", "../x", "beep"))
    expect(r).toMatchObject({ _tag: "Show", urgency: "normal", icon: "utilities-terminal", sound: "none" })
    if (r._tag !== "Show") throw new Error("not shown")
    const argv = notifySendArgs(r, false)
    expect(argv).toContain("--urgency=normal")
    expect(argv).toContain("--icon=utilities-terminal")
    expect(argv.some((a) => a.includes("sound-name"))).toBe(false)
  })

  it("US-18 missing lines 6–8 take the defaults; an empty title becomes `opencode`", () => {
    expect(decodePayload(payload(PAYLOAD_HEADER, "show", "k", "", "M"))).toEqual({ _tag: "Show", key: "k", title: "opencode", message: "M", urgency: "normal", icon: "utilities-terminal", sound: "none" })
    expect(decodePayload(payload(PAYLOAD_HEADER, "show"))).toEqual({ _tag: "Show", key: "", title: "opencode", message: "", urgency: "normal", icon: "utilities-terminal", sound: "none" })
  })

  it("US-18 a payload of 10 lines: lines 9 and 10 are ignored", () => {
    const r = decodePayload(show("T", "M", "low", "system-run", "question") + "\n--icon=evil\n$(touch M)")
    expect(r).toEqual({ _tag: "Show", key: "box:ses_1", title: "T", message: "M", urgency: "low", icon: "system-run", sound: "question" })
  })

  it("US-18 `hello world` is unrecognised: titled `opencode-pool: unrecognised message`, showing `hello world`", () => {
    expect(decodePayload("hello world")).toEqual({ _tag: "Unrecognised", title: UNRECOGNISED_TITLE, message: "hello world", bytes: 11 })
    expect(UNRECOGNISED_TITLE).toBe("opencode-pool: unrecognised message")
  })

  it("US-18 an unrecognised payload shows its cleaned, capped text and reports the bytes that arrived", () => {
    const raw = "line one\nline\ttwo\u0007 " + "é".repeat(5000)
    const r = decodePayload(raw)
    if (r._tag !== "Unrecognised") throw new Error(r._tag)
    expect(r.bytes).toBe(utf8Length(raw))
    expect(r.message.startsWith("line one line two é")).toBe(true)
    expect(Array.from(r.message).length).toBe(MESSAGE_MAX)
  })

  it("US-18 a title with TAB and BEL arrives with spaces", () => {
    expect(decodePayload(show("Title\twith\u0007bell", "M"))).toMatchObject({ title: "Title with bell" })
  })

  it("US-18 a title `Title $(touch M)` and a message with backquotes arrive unchanged", () => {
    expect(decodePayload(encodeShow("k", { title: "Title $(touch M)", message: "Body; touch M && `touch M`", urgency: "normal", icon: "dialog-information", sound: "none" }))).toMatchObject({
      title: "Title $(touch M)",
      message: "Body; touch M && `touch M`"
    })
  })

  it.each([undefined, "", " ", "\n\n\t \r\n"])("US-18 an empty, whitespace-only or unset payload (%j) is Empty", (raw) => {
    expect(decodePayload(raw)).toEqual({ _tag: "Empty" })
  })

  it("US-18 the key must match its pattern, else it is empty (no fade tracking)", () => {
    expect(decodePayload(show("T", "M", "normal", "emblem-default", "done", "host.lan:ses_ABC-1@x"))).toMatchObject({ key: "host.lan:ses_ABC-1@x" })
    for (const bad of ["a b", "a/b", "$(id)", "k".repeat(129), "ключ", ""]) {
      expect(decodePayload(show("T", "M", "normal", "emblem-default", "done", bad))).toMatchObject({ key: "" })
    }
    expect(keyOf("k".repeat(128))).toBe("k".repeat(128))
  })

  it("US-30 a close payload reads only lines 1–3", () => {
    expect(decodePayload(payload(PAYLOAD_HEADER, "close", "box:ses_1", "garbage", "\u0000", "evil", "x", "y", "z"))).toEqual({ _tag: "Close", key: "box:ses_1" })
    expect(decodePayload(payload(PAYLOAD_HEADER, "close", "bad key"))).toEqual({ _tag: "Close", key: "" })
    expect(decodePayload(payload(PAYLOAD_HEADER, "close"))).toEqual({ _tag: "Close", key: "" })
  })

  it("US-18 a payload longer than PAYLOAD_MAX_BYTES is truncated before parsing", () => {
    const r = decodePayload(show("T", "m".repeat(10_000)))
    expect(r).toMatchObject({ _tag: "Show", title: "T", message: "m".repeat(MESSAGE_MAX - 1) + "…", urgency: "normal", icon: "utilities-terminal", sound: "none" })
    // the truncation falls inside line 4: lines 5–8 never arrive
    const r2 = decodePayload(payload(PAYLOAD_HEADER, "show", "k", "t".repeat(PAYLOAD_MAX_BYTES), "M", "critical", "dialog-error", "error"))
    expect(r2).toMatchObject({ _tag: "Show", message: "", urgency: "normal", icon: "utilities-terminal", sound: "none" })
  })
})

describe("UTF-8 truncation", () => {
  it("US-18 truncation stops at a character boundary", () => {
    expect(truncateUtf8("aé", 2)).toBe("a")
    expect(truncateUtf8("a😀", 4)).toBe("a")
    expect(truncateUtf8("a😀", 5)).toBe("a😀")
    expect(truncateUtf8("€€", 5)).toBe("€")
    expect(truncateUtf8("😀", 3)).toBe("")
    expect(utf8Length(truncateUtf8("é".repeat(3000), PAYLOAD_MAX_BYTES))).toBe(PAYLOAD_MAX_BYTES)
    expect(utf8Length(truncateUtf8("€".repeat(3000), PAYLOAD_MAX_BYTES))).toBe(PAYLOAD_MAX_BYTES - 1)
  })

  it.prop(
    "US-18 truncateUtf8 keeps at most max bytes, is a prefix of the input, and never ends in a broken character",
    [fc.oneof(fc.string({ unit: "grapheme", maxLength: 2000 }), fc.string({ unit: fc.constantFrom("a", "é", "€", "😀", "\n"), maxLength: 3000 })), fc.integer({ min: 0, max: 6000 })],
    ([s, max]) => {
      const t = truncateUtf8(s, max)
      expect(utf8Length(t)).toBeLessThanOrEqual(max)
      expect(s.startsWith(t)).toBe(true)
      expect(t).not.toMatch(/[\ud800-\udbff]$/)
      expect(t).not.toContain("\ufffd")
      // the longest such prefix: the next whole character would not fit
      if (t.length < s.length) expect(utf8Length(s.slice(0, t.length + (s.codePointAt(t.length)! > 0xffff ? 2 : 1)))).toBeGreaterThan(max)
    }
  )
})

describe("round trip (SPEC §10.6)", () => {
  const text = fc.oneof(fc.string({ maxLength: 600 }), fc.string({ unit: "binary", maxLength: 600 }), fc.string({ unit: fc.constantFrom("a", " ", "\t", "\n", "\r", "\u0007", "😀", "é", "…"), maxLength: 700 }))
  const choice = <T extends string>(xs: ReadonlyArray<T>) => fc.oneof(fc.constantFrom(...xs), fc.constantFrom(...xs).map((x) => ` ${x.toUpperCase()} `), fc.string({ maxLength: 20 }))
  const key = fc.oneof(fc.stringMatching(KEY), fc.string({ maxLength: 140 }), fc.stringMatching(/^[A-Za-z0-9._:@-]{129,140}$/))

  it.prop(
    "US-13 decode(encode(x)) is x cleaned, capped and whitelisted; an invalid key arrives empty",
    [key, text, text, choice(URGENCIES), choice(ICONS), choice(SOUNDS)],
    ([k, title, message, urgency, icon, sound]) => {
      const raw = encodeShow(k, { title, message, urgency: urgency as never, icon: icon as never, sound: sound as never })
      expect(utf8Length(raw)).toBeLessThanOrEqual(PAYLOAD_MAX_BYTES)
      expect(raw.split("\n")).toHaveLength(8)
      const pick = <T extends string>(xs: ReadonlyArray<T>, v: string, d: T) => (xs as ReadonlyArray<string>).includes(v.trim().toLowerCase()) ? v.trim().toLowerCase() : d
      const cleanTitle = cleanText(title, TITLE_MAX)
      expect(decodePayload(raw)).toEqual({
        _tag: "Show",
        key: KEY.test(k.trim()) ? k.trim() : "",
        title: cleanTitle === "" ? "opencode" : cleanTitle,
        message: cleanText(message, MESSAGE_MAX),
        urgency: pick(URGENCIES, urgency, "normal"),
        icon: pick(ICONS, icon, "utilities-terminal"),
        sound: pick(SOUNDS, sound, "none")
      })
    }
  )

  it.prop("US-18 decoding never throws, and whatever arrives decodes to whitelisted values and clean texts", [fc.oneof(fc.string({ unit: "binary", maxLength: 5000 }), text.map((t) => `${PAYLOAD_HEADER}\nshow\n${t}`))], ([raw]) => {
    const r = decodePayload(raw)
    if (r._tag === "Show") {
      expect(URGENCIES).toContain(r.urgency)
      expect(ICONS).toContain(r.icon)
      expect(SOUNDS).toContain(r.sound)
      expect(r.key === "" || KEY.test(r.key)).toBe(true)
      expect(r.title).not.toMatch(/[\u0000-\u001f\u007f]/)
      expect(r.message).not.toMatch(/[\u0000-\u001f\u007f]/)
      expect(Array.from(r.title).length).toBeLessThanOrEqual(TITLE_MAX)
      expect(Array.from(r.message).length).toBeLessThanOrEqual(MESSAGE_MAX)
    }
    if (r._tag === "Unrecognised") expect(r.message).toBe(cleanText(truncateUtf8(raw, PAYLOAD_MAX_BYTES), MESSAGE_MAX))
  })
})
