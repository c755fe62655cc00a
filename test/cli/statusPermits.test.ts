/** `ocpool status` shows the heavy-work queue (issue 21): who holds, who waits, behind whom. */
import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import type { PermitEntry } from "../../src/core/permits/types.js"
import { seedPermits } from "../support/stateDb.js"
import { startTimeOf } from "../../src/layers/state/proc.js"

const root = new URL("../../", import.meta.url).pathname
const cli = join(root, "bin/ocpool.js")
const tmp = () => mkdtempSync(join(tmpdir(), "ocpool-status-permits-"))

const ocpool = (args: ReadonlyArray<string>) => {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: "utf8", timeout: 30_000, env: { ...process.env, XDG_CONFIG_HOME: tmp(), OCPOOL_STATE_DIR: "", OCPOOL_PERMITS: "1" } })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

const entry = (id: string, seq: number, reason: string, granted: boolean, session: string): PermitEntry => ({
  id,
  token: `t-${id}`,
  budget: "heavy",
  weight: 1,
  reason,
  holder: { host: hostname(), pid: process.pid, startToken: startTimeOf(process.pid), session, via: "plugin" },
  seq,
  requestedAt: Date.now() - 30_000,
  ...(granted ? { grantedAt: Date.now() - 20_000 } : {})
})

describe("ocpool status with permits (issue 21)", () => {
  it("US-51 the permits section names the holder, each waiter in order and whom it waits behind; --json carries the budgets", () => {
    const dir = join(tmp(), "state")
    mkdirSync(dir, { mode: 0o700 })
    seedPermits(dir, [entry("p-aaaa0001", 1, "npm test", true, "ses_one"), entry("p-bbbb0002", 2, "cargo build", false, "ses_two")])
    const text = ocpool(["status", "--state-dir", dir])
    expect(text.code).toBe(0)
    expect(text.stdout).toContain("permits:\n  heavy: 1/1 units used, 1 waiting")
    expect(text.stdout).toMatch(/holds {2}p-aaaa0001 {2}w1 {2}pid \d+ ses_one \(plugin\) {2}20s {2}npm test/)
    expect(text.stdout).toMatch(/1\. {4}p-bbbb0002 {2}w1 {2}pid \d+ ses_two \(plugin\) {2}waiting 30s behind p-aaaa0001 {2}cargo build/)
    const json = JSON.parse(ocpool(["status", "--json", "--state-dir", dir]).stdout) as { permits: Array<{ name: string; capacity: number; used: number; queue: Array<{ id: string }> }> }
    expect(json.permits[0]).toMatchObject({ name: "heavy", capacity: 1, used: 1, queue: [{ id: "p-bbbb0002" }] })
  })

  it("US-51 no permit held or waited for: no permits section, no permits key", () => {
    const dir = join(tmp(), "state")
    const text = ocpool(["status", "--state-dir", dir])
    expect(text.code).toBe(0)
    expect(text.stdout).not.toContain("permits:")
    expect(JSON.parse(ocpool(["status", "--json", "--state-dir", dir]).stdout)).not.toHaveProperty("permits")
  })
})

describe("the CLI's log lines (issue 21)", () => {
  it("US-51 a warning is one line on stderr, never a second copy on stdout: `permits --json` with an unusable OCPOOL_TRACE still prints only its JSON", () => {
    const dir = join(tmp(), "state")
    const r = spawnSync(process.execPath, [cli, "permits", "--json", "--state-dir", dir], {
      encoding: "utf8",
      timeout: 30_000,
      env: { ...process.env, XDG_CONFIG_HOME: tmp(), OCPOOL_STATE_DIR: "", OCPOOL_TRACE: "/proc/nope/trace.jsonl" }
    })
    expect(r.status).toBe(0)
    expect(() => JSON.parse(r.stdout)).not.toThrow()
    expect(r.stderr.split("\n").filter((l) => l.includes("cannot be written"))).toHaveLength(1)
    expect(r.stderr).toMatch(/^ocpool warn: trace \/proc\/nope\/trace\.jsonl cannot be written/m)
  })
})


describe("invisible controls never reach the terminal (issue 33 item 8)", () => {
  // right-to-left override, isolates, zero-width space and joiner, BOM, a tag character, a lone surrogate
  const HOSTILE = "npm\u202e tset\u2066x\u2069\u200b\u200d\ufeff\u{e0041}\ud800 end"

  it("US-51 permit reasons, sessions and budget names with bidi and other invisible characters are shown without them in status and permits; --json escapes them", () => {
    const dir = join(tmp(), "state")
    mkdirSync(dir, { mode: 0o700 })
    seedPermits(dir, [entry("p-cccc0003", 1, HOSTILE, true, `ses_\u202eevil`)])
    for (const args of [["status"], ["permits"]]) {
      const out = ocpool([...args, "--state-dir", dir])
      expect(out.code).toBe(0)
      expect(out.stdout).toContain("npm tsetx? end")
      expect(out.stdout).not.toMatch(/[\u202a-\u202e\u2066-\u2069\u200b-\u200f\ufeff\u{e0000}-\u{e007f}\ud800-\udfff]/u)
    }
    for (const args of [["status", "--json"], ["permits", "--json"]]) {
      const out = ocpool([...args, "--state-dir", dir]).stdout
      expect(out).not.toMatch(/[\u202a-\u202e\u2066-\u2069\u200b-\u200f\ufeff]/)
      expect(out).toContain("\\u202e")
      expect(JSON.stringify(JSON.parse(out))).toContain(HOSTILE.slice(0, 4))
    }
  })
})

describe("an invalid OCPOOL_PERMITS is said, not ignored silently (issue 33 item 9)", () => {
  const run = (args: ReadonlyArray<string>, value: string) => {
    const home = tmp()
    const r = spawnSync(process.execPath, [cli, ...args], {
      encoding: "utf8",
      timeout: 30_000,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, XDG_CONFIG_HOME: join(home, "config"), XDG_STATE_HOME: join(home, "xdg"), OCPOOL_STATE_DIR: join(home, "state"), OCPOOL_PERMITS: value }
    })
    return { code: r.status, stdout: r.stdout, stderr: r.stderr }
  }
  const said = 'OCPOOL_PERMITS "lots" invalid (a whole number 1-1024 or "auto"); ignored'

  it("US-51 permits and run say it in one stderr line; status shows it among its warnings; doctor's permits check warns; a valid value says nothing", () => {
    const permits = run(["permits"], "lots")
    expect(permits.code).toBe(0)
    expect(permits.stderr.split("\n").filter((l) => l.includes(said))).toHaveLength(1)
    expect(permits.stdout).not.toContain("OCPOOL_PERMITS")
    const ran = run(["run", "--", "true"], "lots")
    expect(ran.code).toBe(0)
    expect(ran.stderr.split("\n").filter((l) => l.includes(said))).toHaveLength(1)
    expect(run(["status"], "lots").stdout).toContain(`warning: ${said}`)
    expect(run(["doctor"], "lots").stdout).toMatch(new RegExp(`^warn permits .*${said.replace(/[()"]/g, ".")}`, "m"))
    const fine = run(["permits"], "2")
    expect(`${fine.stdout}${fine.stderr}`).not.toContain("invalid")
    expect(run(["doctor"], "2").stdout).toMatch(/^ok +permits/m)
  })
})
