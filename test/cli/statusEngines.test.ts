/**
 * `ocpool status` and `ocpool doctor` say whether a running opencode has the plugin loaded (issue 33):
 * an engine registers itself when it starts and goes when it is disposed, so an idle one (no claims,
 * "0 processes") is seen too. The plugin is booted from the sources in this process (test/plugin/boot.ts,
 * a temporary state directory); the built CLI (the fast `status` path) and the command tree read it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { runCli } from "../../src/cli/app.js"
import { captureStream, type CliIo } from "../../src/cli/output.js"
import { boot } from "../plugin/boot.js"
import { cli, ensureBuilt } from "./builtCli.js"

const base = mkdtempSync(join(tmpdir(), "ocpool-engines-"))
// the plugin and the command tree read this process's environment: away from the real home
process.env.HOME = join(base, "home")
process.env.XDG_CONFIG_HOME = join(base, "config")
process.env.XDG_STATE_HOME = join(base, "xstate")
process.env.OCPOOL_STATE_DIR = ""

const builtStatus = (args: ReadonlyArray<string>) => {
  const r = spawnSync(process.execPath, [cli, "status", ...args], { encoding: "utf8", timeout: 30_000, env: { ...process.env } })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

/** The command tree (not the fast path) on `args`. */
const fullCli = (args: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const stdout = captureStream(false)
    const stderr = captureStream(false)
    const io: CliIo = { stdout, stderr, stdinIsTTY: false, env: {} }
    const code = yield* runCli(["node", "ocpool", ...args], io)
    return { code, stdout: stdout.text, stderr: stderr.text }
  })

const LOADED = new RegExp(`^plugin loaded in 1 opencode process: pid ${process.pid} \\(v0\\.0\\.0-dev, sqlite, since \\d+s\\)$`)

describe("the plugin engines on record (issue 33)", () => {
  ensureBuilt("status --help")

  it.live("US-46 an idle opencode with the plugin loaded (no claims, 0 processes) is shown by status, text and --json, fast path and command tree alike, and by doctor; gone once disposed", () =>
    Effect.gen(function* () {
      const b = yield* Effect.promise(() => boot({ models: { slots: [{ model: "zen/alpha", weight: 1 }] } }))
      try {
        const text = builtStatus(["--state-dir", b.stateDir])
        expect([text.code, text.stderr]).toEqual([0, ""])
        const lines = text.stdout.split("\n")
        expect(lines[0]).toMatch(/^opencode-pool: 0 claims in flight, 0 processes, /)
        expect(lines[1]).toMatch(LOADED)
        const json = JSON.parse(builtStatus(["--json", "--state-dir", b.stateDir]).stdout) as { processes: Array<unknown>; engines: Array<Record<string, unknown>> }
        expect(json.processes).toEqual([])
        expect(json.engines).toEqual([{ host: hostname(), pid: process.pid, version: "0.0.0-dev", backend: "sqlite", since: expect.any(Number), live: true, local: true }])
        // the command tree prints the same line
        const full = yield* fullCli(["status", "--state-dir", b.stateDir])
        expect(full.stdout.split("\n")[1]).toMatch(LOADED)
        const doctor = yield* fullCli(["doctor", "--json", "--state-dir", b.stateDir])
        const checks = JSON.parse(doctor.stdout) as { checks: Array<{ id: string; status: string; detail: string }> }
        expect(checks.checks.find((c) => c.id === "plugin-loaded")).toMatchObject({ status: "ok", detail: expect.stringMatching(LOADED) })
      } finally {
        yield* Effect.promise(() => Promise.resolve(b.hooks.dispose?.()))
      }
      // disposed: its registration went with it
      expect(builtStatus(["--state-dir", b.stateDir]).stdout.split("\n")[1]).toBe("plugin loaded in no running opencode process")
      const doctor = yield* fullCli(["doctor", "--json", "--state-dir", b.stateDir])
      const after = (JSON.parse(doctor.stdout) as { checks: Array<{ id: string; status: string; detail: string }> }).checks.find((c) => c.id === "plugin-loaded")
      expect(after).toMatchObject({ status: "ok", detail: expect.stringMatching(/^plugin loaded in no running opencode process \(/) })
    })
  )
})
