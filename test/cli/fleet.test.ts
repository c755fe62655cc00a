/**
 * `ocpool fleet init` (issue 22) in-process through `runCli`: usage errors, bad input, help. No server.
 * The fleet driver is a development entry since issue 34 (test/dev/fleetDrive.test.ts): `ocpool fleet` has no `drive`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { chmodSync, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { runCli } from "../../src/cli/app.js"
import { captureStream, type CliIo } from "../../src/cli/output.js"
import { oneLine } from "../support/cliLines.js"

const run = (args: ReadonlyArray<string>, env: Record<string, string | undefined> = {}) =>
  Effect.gen(function* () {
    const io: CliIo & { stdout: { text: string }; stderr: { text: string } } = { stdout: captureStream(false), stderr: captureStream(false), stdinIsTTY: false, env }
    const code = yield* runCli(["node", "ocpool", "fleet", ...args], io)
    return { code, stdout: io.stdout.text, stderr: io.stderr.text }
  })

const dir = () => {
  const d = mkdtempSync(join(tmpdir(), "ocpool-fleet-cli-"))
  chmodSync(d, 0o700)
  return d
}

describe("ocpool fleet init", () => {
  it.effect("US-52 no --url and no OCPOOL_STATE_URL: one line, exit 2", () =>
    Effect.gen(function* () {
      oneLine(yield* run(["init"]), /--url .*OCPOOL_STATE_URL/)
      oneLine(yield* run(["init"], { OCPOOL_STATE_URL: "" }), /--url/)
    })
  )
  it.effect("US-52 a URL checkUrl refuses: one line naming --url, the password never shown, exit 2", () =>
    Effect.gen(function* () {
      const r = yield* run(["init", "--url", "mysql://u:hunter22@db:3306/x"])
      // not postgres://: everything from the first colon is hidden (a password can hold // and :)
      oneLine(r, /--url mysql:\*\*\*@db:3306\/x invalid \(not a postgres:\/\/ URL/)
      expect(r.stderr).not.toContain("hunter22")
      oneLine(yield* run(["init"], { OCPOOL_STATE_URL: "not a url" }), /--url .* invalid \(not a URL\)/)
    })
  )
  it.effect("US-52 a bad --schema: one line naming --schema, exit 2", () =>
    Effect.gen(function* () {
      oneLine(yield* run(["init", "--url", "postgres://u:p@127.0.0.1:1/db", "--schema", "Bad-Name"]), /--schema "Bad-Name" invalid/)
    })
  )
  it.effect("US-52 a server that is not there: one line with the masked URL and why, exit 1, no password", () =>
    Effect.gen(function* () {
      const r = yield* run(["init", "--url", "postgres://u:hunter22@127.0.0.1:1/db"], { OCPOOL_STATE_DIR: dir() })
      expect(r.code).toBe(1)
      expect(r.stdout).toBe("")
      const lines = r.stderr.trimEnd().split("\n")
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatch(/^ocpool: cannot reach PostgreSQL at postgres:\/\/u:\*\*\*@127\.0\.0\.1:1\/db: \S/)
      expect(r.stderr).not.toContain("hunter22")
    })
  , 30_000)
  it.effect("US-52 --help tells what it does, the option it prints and the exit codes", () =>
    Effect.gen(function* () {
      const r = yield* run(["init", "--help"])
      expect(r.code).toBe(0)
      for (const w of ["--url", "--schema", "OCPOOL_STATE_URL", "masked", "migrations", "Exit 0; 1", "2 without a URL"]) expect(r.stdout).toContain(w)
    })
  )
  it.effect("US-52 `fleet` has init and no drive (a development entry since issue 34): its help lists init only; `fleet drive` is an unknown command, exit 2", () =>
    Effect.gen(function* () {
      const top = yield* run(["--help"])
      expect(top.code).toBe(0)
      expect(top.stdout).toContain("init")
      expect(top.stdout).not.toContain("drive")
      const r = yield* run(["drive", "--config", "x.json"])
      expect(r.code).toBe(2)
      expect(r.stdout).toBe("")
      expect(r.stderr.split("\n")[0]).toMatch(/^ocpool: fleet: unknown command 'drive'/)
    })
  )
})
