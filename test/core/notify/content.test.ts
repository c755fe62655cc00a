import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { headlineOf, notificationFor, shortHostname, titleFor, withHostSuffix } from "../../../src/core/notify/content.js"
import { HEADLINE_MAX, MESSAGE_MAX, TITLE_MAX } from "../../../src/core/notify/limits.js"

const codePoints = (s: string): number => Array.from(s).length

describe("titles (SPEC §10.2)", () => {
  it("US-11 the title is `opencode — <session title>`", () => {
    expect(titleFor("Fix login")).toBe("opencode — Fix login")
  })

  it.each([undefined, "", "   ", "\t\n"])("US-11 an empty session title %j gives `opencode — session`", (t) => {
    expect(titleFor(t)).toBe("opencode — session")
  })

  it("US-11 the session title is cleaned, and the whole title is capped at TITLE_MAX code points", () => {
    expect(titleFor("  Fix\tlogin\n page ")).toBe("opencode — Fix login page")
    const long = titleFor("t".repeat(200))
    expect(codePoints(long)).toBe(TITLE_MAX)
    expect(long).toBe(`opencode — ${"t".repeat(TITLE_MAX - 12)}…`)
  })
})

describe("content per kind (SPEC §10.2)", () => {
  it("US-11 done: `Finished — waiting for your review`, normal, emblem-default, sound done", () => {
    expect(notificationFor("done", { sessionTitle: "Fix login" }, true)).toEqual({
      kind: "done",
      title: "opencode — Fix login",
      message: "Finished — waiting for your review",
      urgency: "normal",
      icon: "emblem-default",
      sound: "done"
    })
  })

  it("US-12 question: `Question: <headline>`, normal, dialog-information, sound question", () => {
    expect(notificationFor("question", { sessionTitle: "Fix login", headline: "Should the migration be reversible?" }, true)).toEqual({
      kind: "question",
      title: "opencode — Fix login",
      message: "Question: Should the migration be reversible?",
      urgency: "normal",
      icon: "dialog-information",
      sound: "question"
    })
  })

  it.each([undefined, "", "   "])("US-12 a question without a headline (%j) reads exactly `Question waiting for your answer`", (headline) => {
    expect(notificationFor("question", { headline }, true).message).toBe("Question waiting for your answer")
  })

  it("US-12 permission: `Permission needed: <permission> (<pattern>)`, normal, dialog-warning, sound permission", () => {
    expect(notificationFor("permission", { sessionTitle: "Fix login", permission: "bash", pattern: "rm -rf build/*" }, true)).toEqual({
      kind: "permission",
      title: "opencode — Fix login",
      message: "Permission needed: bash (rm -rf build/*)",
      urgency: "normal",
      icon: "dialog-warning",
      sound: "permission"
    })
  })

  it("US-11 error: `Failed: <first line of the message>`, critical, dialog-error, sound error", () => {
    expect(notificationFor("error", { sessionTitle: "Fix login", errorMessage: "Rate limit exceeded\n  at stack line\nmore" }, true)).toEqual({
      kind: "error",
      title: "opencode — Fix login",
      message: "Failed: Rate limit exceeded",
      urgency: "critical",
      icon: "dialog-error",
      sound: "error"
    })
  })

  it.each([undefined, "", "  \n  "])("US-11 an error without a message (%j) reads exactly `Failed`", (errorMessage) => {
    expect(notificationFor("error", { errorMessage }, true).message).toBe("Failed")
  })

  it("US-11 the error's first line is cleaned and the message capped at MESSAGE_MAX", () => {
    expect(notificationFor("error", { errorMessage: "  bad\tthing\u0007 happened\r\nsecond" }, true).message).toBe("Failed: bad thing happened")
    const m = notificationFor("error", { errorMessage: "e".repeat(1000) }, true).message
    expect(codePoints(m)).toBe(MESSAGE_MAX)
    expect(m.endsWith("…")).toBe(true)
    expect(m.startsWith("Failed: eee")).toBe(true)
  })

  it("US-29 with sounds off every kind's sound is `none`; the rest is unchanged", () => {
    for (const kind of ["done", "question", "permission", "error"] as const) {
      const on = notificationFor(kind, { sessionTitle: "T", headline: "h", permission: "p", pattern: "x", errorMessage: "e" }, true)
      const off = notificationFor(kind, { sessionTitle: "T", headline: "h", permission: "p", pattern: "x", errorMessage: "e" }, false)
      expect(on.sound).toBe(kind)
      expect(off).toEqual({ ...on, sound: "none" })
    }
  })
})

describe("question headlines (US-12)", () => {
  it("US-12 the headline is the first question whose text is not blank", () => {
    expect(headlineOf(["  ", "Second?"])).toBe("Second?")
    expect(headlineOf(["\t\n", "", "Third?", "Fourth?"])).toBe("Third?")
    expect(headlineOf(["First?", "Second?"])).toBe("First?")
  })

  it("US-12 no question or only blank ones give no headline, so the message is the fallback", () => {
    expect(headlineOf([])).toBeUndefined()
    expect(headlineOf(["", "  ", "\u0000"])).toBeUndefined()
    expect(notificationFor("question", { headline: headlineOf([]) }, true).message).toBe("Question waiting for your answer")
  })

  it("US-12 a 200-char question gives a 70-char headline ending in …", () => {
    const h = headlineOf(["w".repeat(200)])!
    expect(codePoints(h)).toBe(HEADLINE_MAX)
    expect(h).toBe("w".repeat(69) + "…")
    expect(notificationFor("question", { headline: h }, true).message).toBe(`Question: ${h}`)
  })

  it("US-12 the headline is cleaned: control characters and line breaks become single spaces", () => {
    expect(headlineOf(["  Should\n\nwe\tship?\u0007 "])).toBe("Should we ship?")
  })
})

describe("permission naming (US-12)", () => {
  it("US-12 the permission and its first pattern are named, cleaned", () => {
    expect(notificationFor("permission", { permission: "edit", pattern: "src/\n*.ts" }, true).message).toBe("Permission needed: edit (src/ *.ts)")
  })

  it("US-12 a permission without a pattern is named without the parentheses", () => {
    expect(notificationFor("permission", { permission: "webfetch" }, true).message).toBe("Permission needed: webfetch")
  })

  it.prop("US-12 every message stays within MESSAGE_MAX code points and the title within TITLE_MAX", [fc.string({ maxLength: 1200 }), fc.string({ maxLength: 1200 }), fc.string({ maxLength: 300 })], ([a, b, t]) => {
    for (const kind of ["done", "question", "permission", "error"] as const) {
      const n = notificationFor(kind, { sessionTitle: t, headline: a, permission: a, pattern: b, errorMessage: a }, true)
      expect(codePoints(n.message)).toBeLessThanOrEqual(MESSAGE_MAX)
      expect(codePoints(n.title)).toBeLessThanOrEqual(TITLE_MAX)
    }
  })
})

describe("the hop's host suffix (SPEC §10.2)", () => {
  it("US-13 ` [<short host>]` is appended to the message", () => {
    expect(withHostSuffix("Finished — waiting for your review", "build01")).toBe("Finished — waiting for your review [build01]")
    expect(shortHostname("build01.example.org")).toBe("build01")
    expect(shortHostname("build01")).toBe("build01")
  })

  it("US-13 a long message is cut so that the suffix still fits within MESSAGE_MAX", () => {
    const m = withHostSuffix("m".repeat(MESSAGE_MAX), "build01")
    expect(codePoints(m)).toBe(MESSAGE_MAX)
    expect(m.endsWith("… [build01]")).toBe(true)
    const emoji = withHostSuffix("😀".repeat(MESSAGE_MAX), "box")
    expect(codePoints(emoji)).toBe(MESSAGE_MAX)
    expect(emoji.endsWith("😀… [box]")).toBe(true)
  })

  it("US-13 an empty host adds nothing; a host is cleaned", () => {
    expect(withHostSuffix("hi", "")).toBe("hi")
    expect(withHostSuffix("hi", " a\tb ")).toBe("hi [a b]")
  })

  it.prop("US-13 the suffixed message never exceeds MESSAGE_MAX code points and always ends with the suffix", [fc.string({ maxLength: 600 }), fc.stringMatching(/^[a-z0-9-]{1,63}$/)], ([msg, host]) => {
    const message = notificationFor("error", { errorMessage: msg }, true).message
    const m = withHostSuffix(message, host)
    expect(codePoints(m)).toBeLessThanOrEqual(MESSAGE_MAX)
    expect(m.endsWith(` [${host}]`)).toBe(true)
  })
})
