/**
 * Fuzz family: markup and bidi through `ocpool receive` (issue 18 item 10; SPEC §10.2, §10.5, §10.6;
 * US-18). Payloads whose title and message lines are full of body markup (`<a href=file:…>`,
 * `<img src=…>`, entities, lone `<`, `>`, `&`), bidi controls (U+202A–U+202E, U+2066–U+2069), C1
 * controls (U+0080–U+009F) and backslashes go IN PROCESS through `receive(env, "linux")`, the payload
 * in SSH_ORIGINAL_COMMAND. The receiver's `notify-send` is a fake child at `child_process.spawn` that
 * records its argv; REAL_SPAWNS cases, spread over the run, start a real /bin/sh stub instead.
 *
 * A separate family from receive.fuzz.test.ts (which holds the whole receiver's §10.6 rules): here the
 * oracle is test/fuzz/textOracle.ts's cleaning and body escape, and the invariants are those of the
 * popup: no bidi, C1 or C0 control in any argv entry; the body never holds a raw `<` or `>` or an `&`
 * that does not start `&amp;`, `&lt;` or `&gt;`, and reads back as the cleaned message; the summary is
 * the cleaned title, unescaped.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { vi } from "vitest"
import { Effect } from "effect"
import fc from "fast-check"
import type { SpawnOptions } from "node:child_process"
import { EventEmitter } from "node:events"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PassThrough } from "node:stream"
import { receive } from "../../src/cli/receive.js"
import { notifySendArgs } from "../../src/core/notify/channel.js"
import { decodePayload } from "../../src/core/notify/payload.js"
import { FUZZ_RUNS, fuzzParams, fuzzTimeout } from "./common.js"
import { clean, FORBIDDEN_IN_POPUP, notifySendBody, RAW_MARKUP, readBody } from "./textOracle.js"
import { readArgvLog, recordArgvLine } from "../support/argvLog.js"

/** `child_process.spawn`, real while `spawnCtl.fake` is unset. */
const spawnCtl = vi.hoisted(() => ({ fake: undefined as undefined | ((file: string, args: ReadonlyArray<string>, options: unknown) => unknown) }))
vi.mock("node:child_process", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:child_process")>()
  const spawn = (...a: Parameters<typeof real.spawn>) => (spawnCtl.fake === undefined ? real.spawn(...a) : spawnCtl.fake(a[0], a[1] as ReadonlyArray<string>, a[2]))
  return { ...real, spawn, default: { ...real, spawn } }
})

/** Cases run through the whole receiver (processes, or the fake child): the pure path takes every case. */
const RECEIVE_CASES = Math.min(FUZZ_RUNS, 500)
/** Real processes started at most (spread evenly over those cases); the rest use the fake child. */
const REAL_SPAWNS = 100

const TITLE_CAP = 90
const MESSAGE_CAP = 400

const base = mkdtempSync(join(tmpdir(), "ocpool-fuzz-receive-markup-"))
const bin = join(base, "bin")
const home = join(base, "home")
const state = join(base, "state")
for (const d of [bin, home]) mkdirSync(d)
mkdirSync(state, { mode: 0o700 })
const log = join(base, "notify-send.log")
const notifySend = join(bin, "notify-send")
writeFileSync(notifySend, ["#!/bin/sh", recordArgvLine(log), "exit 0", ""].join("\n"), { mode: 0o755 })

let fakeRuns: Array<Array<string>> = []
const fakeProblems: Array<string> = []
/** A child that does what the stub does (records its argv, exits 0), without a process. */
const fakeChild = (file: string, args: ReadonlyArray<string>, raw: unknown) => {
  const options = (raw ?? {}) as SpawnOptions
  if (file !== notifySend) fakeProblems.push(`unexpected program ${file}`)
  if (options.shell !== false) fakeProblems.push(`${file} spawned with shell ${String(options.shell)}`)
  const child = Object.assign(new EventEmitter(), { pid: undefined, stdin: null, stdout: new PassThrough(), stderr: new PassThrough(), kill: () => true })
  setImmediate(() => {
    fakeRuns.push([...args])
    child.stdout.end()
    child.stderr.end()
    child.emit("exit", 0, null)
    setImmediate(() => child.emit("close", 0, null))
  })
  return child
}
/** The argv of every run since the last reset, real or fake. */
const runs = (): Array<Array<string>> => {
  return [...fakeRuns, ...readArgvLog(log)]
}
const reset = () => {
  fakeRuns = []
  rmSync(log, { force: true })
}
let real = 0
const useRealSpawn = (i: number): void => {
  if (i % Math.max(1, Math.ceil(RECEIVE_CASES / REAL_SPAWNS)) === 0) {
    real++
    spawnCtl.fake = undefined
  } else spawnCtl.fake = fakeChild
}
const errSpy = vi.spyOn(console, "error").mockImplementation(() => undefined)

afterAll(() => {
  spawnCtl.fake = undefined
  errSpy.mockRestore()
  rmSync(base, { recursive: true, force: true })
})

// ---------------------------------------------------------------------------------------------------
// The texts.

const MARKUP = [
  "<a href=file:///etc/passwd>x</a>",
  '<a href="https://evil.example/?a=1&b=2">click</a>',
  "<img src=http://tracker.example/p.png>",
  "<img src='file:///home/u/.ssh/id_ed25519'/>",
  "<b>", "</b>", "<i>x</i>", "<u", "<", ">", "<<", ">>", "&", "&&", "&amp;", "&amp;amp;", "&lt;", "&gt;", "&lt;b&gt;", "&#x202E;", "&#8238;", "&nbsp;", "&", "& ;",
  "<![CDATA[x]]>", "<!-- x -->", "<?xml version='1.0'?>", "a<b>c", "1 > 0", "x&y", "\\<b>", "\\&", "\\\\", "\\n", "\\101"
]
const CONTROLS = [
  ..."\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069",
  ...Array.from({ length: 32 }, (_, i) => String.fromCharCode(0x80 + i)),
  "evil\u202etxt.exe",
  "\u2067\u05d0\u05d1\u2069",
  "\u009b31m",
  "\u00c2\u0093quoted\u00c2\u0094",
  "\u200e", "\u200f", "\u061c", "\u00a0", "\u2028", "\t", "\r", "\u0000", "\u001b[31m", "\u007f", "\ud800", "😀", "é"
]
const fragment: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...MARKUP) },
  { weight: 3, arbitrary: fc.constantFrom(...CONTROLS) },
  { weight: 2, arbitrary: fc.string({ unit: fc.constantFrom("<", ">", "&", ";", "a", " ", "#", "x", "\u202e", "\u0085"), maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 8 }) }
)
/**
 * A text near or past the caps: runs of one escaped character or control, the cap falling on them. At
 * most 2,000 bytes, so a title and a message both fit the payload's 4,096.
 */
const long: fc.Arbitrary<string> = fc
  .tuple(fc.constantFrom("&", "<", ">", "\u202e", "\u0085", "a&", "<\u202e"), fc.oneof(fc.constantFrom(89, 90, 91, 399, 400, 401), fc.integer({ min: 80, max: 500 })))
  .map(([c, n]) => c.repeat(n))
const field: fc.Arbitrary<string> = fc.oneof({ weight: 6, arbitrary: fc.array(fragment, { maxLength: 10 }).map((f) => f.join("")) }, { weight: 1, arbitrary: long })

/** A show payload (the fields raw, never cleaned by an encoder), or a text that is not a payload. */
const payload: fc.Arbitrary<{ readonly raw: string; readonly show: boolean; readonly title: string; readonly message: string }> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ title: field, message: field }).map(({ title, message }) => ({ raw: ["ocpool-notify/1", "show", "", title, message, "normal", "dialog-information", "none"].join("\n"), show: true, title, message })) },
  // a text that is not a payload, and is not blank (blank shows nothing) nor holds a NUL (no environment can)
  { weight: 1, arbitrary: field.filter((s) => s.trim() !== "" && !s.includes("\u0000")).map((s) => ({ raw: s, show: false, title: "", message: s })) }
)

// ---------------------------------------------------------------------------------------------------

/** What the oracle says notify-send gets for a payload: its summary and body. */
const expected = (p: { readonly raw: string; readonly show: boolean; readonly title: string; readonly message: string }): [string, string] => {
  if (!p.show) return ["opencode-pool: unrecognised message", notifySendBody(clean(p.raw, MESSAGE_CAP))]
  const title = clean(p.title, TITLE_CAP)
  return [title === "" ? "opencode" : title, notifySendBody(clean(p.message, MESSAGE_CAP))]
}

/** The popup's invariants on one notify-send argv: no control anywhere, texts last after the only `--`, the body escaped once. */
const checkArgv = (argv: ReadonlyArray<string>): void => {
  for (const a of argv) expect(FORBIDDEN_IN_POPUP.test(a)).toBe(false)
  expect(argv.indexOf("--")).toBe(argv.length - 3)
  expect(argv.filter((a) => a === "--")).toHaveLength(1)
  expect(RAW_MARKUP.test(argv.at(-1)!)).toBe(false)
}

let escaped = 0
let stripped = 0

describe("fuzz: ocpool receive, markup and bidi (issue 18 item 10)", () => {
  it(
    "US-18 decodePayload → notifySendArgs: whatever markup, bidi and C1 controls a payload holds, no control reaches any argv entry, the body has every `&`, `<`, `>` escaped once and reads back as the cleaned message, the summary is the cleaned title unescaped",
    () => {
      fc.assert(
        fc.property(payload, fc.boolean(), (p, printId) => {
          const r = decodePayload(p.raw)
          if (r._tag !== "Show" && r._tag !== "Unrecognised") throw new Error(`not shown: ${r._tag}`)
          const argv = notifySendArgs(r._tag === "Show" ? r : { title: r.title, message: r.message, urgency: "normal", icon: "utilities-terminal", sound: "none" }, printId)
          checkArgv(argv)
          const [title, body] = expected(p)
          expect(argv.slice(-2)).toEqual([title, body])
          expect(readBody(body)).toBe(r.message)
          if (/[<>&]/.test(r.message)) escaped++
          if (/[\u0080-\u009f\u202a-\u202e\u2066-\u2069]/.test(p.title + p.message)) stripped++
        }),
        fuzzParams()
      )
      // the generators reach escaped bodies and stripped controls
      expect({ escaped: escaped > FUZZ_RUNS / 5, stripped: stripped > FUZZ_RUNS / 5 }).toEqual({ escaped: true, stripped: true })
    },
    fuzzTimeout(2)
  )

  it(
    `US-18 through \`ocpool receive\` (${RECEIVE_CASES} cases, SSH_ORIGINAL_COMMAND → notify-send): the program receives exactly that argv`,
    async () => {
      let n = 0
      real = 0
      await fc.assert(
        fc.asyncProperty(payload, async (p) => {
          reset()
          useRealSpawn(n++)
          await Effect.runPromise(receive({ PATH: bin, HOME: home, OCPOOL_STATE_DIR: state, SSH_ORIGINAL_COMMAND: p.raw }, "linux").pipe(Effect.either))
          const got = runs()
          expect(got).toHaveLength(1)
          checkArgv(got[0]!)
          expect(got[0]!.slice(-2)).toEqual(expected(p))
        }),
        fuzzParams(RECEIVE_CASES)
      )
      expect(fakeProblems).toEqual([])
      expect(real).toBeGreaterThan(0)
    },
    fuzzTimeout(30, RECEIVE_CASES)
  )
})
