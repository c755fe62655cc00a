/**
 * Fuzz family: notification texts (SPEC §10.2, §10.3, §10.5; US-11, US-12, US-18, US-29). Hostile session
 * titles, question texts, permission names and patterns and error messages (shell syntax, flags, quotes,
 * controls, CR/LF, lone surrogates, body markup, bidi and C1 controls, oversize texts, non-strings,
 * throwing getters) go through opencode's bus events: `notifyInputs(event)` → `notifyStep` →
 * `notifySendArgs` / `osascriptArgs`, and for a sample through `makeDesktopNotifier` with stub
 * `notify-send` and `osascript` programs that record their argv.
 *
 * The expected notification comes from an oracle written here from §10.2 (cleaning, caps in code
 * points, the message of each kind) and the plugin's documented cut of event texts at 4096 UTF-16 units
 * (notifyEvents.ts); the expected argv from the table of §10.5. Title and message are one argv entry
 * each, after the only `--` for notify-send, never holding a control character or a line break; the
 * osascript script entries are the fixed ones whatever the texts; nothing runs.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import fc from "fast-check"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { notifySendArgs, osascriptArgs } from "../../src/core/notify/channel.js"
import type { Notification, NotifyKind } from "../../src/core/notify/content.js"
import { initialNotifyState, notifyStep, type NotifyEffect, type NotifyState } from "../../src/core/notify/machine.js"
import { decodePayload, encodeShow } from "../../src/core/notify/payload.js"
import type { Icon, Sound, Urgency } from "../../src/core/notify/sound.js"
import { makeDesktopNotifier } from "../../src/layers/notify/NotifierDesktop.js"
import { notifyInputs } from "../../src/plugin/notifyEvents.js"
import { throwingGetters } from "../plugin/hostile.js"
import { FUZZ_RUNS, fuzzParams, fuzzTimeout, hostileString } from "./common.js"
import { clean, FORBIDDEN_IN_POPUP, notifySendBody, points, RAW_MARKUP, readBody, text, WHITESPACE } from "./textOracle.js"

// ---------------------------------------------------------------------------------------------------
// The oracle: §10.2 written out again, on code points.

const TITLE_CAP = 90
const MESSAGE_CAP = 400
const HEADLINE_CAP = 70
/** The plugin keeps this many UTF-16 units of an event's text before cleaning (notifyEvents.ts SHOWN_MAX). */
const EVENT_TEXT_CUT = 4096
const QUESTIONS_READ = 16


const capPoints = (s: string, max: number): string => {
  const ps = points(s)
  return ps.length > max ? text([...ps.slice(0, max - 1), 0x2026]) : s
}


/** The first line: leading whitespace skipped, then up to the first CR or LF. */
const firstLine = (s: string): string => {
  const ps = points(s)
  let a = 0
  while (a < ps.length && WHITESPACE.has(ps[a]!)) a++
  let b = a
  while (b < ps.length && ps[b] !== 0x0a && ps[b] !== 0x0d) b++
  return text(ps.slice(a, b))
}

const STYLE: Record<NotifyKind, { readonly urgency: Urgency; readonly icon: Icon }> = {
  done: { urgency: "normal", icon: "emblem-default" },
  question: { urgency: "normal", icon: "dialog-information" },
  permission: { urgency: "normal", icon: "dialog-warning" },
  error: { urgency: "critical", icon: "dialog-error" }
}
const LINUX_HINT: Record<Sound, string | undefined> = { none: undefined, done: "complete", question: "message-new-instant", permission: "dialog-warning", error: "dialog-error" }
const MAC_NAME: Record<Sound, string | undefined> = { none: undefined, done: "Glass", question: "Ping", permission: "Hero", error: "Basso" }

// ---------------------------------------------------------------------------------------------------
// The cases: a value where opencode puts a text, drawn as plain data and built into an event.

type Val =
  | { readonly k: "str"; readonly s: string }
  | { readonly k: "absent" }
  | { readonly k: "other"; readonly v: number | boolean | null | Record<string, never> | ReadonlyArray<never> }
  /** The property's getter throws. */
  | { readonly k: "throws" }

/** The text the plugin reads from a value: a string cut to EVENT_TEXT_CUT units, else nothing. */
const textOf = (v: Val): string | undefined => (v.k === "str" ? (v.s.length > EVENT_TEXT_CUT ? v.s.slice(0, EVENT_TEXT_CUT) : v.s) : undefined)

/** `base` with `key` holding `v` (absent, a value, or a throwing getter). */
const put = (base: Record<string, unknown>, key: string, v: Val): Record<string, unknown> => {
  switch (v.k) {
    case "absent":
      return base
    case "str":
      return { ...base, [key]: v.s }
    case "other":
      return { ...base, [key]: v.v }
    case "throws":
      return throwingGetters({ ...base, [key]: undefined }, [key])
  }
}

const base = mkdtempSync(join(tmpdir(), "ocpool-fuzz-texts-"))
const CANARY = join(base, "CANARY")
const REL_CANARY = "ocpool-fuzz-texts-canary"

const INJECTIONS = [
  `$(touch ${CANARY})`,
  `\`touch ${CANARY}\``,
  `; touch ${CANARY}`,
  `&& touch ${CANARY}`,
  `| touch ${CANARY}`,
  `' ; touch ${CANARY}; '`,
  `" ; touch ${CANARY}; "`,
  `\ntouch ${CANARY}\n`,
  `$(touch ${REL_CANARY})`,
  `\`touch ${REL_CANARY}\``,
  `" & do shell script "touch ${CANARY}" & "`,
  `\\" & do shell script \\"touch ${CANARY}\\" & \\"`,
  `end run\non run argv\ndo shell script "touch ${CANARY}"`,
  `%s%n%x`
]
const FLAGS = ["--print-id", "-u critical", "--urgency=critical", "--", "-", "--app-name=evil", "--hint=string:sound-name:../../x", "-t 0", "--icon=/etc/passwd", "-e", "on run argv"]
const ODD = ["\r", "\n", "\r\n", "one\rtwo", "one\r\ntwo", "one\ntwo", "\t", "\u0007", "\u001b[31m", "\u001b]0;x\u0007", "\u007f", "\u0000", "\u0085", "\u2028", "\u2029", "\u00a0", "\ufeff", "\ud800", "\udc00", "\udbff\udfff", "😀", "é", "…", "\\", "\\n", "\\101", "'", '"', " ", "   ", "<b>x</b>", "&amp;", "(@context subagent)", "(@context-2 subagent)", "MessageAbortedError"]
/** Body markup a daemon would render, entities, and the bidi and C1 controls (issue 18 item 10). */
const MARKUP = [
  "<a href=file:///etc/passwd>x</a>",
  '<a href="https://evil.example/?a=1&b=2">click</a>',
  "<img src=http://tracker.example/p.png>",
  "<img src='file:///home/u/.ssh/id_ed25519'/>",
  "<i>", "</u>", "<", ">", "&", "&&", "&amp;", "&lt;b&gt;", "&#x202E;", "&#8238;", "&nbsp;", "<![CDATA[x]]>", "<!-- x -->", "\\<b>", "\\&", "a<b", "1 > 0",
  "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069", "evil\u202etxt.exe", "\u2067\u05d0\u2069",
  "\u0080", "\u0085", "\u008d", "\u009b[31m", "\u009f", "\u00c2\u0093q\u00c2\u0094"
]

const fragment: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 2, arbitrary: fc.fullUnicodeString({ maxLength: 8 }) },
  { weight: 3, arbitrary: fc.constantFrom(...INJECTIONS) },
  { weight: 2, arbitrary: fc.constantFrom(...FLAGS) },
  { weight: 3, arbitrary: fc.constantFrom(...ODD) },
  { weight: 2, arbitrary: fc.constantFrom(...MARKUP) }
)
/** Long texts: around the caps, past the plugin's cut (where a pair may be split), blank up to the cut. */
const long: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(fc.constantFrom("x", "é", "😀", " ", "\n", "ab "), fc.oneof(fc.constantFrom(69, 70, 71, 89, 90, 91, 399, 400, 401), fc.integer({ min: 60, max: 5_000 }))).map(([c, n]) => c.repeat(n)),
  fc.tuple(fc.constantFrom(" ", "\n", "x"), fc.integer({ min: 4_090, max: 4_100 }), fc.constantFrom("😀", "X", "\n", "")).map(([c, n, tail]) => c.repeat(n) + tail)
)
const hostileText: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.array(fragment, { maxLength: 8 }).map((f) => f.join("")) },
  { weight: 1, arbitrary: long },
  { weight: 1, arbitrary: hostileString.filter((s) => s.length < 10_000) }
)
const val: fc.Arbitrary<Val> = fc.oneof(
  { weight: 12, arbitrary: hostileText.map((s): Val => ({ k: "str", s })) },
  { weight: 1, arbitrary: fc.constant<Val>({ k: "absent" }) },
  { weight: 1, arbitrary: fc.constantFrom<Val>({ k: "other", v: 42 }, { k: "other", v: true }, { k: "other", v: null }, { k: "other", v: {} }, { k: "other", v: [] }) },
  { weight: 1, arbitrary: fc.constant<Val>({ k: "throws" }) }
)

/** A text of several lines (an error's first line is what is shown). */
const multiline: fc.Arbitrary<Val> = fc
  .tuple(fc.array(hostileText, { minLength: 2, maxLength: 4 }), fc.constantFrom("\n", "\r", "\r\n", "\n\r"), fc.constantFrom("", " ", "\n", "\r\n  "))
  .map(([lines, eol, lead]): Val => ({ k: "str", s: lead + lines.join(eol) }))
const messageVal: fc.Arbitrary<Val> = fc.oneof({ weight: 2, arbitrary: val }, { weight: 1, arbitrary: multiline })

interface TextCase {
  readonly kind: NotifyKind
  readonly title: Val
  /** question: the questions (an item that is not an object is skipped). */
  readonly questions: ReadonlyArray<Val | "notAnObject">
  readonly permission: Val
  /** permission: the patterns, or a value that is not an array. */
  readonly patterns: ReadonlyArray<Val> | "notAnArray"
  /** error: its name, `data.message` and `message`. */
  readonly errorName: string
  readonly dataMessage: Val
  readonly message: Val
  /** question and permission: asked in a child of the root. */
  readonly inChild: boolean
  readonly sounds: boolean
  readonly fade: boolean
}

const textCase: fc.Arbitrary<TextCase> = fc.record({
  kind: fc.constantFrom<NotifyKind>("done", "question", "permission", "error"),
  title: val,
  questions: fc.array(fc.oneof({ weight: 8, arbitrary: val }, { weight: 1, arbitrary: fc.constant("notAnObject" as const) }), { maxLength: 20 }),
  permission: val,
  patterns: fc.oneof({ weight: 8, arbitrary: fc.array(val, { maxLength: 3 }) }, { weight: 1, arbitrary: fc.constant("notAnArray" as const) }),
  errorName: fc.constantFrom("APIError", "UnknownError", "MessageAbortedError", "", "$(touch x)"),
  dataMessage: fc.oneof({ weight: 1, arbitrary: messageVal }, { weight: 1, arbitrary: fc.constant<Val>({ k: "absent" }) }),
  message: messageVal,
  inChild: fc.boolean(),
  sounds: fc.boolean(),
  fade: fc.boolean()
})

/** The bus events of a case: the root (and a child) created, then what makes the kind. */
const eventsOf = (c: TextCase): Array<unknown> => {
  const created = (info: Record<string, unknown>) => ({ type: "session.created", properties: { info } })
  const asker = c.inChild ? "kid" : "root"
  const events: Array<unknown> = [created(put({ id: "root" }, "title", c.title)), created({ id: "kid", parentID: "root", title: "child" })]
  switch (c.kind) {
    case "done":
      events.push({ type: "session.status", properties: { sessionID: "root", status: { type: "busy" } } }, { type: "session.idle", properties: { sessionID: "root" } })
      break
    case "question":
      events.push({
        type: "question.asked",
        properties: { sessionID: asker, id: "q1", questions: c.questions.map((q) => (q === "notAnObject" ? "not an object" : put({ header: "h" }, "question", q))) }
      })
      break
    case "permission": {
      const patterns = c.patterns === "notAnArray" ? "*" : c.patterns.map((p) => (p.k === "str" ? p.s : p.k === "other" ? p.v : undefined))
      events.push({ type: "permission.asked", properties: put({ sessionID: asker, id: "p1", patterns }, "permission", c.permission) })
      break
    }
    case "error":
      events.push({
        type: "session.error",
        properties: { sessionID: "root", error: put({ name: c.errorName, data: put({}, "message", c.dataMessage) }, "message", c.message) }
      })
      break
  }
  return events
}

/** What §10.1 and §10.2 say is sent for a case: one notification, or none (a context-agent title, an aborted run). */
const expected = (c: TextCase): Notification | undefined => {
  const t = textOf(c.title)
  if (t !== undefined && /\(@context(-\d+)? subagent\)/.test(t)) return undefined
  if (c.kind === "error" && c.errorName === "MessageAbortedError") return undefined
  const shown = clean(t ?? "", TITLE_CAP)
  const title = capPoints(`opencode — ${shown === "" ? "session" : shown}`, TITLE_CAP)
  let message: string
  switch (c.kind) {
    case "done":
      message = "Finished — waiting for your review"
      break
    case "question": {
      const texts = c.questions.slice(0, QUESTIONS_READ).flatMap((q) => (q === "notAnObject" ? [] : [textOf(q)].filter((x): x is string => x !== undefined)))
      const headline = texts.map((x) => clean(x, HEADLINE_CAP)).find((h) => h !== "")
      if (headline !== undefined) expect(points(headline).length).toBeLessThanOrEqual(HEADLINE_CAP)
      message = headline === undefined ? "Question waiting for your answer" : `Question: ${headline}`
      break
    }
    case "permission": {
      const name = clean(textOf(c.permission) ?? "", MESSAGE_CAP)
      const first = c.patterns === "notAnArray" ? undefined : c.patterns[0]
      const pattern = clean(first === undefined ? "" : (textOf(first) ?? ""), MESSAGE_CAP)
      message = `Permission needed: ${name === "" ? "a tool" : name}${pattern === "" ? "" : ` (${pattern})`}`
      break
    }
    case "error": {
      const line = clean(firstLine(textOf(c.dataMessage) ?? textOf(c.message) ?? ""), MESSAGE_CAP)
      message = line === "" ? "Failed" : `Failed: ${line}`
      break
    }
  }
  const sound: Sound = c.sounds ? c.kind : "none"
  return { kind: c.kind, title, message: capPoints(message, MESSAGE_CAP), urgency: STYLE[c.kind].urgency, icon: STYLE[c.kind].icon, sound }
}

/** The sends of a case's events, handled in order from the initial state. */
const sendsOf = (c: TextCase): Array<Notification> => {
  let state: NotifyState = initialNotifyState
  const effects: Array<NotifyEffect> = []
  let now = 1_000_000
  for (const event of eventsOf(c)) {
    for (const input of notifyInputs(event)) {
      const step = notifyStep(state, input, (now += 10), { sounds: c.sounds, fade: c.fade })
      state = step.state
      effects.push(...step.effects)
    }
  }
  expect(effects.filter((e) => e.type === "lookup")).toEqual([])
  return effects.flatMap((e) => (e.type === "send" ? [e.notification] : []))
}

/** §10.5's notify-send argv, written out. */
const notifySendArgv = (n: Notification, printId: boolean): Array<string> => {
  const hint = LINUX_HINT[n.sound]
  return [
    "--app-name=opencode",
    `--urgency=${n.urgency}`,
    `--icon=${n.icon}`,
    ...(hint === undefined ? [] : [`--hint=string:sound-name:${hint}`]),
    ...(printId ? ["--print-id"] : []),
    "--",
    n.title,
    // the body's markup escaped (issue 18 item 10), and its backslashes doubled: notify-send reads C escapes in the body
    notifySendBody(n.message)
  ]
}

/** §10.5's osascript argv: a fixed script, the texts as `argv` items after it. */
const SCRIPT_WITH_SOUND = ["-e", "on run argv", "-e", "display notification (item 2 of argv) with title (item 1 of argv) sound name (item 3 of argv)", "-e", "end run"]
const SCRIPT_SILENT = ["-e", "on run argv", "-e", "display notification (item 2 of argv) with title (item 1 of argv)", "-e", "end run"]
const osascriptArgv = (n: Notification): Array<string> => {
  const name = MAC_NAME[n.sound]
  return name === undefined ? [...SCRIPT_SILENT, n.title, n.message] : [...SCRIPT_WITH_SOUND, n.title, n.message, name]
}

/** A control character (C0, DEL, C1), a line break or a bidi control. */
const UNSAFE = FORBIDDEN_IN_POPUP

const checkTexts = (n: Notification) => {
  expect(UNSAFE.test(n.title)).toBe(false)
  expect(UNSAFE.test(n.message)).toBe(false)
  expect(points(n.title).length).toBeLessThanOrEqual(TITLE_CAP)
  expect(points(n.message).length).toBeLessThanOrEqual(MESSAGE_CAP)
  expect(n.title).toBe(n.title.trim())
}

// ---------------------------------------------------------------------------------------------------
// The stub desktop for the sample through the notifier.

const bin = join(base, "bin")
mkdirSync(bin)
const log = join(base, "argv.log")
/** A /bin/sh program appending `$#` and its arguments, each followed by a NUL, to the log; notify-send prints 42 for `--print-id`. */
for (const name of ["notify-send", "osascript"]) {
  writeFileSync(
    join(bin, name),
    [
      "#!/bin/sh",
      `printf '%s\\0' "${name}" "$#" "$@" >> '${log}'`,
      name === "notify-send" ? `for a; do [ "$a" = -- ] && break; [ "$a" = --print-id ] && printf '42\\n'; done` : "",
      "exit 0",
      ""
    ].join("\n"),
    { mode: 0o755 }
  )
}
const recorded = (): Array<{ program: string; argv: Array<string> }> => {
  if (!existsSync(log)) return []
  const parts = readFileSync(log, "utf8").split("\0")
  const out: Array<{ program: string; argv: Array<string> }> = []
  for (let i = 0; i < parts.length - 1; ) {
    const n = Number(parts[i + 1])
    out.push({ program: parts[i]!, argv: parts.slice(i + 2, i + 2 + n) })
    i += 2 + n
  }
  return out
}
const canaryAppeared = (): boolean => existsSync(CANARY) || existsSync(join(process.cwd(), REL_CANARY)) || existsSync(join(base, REL_CANARY))

afterAll(() => rmSync(base, { recursive: true, force: true }))

/** Cases of the sample that start the stub programs. */
const DESKTOP_SAMPLE = Math.min(100, FUZZ_RUNS)

let sent = 0
let none = 0

describe("fuzz: notification texts", () => {
  it(
    "US-11 hostile titles, questions, permissions and errors reach the notify-send and osascript argv as one cleaned, capped entry each",
    () => {
      fc.assert(
        fc.property(textCase, fc.boolean(), (c, printId) => {
          const want = expected(c)
          const sends = sendsOf(c)
          if (want === undefined) {
            none++
            expect(sends).toEqual([])
            return
          }
          sent++
          expect(sends).toEqual([want])
          const n = sends[0]!
          checkTexts(n)

          const ns = [...notifySendArgs(n, printId)]
          expect(ns).toEqual(notifySendArgv(n, printId))
          // title and message: the two entries after the only `--`
          expect(ns.indexOf("--")).toBe(ns.length - 3)
          expect(ns.filter((a) => a === "--")).toHaveLength(1)
          for (const a of ns) expect(UNSAFE.test(a)).toBe(false)

          const os = [...osascriptArgs(n)]
          expect(os).toEqual(osascriptArgv(n))
          // the script entries are the fixed ones: no part of a text is ever in them
          expect(os.slice(0, 6)).toEqual(MAC_NAME[n.sound] === undefined ? SCRIPT_SILENT : SCRIPT_WITH_SOUND)
          for (const a of os) expect(UNSAFE.test(a)).toBe(false)
        }),
        fuzzParams()
      )
      expect(canaryAppeared()).toBe(false)
      // the generators reach both outcomes
      expect({ sent: sent > FUZZ_RUNS / 2, none: none > FUZZ_RUNS / 50 }).toEqual({ sent: true, none: true })
    },
    fuzzTimeout(5)
  )

  it(
    "US-29 every kind carries its sound hint on Linux and its sound name on macOS, or none when sounds are off",
    () => {
      fc.assert(
        fc.property(textCase, (c) => {
          const n = sendsOf(c)[0]
          if (n === undefined) return
          const hint = c.sounds ? { done: "complete", question: "message-new-instant", permission: "dialog-warning", error: "dialog-error" }[c.kind] : undefined
          expect(notifySendArgs(n, false).filter((a) => a.startsWith("--hint="))).toEqual(hint === undefined ? [] : [`--hint=string:sound-name:${hint}`])
          const name = c.sounds ? { done: "Glass", question: "Ping", permission: "Hero", error: "Basso" }[c.kind] : undefined
          expect(osascriptArgs(n).slice(8)).toEqual(name === undefined ? [] : [name])
        }),
        fuzzParams()
      )
    },
    fuzzTimeout(5)
  )

  it(
    "US-18 a notification's title and message cross the hop payload unchanged, whatever they hold",
    () => {
      fc.assert(
        fc.property(textCase, fc.oneof(fc.constant(""), fc.stringMatching(/^[A-Za-z0-9._:@-]{1,128}$/), hostileText), (c, key) => {
          const n = sendsOf(c)[0]
          if (n === undefined) return
          const got = decodePayload(encodeShow(key, n))
          expect(got._tag).toBe("Show")
          if (got._tag !== "Show") return
          expect({ title: got.title, message: got.message, urgency: got.urgency, icon: got.icon, sound: got.sound }).toEqual({
            title: n.title,
            message: n.message,
            urgency: n.urgency,
            icon: n.icon,
            sound: n.sound
          })
        }),
        fuzzParams()
      )
    },
    fuzzTimeout(5)
  )

  it(
    `US-11 through the desktop notifier (${DESKTOP_SAMPLE} cases): the stub programs receive exactly that argv, and nothing runs`,
    async () => {
      await fc.assert(
        fc.asyncProperty(textCase, fc.constantFrom("linux", "darwin"), fc.boolean(), async (c, platform, fade) => {
          rmSync(log, { force: true })
          const n = sendsOf(c)[0]
          if (n === undefined) return
          const d = await Effect.runPromise(makeDesktopNotifier({ platform, env: { PATH: bin }, fade }).send(n, "desk:root"))
          const linux = platform === "linux"
          expect(d).toEqual(linux ? { ok: true, channel: "notify-send", ...(fade ? { id: 42 } : {}) } : { ok: true, channel: "osascript" })
          expect(recorded()).toEqual([linux ? { program: "notify-send", argv: notifySendArgv(n, fade) } : { program: "osascript", argv: osascriptArgv(n) }])
          expect(canaryAppeared()).toBe(false)
        }),
        fuzzParams(DESKTOP_SAMPLE)
      )
    },
    fuzzTimeout(200, DESKTOP_SAMPLE)
  )
})

let withMarkup = 0
let withControls = 0

describe("fuzz: markup and bidi in notification texts (issue 18 item 10)", () => {
  it(
    "US-11 no bidi or C1 control survives into any argv or the hop payload; the notify-send body never holds a raw `<`, `>` or an unescaped `&`, and reads back as the message; the summary and osascript stay plain",
    () => {
      fc.assert(
        fc.property(textCase, fc.boolean(), (c, printId) => {
          const raw = [c.title, c.permission, c.dataMessage, c.message, ...c.questions, ...(c.patterns === "notAnArray" ? [] : c.patterns)].flatMap((v) => (typeof v === "object" && v.k === "str" ? [v.s] : []))
          if (raw.some((s) => /[\u0080-\u009f\u202a-\u202e\u2066-\u2069]/.test(s))) withControls++
          const n = sendsOf(c)[0]
          if (n === undefined) return
          if (/[<>&]/.test(n.message)) withMarkup++
          for (const t of [n.title, n.message]) expect(FORBIDDEN_IN_POPUP.test(t)).toBe(false)

          const ns = notifySendArgs(n, printId)
          for (const a of ns) expect(FORBIDDEN_IN_POPUP.test(a)).toBe(false)
          const [summary, body] = [ns.at(-2)!, ns.at(-1)!]
          expect(summary).toBe(n.title)
          expect(RAW_MARKUP.test(body)).toBe(false)
          expect(readBody(body)).toBe(n.message)

          const os = osascriptArgs(n)
          for (const a of os) expect(FORBIDDEN_IN_POPUP.test(a)).toBe(false)
          expect(os.slice(6, 8)).toEqual([n.title, n.message])

          // the hop payload carries the same cleaned texts, unescaped; the receiver's argv is the local one
          const payload = encodeShow("desk:root", n)
          expect(FORBIDDEN_IN_POPUP.test(payload.replaceAll("\n", " "))).toBe(false)
          expect(payload.split("\n").slice(3, 5)).toEqual([n.title, n.message])
          const got = decodePayload(payload)
          if (got._tag !== "Show") throw new Error(`not a show: ${got._tag}`)
          expect(notifySendArgs(got, printId).slice(-2)).toEqual([summary, body])
        }),
        fuzzParams()
      )
      // the generators reach markup in a message and the controls in an input
      expect({ withMarkup: withMarkup > FUZZ_RUNS / 20, withControls: withControls > FUZZ_RUNS / 20 }).toEqual({ withMarkup: true, withControls: true })
    },
    fuzzTimeout(5)
  )
})
