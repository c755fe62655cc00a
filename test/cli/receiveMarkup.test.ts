/**
 * `ocpool receive` with markup and bidi controls in the payload (issue 18 item 10; SPEC §10.2, §10.6):
 * in process, `decodePayload` → `handleReceived` (and `receive` reading SSH_ORIGINAL_COMMAND) on
 * Linux, with a stub `notify-send` (a /bin/sh program recording its argv) as the only program on
 * PATH. What the stub receives is what the daemon gets: the body's `&`, `<`, `>` escaped once, the
 * summary plain, no bidi or C1 control in either.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { handleReceived, receive } from "../../src/cli/receive.js"
import { decodePayload } from "../../src/core/notify/payload.js"
import { readArgvLog, recordArgvLine } from "../support/argvLog.js"

const base = mkdtempSync(join(tmpdir(), "ocpool-receive-markup-"))
const bin = join(base, "bin")
const state = join(base, "state")
mkdirSync(bin)
mkdirSync(state, { mode: 0o700 })
const log = join(base, "notify-send.log")
writeFileSync(
  join(bin, "notify-send"),
  ["#!/bin/sh", recordArgvLine(log), `for a; do [ "$a" = -- ] && break; [ "$a" = --print-id ] && printf '42\\n'; done`, "exit 0", ""].join("\n"),
  { mode: 0o755 }
)
afterAll(() => rmSync(base, { recursive: true, force: true }))

/** Every argv the stub recorded since the last call, and the log emptied. */
const taken = (): Array<Array<string>> => {
  const runs = readArgvLog(log)
  rmSync(log, { force: true })
  return runs
}
const env = { PATH: bin, HOME: base, OCPOOL_STATE_DIR: state, DBUS_SESSION_BUS_ADDRESS: "unix:path=/nonexistent" }
const payload = (...lines: ReadonlyArray<string>) => lines.join("\n")
const FORBIDDEN = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/

describe("ocpool receive: markup and bidi (issue 18 item 10)", { timeout: 30_000 }, () => {
  it.effect("US-18 decodePayload → notify-send: `<a href=file:///etc/passwd>x</a>` and `<img src=…>` arrive escaped in the body, the summary plain; U+202E and U+0085 are gone from both", () =>
    Effect.gen(function* () {
      const p = payload(
        "ocpool-notify/1",
        "show",
        "",
        "Invoice\u202egpj.exe\u0085 <b>now</b> & then",
        "<a href=file:///etc/passwd>x</a> <img src=http://tracker.example/p.png> Tom & Jerry\u202e\u0085 &amp;",
        "critical",
        "dialog-error",
        "error"
      )
      yield* handleReceived(decodePayload(p), env, "linux")
      expect(taken()).toEqual([
        [
          "--app-name=opencode",
          "--urgency=critical",
          "--icon=dialog-error",
          "--hint=string:sound-name:dialog-error",
          "--",
          "Invoicegpj.exe <b>now</b> & then",
          "&lt;a href=file:///etc/passwd&gt;x&lt;/a&gt; &lt;img src=http://tracker.example/p.png&gt; Tom &amp; Jerry &amp;amp;"
        ]
      ])
    })
  )

  it.effect("US-18 the same payload read from SSH_ORIGINAL_COMMAND, with a fade key: --print-id, and the body escaped exactly once", () =>
    Effect.gen(function* () {
      const p = payload("ocpool-notify/1", "show", "desk:ses_1", "T\u2067\u2069", "a & b < c > d\u009b[31m", "normal", "dialog-information", "question")
      yield* receive({ ...env, SSH_ORIGINAL_COMMAND: p }, "linux")
      const calls = taken()
      expect(calls).toEqual([
        ["--app-name=opencode", "--urgency=normal", "--icon=dialog-information", "--hint=string:sound-name:message-new-instant", "--print-id", "--", "T", "a &amp; b &lt; c &gt; d [31m"]
      ])
      for (const a of calls[0]!) expect(FORBIDDEN.test(a)).toBe(false)
    })
  )

  it.effect("US-18.5 an unrecognised payload holding markup and bidi controls is shown as text: escaped in the body, controls gone", () =>
    Effect.gen(function* () {
      yield* handleReceived(decodePayload("<script>&\u202e\u0085x</script>"), env, "linux")
      expect(taken()).toEqual([["--app-name=opencode", "--urgency=normal", "--icon=utilities-terminal", "--", "opencode-pool: unrecognised message", "&lt;script&gt;&amp; x&lt;/script&gt;"]])
    })
  )
})
