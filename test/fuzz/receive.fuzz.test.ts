/**
 * Fuzz family: `ocpool receive` (SPEC §10.6; US-18, US-29.4). Generated payloads (valid 8-line ones,
 * shell syntax, flag-looking values, quotes, CR, NUL, lone surrogates, invalid UTF-8 as an environment
 * would decode it, oversize fields, payloads past 4096 bytes, unknown versions, odd ops) go IN PROCESS
 * through `receive(env, "linux")`, with a stub `notify-send` (and `gdbus`) as the only programs on PATH.
 * The stubs are /bin/sh scripts that append their argv, NUL-separated, to a log.
 *
 * A case that starts the real stub costs about 20 ms on a loaded 2-core machine (10,000 of them: over
 * 3 minutes, the whole fuzz suite's budget): REAL_SPAWNS cases, spread over the run, start the real
 * stub; the others stop at `child_process.spawn`, where a fake child records the argv, checks
 * `shell: false` and answers as the stub would (the id for `--print-id`, the exit code `$STUB_EXIT`).
 *
 * The expectation is an oracle written here from the rules of §10.6 (whitelists, cleaning, caps in code
 * points, UTF-8 truncation at 4096 bytes), independent of `decodePayload`: the argv the stub received
 * must be exactly `notifySendArgs(<oracle fields>, <fade key?>)`, the outcome and stderr those of §10.6,
 * and a canary file any injected command would create never appears.
 *
 * The payloads also come as hop tokens (`ocpool-notify-b64/1.<base64url>`, docs/DECISIONS.md: the wire
 * form that a login shell cannot act on), well-formed, padded with whitespace, malformed (a bad
 * character, a bad length, stray tail bits, bytes that are not UTF-8, shell syntax) and around the
 * 16 KiB token cap; the oracle decodes them with Node's `Buffer`. A third family checks the token
 * itself: the sender's word is only `[A-Za-z0-9._/-]` and round-trips, hostile bytes never decode to
 * a payload, the length limits hold, and a real `/bin/sh -c <token>` (a host without the forced
 * command) runs nothing.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { vi } from "vitest"
import { Cause, Effect, Exit, Option } from "effect"
import fc from "fast-check"
import { spawnSync, type SpawnOptions } from "node:child_process"
import { EventEmitter } from "node:events"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { basename, join } from "node:path"
import { PassThrough } from "node:stream"
import { handleReceived, receive } from "../../src/cli/receive.js"
import { ExitWith } from "../../src/cli/notify.js"
import { closeArgs, notifySendArgs, sshArgs } from "../../src/core/notify/channel.js"
import { encodeHopToken, PROBE_ANSWER, readHopToken, shellAnswer } from "../../src/core/notify/hopToken.js"
import { decodePayload, encodeProbe, type Received } from "../../src/core/notify/payload.js"
import { decodePopups } from "../../src/core/notify/popups.js"
import type { Icon, Sound, Urgency } from "../../src/core/notify/sound.js"
import { breather, FUZZ_RUNS, fuzzParams, fuzzTimeout, hostileString } from "./common.js"
import { clean, points, text, WHITESPACE } from "./textOracle.js"
import { readArgvLog, recordArgvLine } from "../support/argvLog.js"

/** `child_process.spawn`, real while `spawnCtl.fake` is unset. */
const spawnCtl = vi.hoisted(() => ({ fake: undefined as undefined | ((file: string, args: ReadonlyArray<string>, options: unknown) => unknown) }))
vi.mock("node:child_process", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:child_process")>()
  const spawn = (...a: Parameters<typeof real.spawn>) => (spawnCtl.fake === undefined ? real.spawn(...a) : spawnCtl.fake(a[0], a[1] as ReadonlyArray<string>, a[2]))
  return { ...real, spawn, default: { ...real, spawn } }
})

/** Real processes started per property at most (spread evenly over the cases); the rest use the fake child. */
const REAL_SPAWNS = 250

// ---------------------------------------------------------------------------------------------------
// The oracle: §10.6 written out again, on code points.

const HEADER = "ocpool-notify/1"
const UNRECOGNISED = "opencode-pool: unrecognised message"
const PAYLOAD_MAX = 4096
const TITLE_CAP = 90
const MESSAGE_CAP = 400
const URGENCY_LIST: ReadonlyArray<Urgency> = ["low", "normal", "critical"]
const ICON_LIST: ReadonlyArray<Icon> = ["utilities-terminal", "dialog-information", "dialog-error", "dialog-warning", "system-run", "emblem-default"]
const SOUND_LIST: ReadonlyArray<Sound> = ["none", "done", "question", "permission", "error"]


const utf8Size = (p: number): number => (p < 0x80 ? 1 : p < 0x800 ? 2 : p < 0x10000 ? 3 : 4)

/** Whitespace trimmed from both ends (control characters are not whitespace). */
const trimWs = (s: string): string => {
  const ps = points(s)
  let a = 0
  let b = ps.length
  while (a < b && WHITESPACE.has(ps[a]!)) a++
  while (b > a && WHITESPACE.has(ps[b - 1]!)) b--
  return text(ps.slice(a, b))
}
const lowerAscii = (s: string): string => s.replace(/[A-Z]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 32))


const whitelisted = <T extends string>(list: ReadonlyArray<T>, fallback: T, line: string | undefined): T => {
  const v = lowerAscii(trimWs(line ?? ""))
  return list.find((x) => x === v) ?? fallback
}

/**
 * The fade key. §10.6 lists trimming for lines 1, 2, 6, 7 and 8 only; `ocpool receive` trims the key
 * line as well (`keyOf`, the sender's own rule), so a key padded with whitespace or ending in CR keeps
 * its fade tracking. The oracle follows the code here: the difference only ever adds `--print-id`.
 */
const KEY_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:@-"
const keyOracle = (line: string | undefined): string => {
  const k = trimWs(line ?? "")
  return k.length >= 1 && k.length <= 128 && [...k].every((c) => KEY_CHARS.includes(c)) ? k : ""
}

const TOKEN_PREFIX = "ocpool-notify-b64/1."
const TOKEN_MAX = 16_384
const BASE64URL = /^[A-Za-z0-9_-]*$/
/** A hop token built with Node's own base64url. */
const tokenOf = (p: string | Uint8Array): string => TOKEN_PREFIX + Buffer.from(typeof p === "string" ? Buffer.from(p, "utf8") : p).toString("base64url")

/**
 * The payload inside a token, read with Node's Buffer: `undefined` unless the text (trimmed) is the
 * prefix, then at most TOKEN_MAX characters in all, then canonical base64url (Node re-encodes the
 * bytes to the same text), of bytes that are UTF-8 (Node re-encodes the text to the same bytes).
 */
const untoken = (t: string): string | undefined => {
  if (t.length > TOKEN_MAX) return undefined
  const body = t.slice(TOKEN_PREFIX.length)
  const bytes = Buffer.from(body, "base64url")
  if (!BASE64URL.test(body) || bytes.toString("base64url") !== body) return undefined
  const payload = bytes.toString("utf8")
  return Buffer.from(payload, "utf8").equals(bytes) ? payload : undefined
}

/** What `ocpool receive` makes of SSH_ORIGINAL_COMMAND: a hop token decoded, then §10.6 on its payload; anything else §10.6. */
const oracle = (raw: string): Received => {
  let bytes = 0
  for (const p of points(raw)) bytes += utf8Size(p)
  const t = trimWs(raw)
  if (!t.startsWith(TOKEN_PREFIX)) return plainOracle(raw, bytes)
  const payload = untoken(t)
  // a malformed token is never read as fields: shown as text (it starts with the prefix, so it is never empty)
  return payload === undefined ? { _tag: "Unrecognised", title: UNRECOGNISED, message: clean(text(cut(points(raw))), MESSAGE_CAP), bytes } : plainOracle(payload, bytes)
}

/** The code points kept by the PAYLOAD_MAX-byte cut at a character boundary. */
const cut = (ps: ReadonlyArray<number>): Array<number> => {
  const kept: Array<number> = []
  let used = 0
  for (const p of ps) {
    if (used + utf8Size(p) > PAYLOAD_MAX) break
    used += utf8Size(p)
    kept.push(p)
  }
  return kept
}

/** What §10.6 says `ocpool receive` makes of a plain payload; `bytes` is the size that arrived. */
const plainOracle = (raw: string, bytes: number): Received => {
  const kept = cut(points(raw))
  if (kept.every((p) => WHITESPACE.has(p))) return { _tag: "Empty" }
  const t = text(kept)
  const lines = t.split("\n")
  const op = lowerAscii(trimWs(lines[1] ?? ""))
  if (trimWs(lines[0]!) !== HEADER || (op !== "show" && op !== "close" && op !== "probe")) return { _tag: "Unrecognised", title: UNRECOGNISED, message: clean(t, MESSAGE_CAP), bytes }
  if (op === "probe") return { _tag: "Probe" }
  const key = keyOracle(lines[2])
  if (op === "close") return { _tag: "Close", key }
  const title = clean(lines[3] ?? "", TITLE_CAP)
  return {
    _tag: "Show",
    key,
    title: title === "" ? "opencode" : title,
    message: clean(lines[4] ?? "", MESSAGE_CAP),
    urgency: whitelisted(URGENCY_LIST, "normal", lines[5]),
    icon: whitelisted(ICON_LIST, "utilities-terminal", lines[6]),
    sound: whitelisted(SOUND_LIST, "none", lines[7])
  }
}

// ---------------------------------------------------------------------------------------------------
// The desktop: stub programs, state and home in a temp directory.

const base = mkdtempSync(join(tmpdir(), "ocpool-fuzz-receive-"))
const bin = join(base, "bin")
const bare = join(base, "bare")
const home = join(base, "home")
const state = join(base, "state")
for (const d of [bin, bare, home]) mkdirSync(d)
mkdirSync(state, { mode: 0o700 })
const notifyLog = join(base, "notify-send.log")
const gdbusLog = join(base, "gdbus.log")
const otherLog = join(base, "other.log")
const popupsPath = join(state, "popups.json")
/** What an injected command would create: an absolute path, and a relative name in the working directory. */
const CANARY = join(base, "CANARY")
const REL_CANARY = "ocpool-fuzz-canary"

/**
 * A /bin/sh program that appends `$#` and its arguments, each followed by a NUL, to `log`; as
 * notify-send it prints the id 42 for `--print-id` (before `--`); it exits `$STUB_EXIT` (default 0).
 */
const stub = (dir: string, name: string, log: string, printsId: boolean) =>
  writeFileSync(
    join(dir, name),
    [
      "#!/bin/sh",
      recordArgvLine(log),
      printsId ? `for a; do [ "$a" = -- ] && break; [ "$a" = --print-id ] && printf '42\\n'; done` : "printf '()\\n'",
      'exit "${STUB_EXIT:-0}"',
      ""
    ].join("\n"),
    { mode: 0o755 }
  )
stub(bin, "notify-send", notifyLog, true)
stub(bin, "gdbus", gdbusLog, false)
// the desktop without notify-send: other programs that must not run either
stub(bare, "gdbus", otherLog, false)
stub(bare, "osascript", otherLog, false)
stub(bare, "sh", otherLog, false)

/** The argv of every run recorded in `log`. */
const calls = (log: string): Array<Array<string>> => [...readArgvLog(log), ...(fakeLogs.get(log) ?? [])]

/** Where each stub records its runs, by program path. */
const LOGS: Record<string, string> = {
  [join(bin, "notify-send")]: notifyLog,
  [join(bin, "gdbus")]: gdbusLog,
  [join(bare, "gdbus")]: otherLog,
  [join(bare, "osascript")]: otherLog,
  [join(bare, "sh")]: otherLog
}
/** The runs the fake child recorded, by log (kept in memory: cheaper than the stub's file). */
const fakeLogs = new Map<string, Array<Array<string>>>()
/** What the fake child saw that the stub could not: a shell, a relative program, a missing environment. */
const fakeProblems: Array<string> = []

let fakes = 0
/** A child that does what the stub does, without a process. */
const fakeChild = (file: string, args: ReadonlyArray<string>, raw: unknown) => {
  fakes++
  const options = (raw ?? {}) as SpawnOptions
  const log = LOGS[file]
  if (options.shell !== false) fakeProblems.push(`${file} spawned with shell ${String(options.shell)}`)
  if (log === undefined) fakeProblems.push(`unexpected program ${file}`)
  if (options.env === undefined) fakeProblems.push(`${file} spawned without an environment`)
  const child = Object.assign(new EventEmitter(), {
    pid: undefined,
    stdin: null,
    stdout: new PassThrough(),
    stderr: new PassThrough(),
    kill: () => true
  })
  setImmediate(() => {
    if (log !== undefined) fakeLogs.set(log, [...(fakeLogs.get(log) ?? []), [...args]])
    const dash = args.indexOf("--")
    if (basename(file) === "notify-send" && args.slice(0, dash === -1 ? args.length : dash).includes("--print-id")) child.stdout.write("42\n")
    else if (basename(file) !== "notify-send") child.stdout.write("()\n")
    const code = Number(options.env?.STUB_EXIT ?? "0")
    child.stdout.end()
    child.stderr.end()
    child.emit("exit", code, null)
    setImmediate(() => child.emit("close", code, null))
  })
  return child
}

/** Case `i` of a property of `runs` starts real processes when it is one of the REAL_SPAWNS spread over the run. */
let real = 0
/** Whether a real process may have written a log since the last reset. */
let realDirty = true
const useRealSpawn = (i: number, runs: number): void => {
  const every = Math.max(1, Math.ceil(runs / REAL_SPAWNS))
  if (i % every === 0) {
    real++
    realDirty = true
    spawnCtl.fake = undefined
  } else spawnCtl.fake = fakeChild
}

let stderr: Array<string> = []
let stdout: Array<string> = []
const errSpy = vi.spyOn(console, "error").mockImplementation((...a: Array<unknown>) => void stderr.push(a.map(String).join(" ")))
const logSpy = vi.spyOn(console, "log").mockImplementation((...a: Array<unknown>) => void stdout.push(a.map(String).join(" ")))

afterAll(() => {
  spawnCtl.fake = undefined
  errSpy.mockRestore()
  logSpy.mockRestore()
  rmSync(base, { recursive: true, force: true })
})

const canaryAppeared = (): boolean => existsSync(CANARY) || existsSync(join(process.cwd(), REL_CANARY)) || existsSync(join(base, REL_CANARY))

/** The exit code an outcome stands for: 0, the ExitWith code, or a thrown defect. */
const codeOf = (exit: Exit.Exit<void, ExitWith>): number => {
  if (Exit.isSuccess(exit)) return 0
  const failure = Cause.failureOption(exit.cause)
  if (Option.isSome(failure) && failure.value instanceof ExitWith) return failure.value.code
  throw new Error(`receive did not end with an exit code: ${Cause.pretty(exit.cause)}`)
}

// ---------------------------------------------------------------------------------------------------
// The payloads.

const INJECTIONS = [
  `$(touch ${CANARY})`,
  `\`touch ${CANARY}\``,
  `; touch ${CANARY}`,
  `&& touch ${CANARY}`,
  `| touch ${CANARY}`,
  `|| touch ${CANARY}`,
  `' ; touch ${CANARY}; '`,
  `" ; touch ${CANARY}; "`,
  `\ntouch ${CANARY}\n`,
  `$(touch ${REL_CANARY})`,
  `; touch ${REL_CANARY} #`,
  `\`touch ${REL_CANARY}\``,
  `> ${CANARY}`,
  `\${IFS}touch\${IFS}${CANARY}`,
  `%s%n%x`
]
const FLAGS = ["low --icon=x", "low --icon=dialog-error", "--print-id", "-u critical", "--urgency=critical", "--", "-", "--app-name=evil", "--hint=string:sound-name:../../x", "-t 0", "--action=x=y", "--wait"]
const ODD = ["\r", "\t", "\u0007", "\u001b[31m", "\u007f", "\u0085", "\u2028", "\u00a0", "\ufeff", "\u0000", "\ud800", "\udc00", "\udbff\udfff", "😀", "é", "€", "\\", "\\n", "\\101", "'", '"', "\n", "\r\n", " ", "   ", "<b>", "&amp;", "…", "ǅ", "İ", "K"]

const fragment: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 2, arbitrary: fc.fullUnicodeString({ maxLength: 8 }) },
  { weight: 3, arbitrary: fc.constantFrom(...INJECTIONS) },
  { weight: 2, arbitrary: fc.constantFrom(...FLAGS) },
  { weight: 3, arbitrary: fc.constantFrom(...ODD) }
)
/** A long run of one character, around the caps and the byte limit. */
const long: fc.Arbitrary<string> = fc
  .tuple(fc.constantFrom("x", "é", "€", "😀", " ", "\t", "ab "), fc.oneof(fc.constantFrom(89, 90, 91, 399, 400, 401), fc.integer({ min: 80, max: 4_200 })))
  .map(([c, n]) => c.repeat(n))
const field: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.array(fragment, { maxLength: 8 }).map((f) => f.join("")) },
  { weight: 1, arbitrary: long },
  { weight: 1, arbitrary: hostileString.filter((s) => s.length < 10_000) }
)

const PADS = ["", "", " ", "\t", "\r", " \u00a0", "\u2028"]
/** A whitelisted word, padded and in mixed case. */
const variant = (words: ReadonlyArray<string>): fc.Arbitrary<string> =>
  fc
    .tuple(fc.constantFrom(...words), fc.constantFrom(...PADS), fc.constantFrom(...PADS), fc.array(fc.boolean(), { maxLength: 20 }))
    .map(([w, pre, post, caps]) => pre + [...w].map((c, i) => (caps[i] === true ? c.toUpperCase() : c)).join("") + post)
const NEAR = ["low --icon=x", "--print-id", "-u critical", "--urgency=critical", `critical; touch ${CANARY}`, "../x", "../../x.wav", "$(rm -rf ~)", "chime", "beep", "criticall", "lo w", "", "crit\u0000ical", "dialog-error --hint=x", "/usr/share/icons/x.png", "ſhow", "cloſe", "ＳＨＯＷ"]
const choice = (words: ReadonlyArray<string>): fc.Arbitrary<string> =>
  fc.oneof({ weight: 5, arbitrary: variant(words) }, { weight: 2, arbitrary: fc.constantFrom(...NEAR) }, { weight: 1, arbitrary: field })

const header: fc.Arbitrary<string> = fc.oneof(
  { weight: 12, arbitrary: fc.tuple(fc.constantFrom(...PADS), fc.constantFrom(...PADS)).map(([a, b]) => `${a}${HEADER}${b}`) },
  { weight: 2, arbitrary: fc.constantFrom("ocpool-notify/2", "OCPOOL-NOTIFY/1", "ocpool-notify/1x", "ocpool-notify/ 1", "ocpool-notify", "#!/bin/sh", "", "ocpool-notify/1\u0000") },
  { weight: 1, arbitrary: field }
)
const op = fc.oneof({ weight: 10, arbitrary: variant(["show", "close"]) }, { weight: 1, arbitrary: variant(["probe"]) }, { weight: 2, arbitrary: fc.constantFrom("run", "exec", "show; touch x", "showw", "sh ow", "$(touch x)", "SHOW --print-id") }, { weight: 1, arbitrary: field })
const key: fc.Arbitrary<string> = fc.oneof(
  { weight: 2, arbitrary: fc.constant("") },
  { weight: 4, arbitrary: fc.stringMatching(/^[A-Za-z0-9._:@-]{1,128}$/) },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom(...PADS), fc.constantFrom("desk:ses_1", "a".repeat(128), "h.lan:ses_X@1"), fc.constantFrom(...PADS)).map(([a, k, b]) => a + k + b) },
  { weight: 2, arbitrary: fc.constantFrom("a".repeat(129), "a b", "a/b", "../x", "k$(id)", "k;x", "ключ", "k\u0000") },
  { weight: 1, arbitrary: field }
)

/** A payload of (mostly) eight lines, the fields drawn separately; sometimes fewer lines, or more. */
const structured: fc.Arbitrary<string> = fc
  .record({
    header,
    op,
    key,
    title: field,
    message: field,
    urgency: choice(URGENCY_LIST),
    icon: choice(ICON_LIST),
    sound: choice(SOUND_LIST),
    extra: fc.array(field, { maxLength: 3 }),
    count: fc.oneof({ weight: 6, arbitrary: fc.constant(99) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 8 }) }),
    eol: fc.constantFrom("\n", "\n", "\n", "\r\n")
  })
  .map((r) => [r.header, r.op, r.key, r.title, r.message, r.urgency, r.icon, r.sound, ...r.extra].slice(0, r.count).join(r.eol))

/** A valid show payload whose filler puts the 4096-byte cut in the message, urgency, icon or sound line, or inside a character. */
const atTheLimit: fc.Arbitrary<string> = fc
  .record({
    filler: fc.constantFrom("x", "é", "€", "😀"),
    slack: fc.integer({ min: -80, max: 80 }),
    inMessage: fc.boolean(),
    key,
    urgency: choice(URGENCY_LIST),
    icon: choice(ICON_LIST),
    sound: choice(SOUND_LIST)
  })
  .map((r) => {
    const size = Buffer.byteLength(r.filler)
    const fill = r.filler.repeat(Math.max(0, Math.floor((PAYLOAD_MAX - 40) / size) + Math.floor(r.slack / size)))
    const [title, message] = r.inMessage ? ["T", fill] : [fill, "M"]
    return [HEADER, "show", r.key, title, message, r.urgency, r.icon, r.sound].join("\n")
  })

/** A payload's bytes with invalid UTF-8 spliced in, decoded as Node decodes an environment (U+FFFD). */
const INVALID = [[0xff], [0xc3], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82], [0xc0, 0xaf], [0x80, 0x80], [0xf0, 0x9f, 0x98]]
const invalidUtf8: fc.Arbitrary<string> = fc
  .tuple(fc.oneof(structured, atTheLimit), fc.array(fc.tuple(fc.nat(), fc.constantFrom(...INVALID)), { minLength: 1, maxLength: 4 }))
  .map(([p, splices]) => {
    let bytes = Buffer.from(p, "utf8")
    for (const [at, ins] of splices) {
      const i = bytes.length === 0 ? 0 : at % (bytes.length + 1)
      bytes = Buffer.concat([bytes.subarray(0, i), Buffer.from(ins), bytes.subarray(i)])
    }
    return bytes.toString("utf8")
  })

const unstructured: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom("hello world", "", " ", "  \n\t ", "\u00a0\u2028\ufeff", "\u0000", "\u0001", `$(touch ${CANARY})`, `; touch ${CANARY}`, HEADER, `${HEADER}\n`, `${HEADER}\nshow`, `${HEADER}\nclose`),
  fc.stringOf(fc.constantFrom(" ", "\t", "\n", "\r", "\u00a0", "\u2028", "\ufeff", "\u3000")),
  field,
  hostileString.filter((s) => s.length < 10_000),
  fc.integer({ min: 4_000, max: 20_000 }).map((n) => "x".repeat(n)),
  fc.tuple(structured, fc.integer({ min: 4_096, max: 20_000 })).map(([p, n]) => `${p}\n${"y".repeat(n)}`)
)

/** Whitespace a token may arrive in (trimmed), and none. */
const TOKEN_PADS = ["", "", "", " ", "\n", "\t\r\n", " \u00a0", "\ufeff", "\u2028 "]
const padded = (t: fc.Arbitrary<string>): fc.Arbitrary<string> => fc.tuple(fc.constantFrom(...TOKEN_PADS), t, fc.constantFrom(...TOKEN_PADS)).map(([a, x, b]) => a + x + b)

/** The plain payloads as the sender sends them: one token word (sometimes padded). */
const asToken: fc.Arbitrary<string> = padded(fc.oneof({ weight: 6, arbitrary: structured }, { weight: 2, arbitrary: atTheLimit }, { weight: 2, arbitrary: unstructured }, { weight: 1, arbitrary: invalidUtf8 }).map(tokenOf))

const SPLICES = ["$", "$(touch x)", "`", ";", "&", "|", "=", "==", "+", "/", ".", " ", "\n", "\r", "é", "😀", "\u0000", "\ufeff", "A", "-", "_"]
/** A token broken one way or another (the oracle says which are still tokens: a splice of `A`, `-` or `_` may be). */
const brokenToken: fc.Arbitrary<string> = fc.oneof(
  // a character spliced in, or one dropped
  fc.tuple(fc.oneof(structured, atTheLimit), fc.constantFrom(...SPLICES), fc.nat(), fc.boolean()).map(([p, c, at, drop]) => {
    const t = tokenOf(p)
    const i = TOKEN_PREFIX.length + (at % (t.length - TOKEN_PREFIX.length + 1))
    return drop ? t.slice(0, i) + t.slice(i + 1) : t.slice(0, i) + c + t.slice(i)
  }),
  // the last character replaced: its unused low bits may be set
  fc.tuple(structured, fc.integer({ min: 0, max: 63 })).map(([p, v]) => {
    const t = tokenOf(p)
    return t.slice(0, -1) + "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[v]!
  }),
  // bytes that are not UTF-8 inside a well-formed base64url body
  fc.tuple(structured, fc.array(fc.tuple(fc.nat(), fc.constantFrom(...INVALID)), { minLength: 1, maxLength: 3 })).map(([p, splices]) => {
    let bytes = Buffer.from(p, "utf8")
    for (const [at, ins] of splices) {
      const i = at % (bytes.length + 1)
      bytes = Buffer.concat([bytes.subarray(0, i), Buffer.from(ins), bytes.subarray(i)])
    }
    return tokenOf(bytes)
  }),
  // shell syntax and standard base64 behind the prefix; a token of a token
  fc.constantFrom(...INJECTIONS, ...FLAGS, "", "=", "QQ==", "a+b/", "Zm9v\nYmFy").map((x) => TOKEN_PREFIX + x),
  structured.map((p) => tokenOf(tokenOf(p)))
)

/** Tokens around the 16 KiB cap (a payload of about 12 KiB: cut at 4096 bytes when decoded). */
const nearTokenCap: fc.Arbitrary<string> = fc.tuple(structured, fc.integer({ min: -8, max: 8 })).map(([p, slack]) => {
  const fill = Math.max(0, Math.floor(((TOKEN_MAX - TOKEN_PREFIX.length) * 3) / 4) - Buffer.byteLength(p) - 1 + slack)
  return tokenOf(`${p}\n${"y".repeat(fill)}`)
})

const payload: fc.Arbitrary<string> = fc.oneof(
  { weight: 10, arbitrary: structured },
  { weight: 2, arbitrary: atTheLimit },
  { weight: 2, arbitrary: invalidUtf8 },
  { weight: 3, arbitrary: unstructured },
  { weight: 6, arbitrary: asToken },
  { weight: 3, arbitrary: brokenToken },
  { weight: 1, arbitrary: nearTokenCap }
)

/** One case: the payload; whether a popup is remembered under a close payload's key; whether the programs fail. */
const receiveCase = fc.record({ payload, seeded: fc.boolean(), fails: fc.oneof({ weight: 9, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }) })

// ---------------------------------------------------------------------------------------------------

const EMPTY_NOTE = "ocpool receive: no payload (SSH_ORIGINAL_COMMAND is unset or blank); nothing shown"
const notUnderstood = (bytes: number) => `ocpool receive: payload not understood (${bytes} bytes); shown as text`

const reset = () => {
  if (realDirty) for (const f of [notifyLog, gdbusLog, otherLog]) rmSync(f, { force: true })
  realDirty = false
  fakeLogs.clear()
  rmSync(popupsPath, { force: true })
  stderr = []
  stdout = []
}

/**
 * Runs the receiver on `payload` with `env`: through `receive` with the payload in SSH_ORIGINAL_COMMAND,
 * or, for a payload holding a NUL (which no environment variable can), through the decoder and
 * `handleReceived` with the rest of the environment.
 */
const runReceiver = (payload: string, env: Record<string, string>) =>
  Effect.runPromiseExit(payload.includes("\u0000") ? handleReceived(decodePayload(payload), env, "linux") : receive({ ...env, SSH_ORIGINAL_COMMAND: payload }, "linux"))

let shown = 0
let unrecognised = 0
let closed = 0
let truncated = 0
let probed = 0
let tokens = 0
let brokenTokens = 0

describe("fuzz: ocpool receive", () => {
  it(
    "US-18 every payload reaches notify-send only as the argv §10.6 allows, exits as §10.6 says, and runs nothing it carries",
    async () => {
      let n = 0
      real = 0
      await fc.assert(
        fc.asyncProperty(receiveCase, async ({ payload: p, seeded, fails }) => {
          reset()
          useRealSpawn(n++, FUZZ_RUNS)
          const want = oracle(p)
          // the in-process decoder agrees with the oracle (the whole receiver is checked below)
          expect(decodePayload(p)).toEqual(want)
          if (Buffer.byteLength(p) > PAYLOAD_MAX) truncated++
          if (trimWs(p).startsWith(TOKEN_PREFIX)) {
            if (untoken(trimWs(p)) === undefined) brokenTokens++
            else tokens++
          }
          const seed = seeded && want._tag === "Close" && want.key !== ""
          if (seed) writeFileSync(popupsPath, JSON.stringify({ version: 1, popups: [{ key: want.key, id: 7, raisedAt: Date.now() }] }))
          const env: Record<string, string> = { PATH: bin, OCPOOL_STATE_DIR: state, HOME: home, ...(fails ? { STUB_EXIT: "1" } : {}) }

          const code = codeOf(await runReceiver(p, env))

          expect(canaryAppeared()).toBe(false)
          expect(stdout).toEqual([])
          switch (want._tag) {
            case "Empty":
              expect({ code, stderr, shown: calls(notifyLog), closed: calls(gdbusLog) }).toEqual({ code: 0, stderr: [EMPTY_NOTE], shown: [], closed: [] })
              return
            case "Probe":
              probed++
              expect({ code, stderr, shown: calls(notifyLog), closed: calls(gdbusLog) }).toEqual({ code: 0, stderr: [PROBE_ANSWER], shown: [], closed: [] })
              return
            case "Close": {
              closed++
              const note = want.key === "" ? ["ocpool receive: close payload without a valid key; nothing closed"] : seed && fails ? ["ocpool receive: popup not closed: closing popup 7: gdbus exited 1"] : []
              expect({ code, stderr, shown: calls(notifyLog), closed: calls(gdbusLog) }).toEqual({
                code: seed && fails ? 75 : 0,
                stderr: note,
                shown: [],
                closed: seed ? [[...closeArgs(7)]] : []
              })
              return
            }
            case "Show":
            case "Unrecognised": {
              if (want._tag === "Show") shown++
              else unrecognised++
              const fields =
                want._tag === "Show"
                  ? want
                  : { key: "", title: want.title, message: want.message, urgency: "normal" as const, icon: "utilities-terminal" as const, sound: "none" as const }
              const argv = [...notifySendArgs(fields, fields.key !== "")]
              // the texts are the last two entries, right after the only `--`
              expect(argv.slice(-3)).toEqual(["--", fields.title, fields.message.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/\\/g, "\\\\")])
              expect({ code, stderr, shown: calls(notifyLog), closed: calls(gdbusLog) }).toEqual({
                code: fails ? 75 : 0,
                stderr: [
                  ...(want._tag === "Unrecognised" ? [notUnderstood(want.bytes)] : []),
                  ...(fails ? ["ocpool receive: notification not delivered via notify-send: notify-send exited 1"] : [])
                ],
                shown: [argv],
                closed: []
              })
              // a popup raised under a fade key is remembered for a later close
              const remembered = existsSync(popupsPath) ? decodePopups(readFileSync(popupsPath, "utf8")).map((e) => [e.key, e.id]) : []
              expect(remembered).toEqual(fields.key !== "" && !fails ? [[fields.key, 42]] : [])
              return
            }
          }
        }),
        fuzzParams()
      )
      expect(fakeProblems).toEqual([])
      // real processes ran for a spread sample (all cases when FUZZ_RUNS ≤ REAL_SPAWNS), the fake child for the rest
      expect(real).toBe(Math.ceil(FUZZ_RUNS / Math.max(1, Math.ceil(FUZZ_RUNS / REAL_SPAWNS))))
      expect(fakes > 0).toBe(FUZZ_RUNS > REAL_SPAWNS)
      // the generators reach every outcome
      expect({
        shown: shown > FUZZ_RUNS / 5,
        unrecognised: unrecognised > FUZZ_RUNS / 50,
        closed: closed > FUZZ_RUNS / 50,
        truncated: truncated > FUZZ_RUNS / 50,
        probed: probed > FUZZ_RUNS / 200,
        tokens: tokens > FUZZ_RUNS / 10,
        brokenTokens: brokenTokens > FUZZ_RUNS / 25
      }).toEqual({ shown: true, unrecognised: true, closed: true, truncated: true, probed: true, tokens: true, brokenTokens: true })
    },
    fuzzTimeout(30)
  )

  it(
    "US-18 without notify-send on PATH every showable payload ends with exit 75 naming the missing channel, and nothing runs",
    async () => {
      let n = 0
      real = 0
      const breathe = breather(50)
      await fc.assert(
        fc.asyncProperty(payload, async (p) => {
          await breathe()
          reset()
          useRealSpawn(n++, FUZZ_RUNS)
          const want = oracle(p)
          const code = codeOf(await runReceiver(p, { PATH: bare, OCPOOL_STATE_DIR: state, HOME: home }))
          expect(canaryAppeared()).toBe(false)
          expect(stdout).toEqual([])
          expect(calls(otherLog)).toEqual([])
          const showable = want._tag === "Show" || want._tag === "Unrecognised"
          expect(code).toBe(showable ? 75 : 0)
          if (showable) {
            expect(stderr).toEqual([
              ...(want._tag === "Unrecognised" ? [notUnderstood(want.bytes)] : []),
              "ocpool receive: no notifier on linux: notify-send is not on PATH"
            ])
          }
        }),
        fuzzParams()
      )
      expect(fakeProblems).toEqual([])
    },
    fuzzTimeout(10)
  )

  it(
    "US-18.1 hop tokens: the sender's remote argument is one word of [A-Za-z0-9._/-] that round-trips; hostile bytes never decode to a payload; the length limits hold; a real /bin/sh given the word runs nothing and only says no such program exists",
    async () => {
      let n = 0
      let shells = 0
      const every = Math.max(1, Math.ceil(FUZZ_RUNS / 100))
      const tokenCase = fc.oneof(
        { weight: 4, arbitrary: payload.map((p) => ({ kind: "payload" as const, p })) },
        { weight: 2, arbitrary: fc.uint8Array({ maxLength: 600 }).map((b) => ({ kind: "bytes" as const, b })) },
        { weight: 1, arbitrary: fc.tuple(fc.constantFrom("x", "é", "😀", "\u0000"), fc.integer({ min: 1_000, max: 6_000 })).map(([c, k]) => ({ kind: "payload" as const, p: `${HEADER}\nshow\n\nlong\n${c.repeat(k)}` })) }
      )
      await fc.assert(
        fc.asyncProperty(tokenCase, fc.constantFrom(...TOKEN_PADS), async (c, pad) => {
          const i = n++
          // the cases are synchronous: let the worker's event loop (vitest's RPC) breathe now and then
          if (i % 50 === 0) await new Promise<void>((resolve) => setImmediate(resolve))
          const bytes = c.kind === "bytes" ? Buffer.from(c.b) : Buffer.from(c.p, "utf8")
          const t = c.kind === "bytes" ? tokenOf(bytes) : encodeHopToken(c.p)
          // the sender's word: Node's base64url behind the prefix, nothing a shell acts on, the last argv entry of ssh
          expect(t).toBe(tokenOf(bytes))
          expect(t).toMatch(/^[A-Za-z0-9._/-]+$/)
          if (c.kind === "payload") expect(sshArgs("desk", c.p).at(-1)).toBe(t)
          // read back: the same bytes when they are UTF-8 and the token is within the cap; otherwise never a payload
          const utf8 = Buffer.from(bytes.toString("utf8"), "utf8").equals(bytes)
          const read = readHopToken(`${pad}${t}${pad}`)
          if (t.length > TOKEN_MAX) expect(read).toEqual({ _tag: "Malformed", reason: "longer than 16384 bytes" })
          else if (!utf8) expect(read).toEqual({ _tag: "Malformed", reason: "not UTF-8" })
          else expect(read).toEqual({ _tag: "Token", payload: bytes.toString("utf8") })
          // what the receiver makes of it is the oracle's (decode, then the plain rules and the 4096-byte cut)
          expect(decodePayload(`${pad}${t}${pad}`)).toEqual(oracle(`${pad}${t}${pad}`))
          // a spread sample through a real shell: a host without the forced command
          if (i % every === 0) {
            shells++
            // the sender's word as it sends it (padding is only the receiver's trimming)
            const r = spawnSync("/bin/sh", ["-c", t], { cwd: base, encoding: "utf8", env: { PATH: "/usr/bin:/bin" }, timeout: 10_000 })
            // 127 (not found); a word past PATH_MAX (4096; the sender's never are) is `File name too long`, 126 in bash
            expect({ status: r.status === 126 || r.status === 127, stdout: r.stdout }).toEqual({ status: true, stdout: "" })
            expect(shellAnswer(r.stderr)).toMatch(/ocpool-notify-b64\/1\.…: (not found|No such file or directory|command not found|File name too long)$/)
            expect(canaryAppeared()).toBe(false)
          }
        }),
        fuzzParams()
      )
      expect(shells).toBe(Math.ceil(FUZZ_RUNS / every))
      // the probe the doctor sends is such a token too
      expect(encodeHopToken(encodeProbe())).toMatch(/^ocpool-notify-b64\/1\.[A-Za-z0-9_-]+$/)
    },
    fuzzTimeout(20)
  )
})
