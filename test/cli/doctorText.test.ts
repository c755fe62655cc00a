/** `ocpool doctor` prints details that carry text from files (models, paths) without escape sequences, on a terminal too. */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { mkdirSync, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { runCli } from "../../src/cli/app.js"
import { captureStream, type CliIo } from "../../src/cli/output.js"
import { seedCooldowns } from "../support/stateDb.js"


describe("doctor's text output", () => {
  it.effect("US-46 a cooling model named with escape sequences reaches a terminal escaped, in text and in JSON", () =>
    Effect.gen(function* () {
      const base = mkdtempSync(join(tmpdir(), "ocpool-doctor-text-"))
      const state = join(base, "state")
      mkdirSync(state, { mode: 0o700 })
      const model = "zen/\u001b]0;owned\u0007\u001b[31mred\u009b"
      const now = Date.now()
      seedCooldowns(state, [{ model, reason: "rate_limit", strikes: 1, scope: "model", since: now, until: now + 600_000, source: "backoff" }])
      process.env.XDG_CONFIG_HOME = join(base, "config")
      for (const json of [false, true]) {
        const stdout = captureStream(true)
        const stderr = captureStream(true)
        const io: CliIo = { stdout, stderr, stdinIsTTY: false, env: {} }
        yield* runCli(["node", "ocpool", "doctor", "--state-dir", state, ...(json ? ["--json"] : [])], io)
        expect(stdout.text).toContain("zen/")
        expect(stdout.text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/)
      }
    })
  )
})
