import { describe, expect, it } from "@effect/vitest"
import { execFileSync, spawnSync, spawn as spawnProcess } from "node:child_process"
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, truncateSync, writeFileSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { claimRowsIn, seedClaims, seedCooldowns, seedSql } from "../support/stateDb.js"
import type { Claim } from "../../src/core/pool/claims.js"
import { startTimeOf } from "../../src/layers/state/proc.js"
import { makeClaim } from "../helpers.js"

const root = new URL("../../", import.meta.url).pathname
const cli = join(root, "bin/ocpool.js")
const tmp = () => mkdtempSync(join(tmpdir(), "ocpool-status-"))

/** Runs the built CLI with its own config dir (so no user pool file leaks in). */
const ocpool = (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const config = tmp()
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: "utf8", timeout: 30_000, env: { ...process.env, XDG_CONFIG_HOME: config, OCPOOL_STATE_DIR: "", ...env } })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, config }
}

const claim = (key: string, model: string, base = "explore"): Claim => makeClaim(key, model, base)

const writeClaims = (dir: string, pid: number, claims: ReadonlyArray<Claim>, extra: { host?: string; startTime?: string | null; reaped?: number; writtenAt?: number } = {}) =>
  seedClaims(dir, { pid, startTime: extra.startTime === undefined ? startTimeOf(pid) : extra.startTime, host: extra.host ?? hostname(), writtenAt: extra.writtenAt ?? Date.now(), reaped: extra.reaped ?? 0, claims })

const POOL = "zen/alpha 3\ngo/gamma 1\n"

/** A live process we own, to hold claims in a peer file. */
const sleeper = () => spawnProcess(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" })

describe("ocpool status (SPEC §9)", () => {
  it("US-46 an empty state dir: exit 0, every load 0, next is slot 1 in the first pass", () => {
    const r = ocpool(["status", "--json", "--state-dir", join(tmp(), "absent")])
    expect(r.code).toBe(0)
    const view = JSON.parse(r.stdout) as { next: unknown; slots: Array<{ load: number }> }
    expect(view.slots.every((s) => s.load === 0)).toBe(true)
    expect(view.next).toMatchObject({ slot: 1, pass: "first" })
  })

  it("US-46 an unreadable state dir exits 1 with a message on stderr", () => {
    const file = join(tmp(), "file")
    writeFileSync(file, "x")
    const r = ocpool(["status", "--state-dir", file])
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/^ocpool: state dir .* unreadable: not a directory\n$/)
  })

  it("US-6 claims of two processes sum per slot, split by base, and both pids are listed", () => {
    const dir = tmp()
    const a = sleeper()
    const b = sleeper()
    try {
      writeClaims(dir, a.pid!, [claim("p:1", "zen/alpha"), claim("p:2", "zen/alpha", "implement")], { reaped: 1 })
      writeClaims(dir, b.pid!, [claim("q:1", "zen/alpha"), claim("q:2", "go/gamma", "context")])
      const poolFile = join(dir, "pool.txt")
      writeFileSync(poolFile, POOL)
      const r = ocpool(["status", "--json", "--state-dir", dir, "--pool", poolFile])
      expect(r.code).toBe(0)
      const v = JSON.parse(r.stdout) as { slots: Array<{ load: number; byBase: Record<string, number> }>; processes: Array<{ pid: number }>; claims: number; reaped: number }
      expect(v.slots.map((s) => [s.load, s.byBase])).toEqual([
        [3, { explore: 2, implement: 1 }],
        [1, { context: 1 }]
      ])
      expect(v.processes.map((p) => p.pid).sort()).toEqual([a.pid, b.pid].sort())
      expect(v.reaped).toBe(1)
    } finally {
      a.kill()
      b.kill()
    }
  })

  it("US-6 a model cooling at strike 2 shows reason, strike and until in the view", () => {
    const dir = tmp()
    const until = Date.now() + 120_000
    seedCooldowns(dir, [{ model: "zen/alpha", reason: "rate_limit", strikes: 2, scope: "model", since: Date.now(), until, source: "backoff" }])
    const poolFile = join(dir, "pool.txt")
    writeFileSync(poolFile, POOL)
    const json = JSON.parse(ocpool(["status", "--json", "--state-dir", dir, "--pool", poolFile]).stdout) as { slots: Array<{ cooling: unknown }>; next: unknown }
    expect(json.slots[0]!.cooling).toEqual({ until, reason: "rate_limit", strikes: 2 })
    expect(json.next).toMatchObject({ slot: 2 })
    const text = ocpool(["status", "--state-dir", dir, "--pool", poolFile]).stdout
    expect(text).toMatch(/1\. zen\/alpha +w3 +load 0\/6 +COOLING rate_limit strike 2 until \d\d:\d\d:\d\dZ \((1m\d\ds|2m00s)\)/)
  })

  it("US-41 status counts neither a dead pid, a reused pid nor a holder 3 hours quiet; a live pid with its own start time and another host's fresh row count; the view writes nothing", () => {
    const dir = tmp()
    const live = sleeper()
    const other = sleeper()
    try {
      writeClaims(dir, 999_999, [claim("dead:1", "zen/alpha")])
      writeClaims(dir, live.pid!, [claim("reused:1", "zen/alpha")], { startTime: "1" })
      writeClaims(dir, other.pid!, [claim("old:1", "zen/alpha")], { writtenAt: Date.now() - 3 * 3_600_000 })
      writeClaims(dir, 999_998, [claim("remote:1", "zen/alpha")], { host: "some-other-host" })
      writeClaims(dir, process.pid, [claim("alive:1", "zen/alpha")])
      const r = ocpool(["status", "--json", "--state-dir", dir])
      expect(r.code).toBe(0)
      expect((JSON.parse(r.stdout) as { processes: Array<{ pid: number }> }).processes.map((p) => p.pid).sort()).toEqual([999_998, process.pid].sort())
      // a view never takes the write lock: the gone holders' rows are reaped by the next transaction
      expect(claimRowsIn(dir)).toHaveLength(5)
    } finally {
      live.kill()
      other.kill()
    }
  })
})

describe("ocpool doctor (SPEC §12.2)", () => {
  it("US-46 a state dir with mode 0755 makes the state-dir check warn", () => {
    const dir = tmp()
    chmodSync(dir, 0o755)
    const r = ocpool(["doctor", "--json", "--state-dir", dir])
    const out = JSON.parse(r.stdout) as { checks: Array<{ id: string; status: string }>; ok: boolean }
    expect(out.checks.find((c) => c.id === "state-dir")?.status).toBe("warn")
  })

  it("US-46 an unusable pool file in the config directory fails the pool check and exits 1", () => {
    const config = tmp()
    mkdirSync(join(config, "opencode-pool"), { recursive: true })
    writeFileSync(join(config, "opencode-pool", "pool.txt"), "no-provider-here\n")
    const r = ocpool(["doctor", "--json", "--state-dir", tmp()], { XDG_CONFIG_HOME: config })
    expect(r.code).toBe(1)
    const out = JSON.parse(r.stdout) as { checks: Array<{ id: string; status: string }>; ok: boolean }
    expect(out.checks.find((c) => c.id === "pool")?.status).toBe("fail")
    expect(out.ok).toBe(false)
  })

  it("US-46 the notifier check names notify-send when it is on PATH, and says no channel exists otherwise", () => {
    const bin = tmp()
    writeFileSync(join(bin, "notify-send"), "#!/bin/sh\nexit 0\n", { mode: 0o755 })
    // a session bus to reach (without one the check warns: doctorNotify.test.ts)
    const withIt = JSON.parse(ocpool(["doctor", "--json", "--state-dir", tmp()], { PATH: `${bin}:${process.env.PATH}`, DBUS_SESSION_BUS_ADDRESS: "unix:path=/tmp/ocpool-test-bus" }).stdout) as { checks: Array<{ id: string; detail: string }> }
    expect(withIt.checks.find((c) => c.id === "notifier")?.detail).toBe("notify-send")
    const without = JSON.parse(ocpool(["doctor", "--json", "--state-dir", tmp()], { PATH: "/nonexistent" }).stdout) as { checks: Array<{ id: string; detail: string }> }
    expect(without.checks.find((c) => c.id === "notifier")?.detail).toContain("no notification channel")
  })
})

describe("ocpool init (SPEC §12.2)", () => {
  it("US-15 init writes pool.txt and exits 0; a second run without --force exits 1 and leaves the file unchanged", () => {
    const config = tmp()
    const first = ocpool(["init"], { XDG_CONFIG_HOME: config })
    expect(first.code).toBe(0)
    expect(first.stdout).toContain("dist/opencode-plugin.js\"]")
    const path = join(config, "opencode-pool", "pool.txt")
    const body = readFileSync(path, "utf8")
    writeFileSync(path, `${body}# mine\n`)
    const second = ocpool(["init"], { XDG_CONFIG_HOME: config })
    expect(second.code).toBe(1)
    expect(second.stderr).toContain("--force")
    expect(readFileSync(path, "utf8")).toBe(`${body}# mine\n`)
    const forced = ocpool(["init", "--force", "--json"], { XDG_CONFIG_HOME: config })
    expect(JSON.parse(forced.stdout)).toEqual({ path, format: "txt", written: true })
    const status = JSON.parse(ocpool(["status", "--json", "--state-dir", tmp()], { XDG_CONFIG_HOME: config }).stdout) as { origin: string }
    expect(status.origin).toBe(path)
  })
})

describe("ocpool status with a missing --pool file", () => {
  it("US-46 a --pool file that cannot be read is a one-line error with exit 2", () => {
    const r = ocpool(["status", "--pool", "/nonexistent/pool.txt", "--state-dir", tmp()])
    expect(r.code).toBe(2)
    expect(r.stderr).toBe("ocpool: cannot read /nonexistent/pool.txt: no such file or directory\n")
  })
})

describe("hostile input files for status and doctor (docs/OPERATIONS.md Limits)", () => {
  const configWith = (name: string, make: (path: string) => void) => {
    const config = tmp()
    mkdirSync(join(config, "opencode-pool"), { recursive: true })
    make(join(config, "opencode-pool", name))
    return config
  }
  const quick = (args: ReadonlyArray<string>, env: Record<string, string>) => {
    const r = spawnSync(process.execPath, [cli, ...args], { encoding: "utf8", timeout: 15_000, killSignal: "SIGKILL", env: { ...process.env, OCPOOL_STATE_DIR: "", ...env } })
    return { code: r.status, stdout: r.stdout, stderr: r.stderr }
  }

  it("US-7 a 100 MB pool.txt is one warning and a fallback, not a RangeError", () => {
    const config = configWith("pool.txt", (p) => {
      writeFileSync(p, "")
      truncateSync(p, 100_000_000)
    })
    const r = quick(["status", "--json", "--state-dir", tmp()], { XDG_CONFIG_HOME: config })
    expect(r.code).toBe(0)
    expect(r.stderr).toBe("")
    const view = JSON.parse(r.stdout) as { origin: string; warnings: Array<string> }
    expect(view.origin).not.toContain("pool.txt")
    expect(view.warnings.some((w) => w.includes("unreadable (larger than 1 MiB)"))).toBe(true)
  })

  it("US-7 a pool file that is a FIFO or a link to /dev/zero: status and doctor answer at once", () => {
    for (const [name, make] of [["pool.txt", (p: string) => execFileSync("mkfifo", [p])], ["pool.json", (p: string) => symlinkSync("/dev/zero", p)]] as const) {
      const config = configWith(name, make)
      const status = quick(["status", "--json", "--state-dir", tmp()], { XDG_CONFIG_HOME: config })
      expect(status.code).toBe(0)
      expect((JSON.parse(status.stdout) as { warnings: Array<string> }).warnings.join("\n")).toMatch(/not a regular file/)
      const doctor = quick(["doctor", "--json", "--state-dir", tmp()], { XDG_CONFIG_HOME: config })
      expect(doctor.code).toBe(1)
      expect((JSON.parse(doctor.stdout) as { checks: Array<{ id: string; status: string }> }).checks.find((c) => c.id === "pool")?.status).toBe("fail")
    }
  })

  it("US-7 a pool.txt that is a symbolic link loop warns in status (and fails doctor's pool check)", () => {
    const config = configWith("pool.txt", (p) => symlinkSync(p, p))
    const status = quick(["status", "--json", "--state-dir", tmp()], { XDG_CONFIG_HOME: config })
    expect((JSON.parse(status.stdout) as { warnings: Array<string> }).warnings.join("\n")).toContain("a symbolic link loop")
    const doctor = quick(["doctor", "--json", "--state-dir", tmp()], { XDG_CONFIG_HOME: config })
    expect(doctor.code).toBe(1)
  })

  it("US-7 a pool.json that starts with a byte-order mark is accepted by status", () => {
    const config = configWith("pool.json", (p) => writeFileSync(p, '\ufeff{"slots":[{"model":"zen/bom","weight":2}]}'))
    const r = quick(["status", "--json", "--state-dir", tmp()], { XDG_CONFIG_HOME: config })
    const view = JSON.parse(r.stdout) as { origin: string; slots: Array<{ model: string }>; warnings: Array<string> }
    expect(view.slots.map((s) => s.model)).toEqual(["zen/bom"])
    expect(view.warnings).toEqual([])
  })

  it("US-46 a --pool that is a link loop, a FIFO or a directory is one line and exit 2", () => {
    const dir = tmp()
    symlinkSync(join(dir, "loop"), join(dir, "loop"))
    execFileSync("mkfifo", [join(dir, "fifo")])
    for (const [name, reason] of [["loop", "a symbolic link loop (too many symbolic links)"], ["fifo", "not a regular file (a FIFO)"], [".", "not a regular file (a directory)"]]) {
      const r = quick(["status", "--pool", join(dir, name!), "--state-dir", tmp()], {})
      expect(r.code).toBe(2)
      expect(r.stderr).toBe(`ocpool: cannot read ${join(dir, name!)}: ${reason}\n`)
    }
  })

  it("US-9 a cooldown whose until is beyond the date range is an invalid value: doctor --json still prints its report", () => {
    for (const until of ["1e16", "8640000000000001"]) {
      const dir = tmp()
      chmodSync(dir, 0o700)
      seedSql(dir, "INSERT INTO cooldowns (model, body, expires_at) VALUES ('zen/alpha', ?, ?)", [`{"model":"zen/alpha","until":${until}}`, Number.MAX_SAFE_INTEGER])
      const r = quick(["doctor", "--json", "--state-dir", dir], {})
      const out = JSON.parse(r.stdout) as { checks: Array<{ id: string; detail: string }> }
      expect(out.checks.find((c) => c.id === "cooldowns")?.detail).toBe("no model cooling")
      const status = quick(["status", "--state-dir", dir], {})
      expect(status.code).toBe(0)
    }
  })

  it("US-6 claim keys, sessions and hosts from a peer's file reach the terminal without escape sequences", () => {
    const dir = tmp()
    const peer = sleeper()
    try {
      writeClaims(dir, peer.pid!, [{ ...claim("\u001b]0;pwned\u0007key\u009b31m", "zen/alpha"), targetSession: "ses_\u001b[2J" }])
      const poolFile = join(tmp(), "pool.txt")
      writeFileSync(poolFile, POOL)
      const r = quick(["status", "--state-dir", dir, "--pool", poolFile], {})
      expect(r.code).toBe(0)
      // eslint-disable-next-line no-control-regex
      expect(r.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/)
      expect(r.stdout).toMatch(/^ {4}key {2}explore-1 zen\/alpha {2}ses_ {2}age /m)
      const json = quick(["status", "--json", "--state-dir", dir, "--pool", poolFile], {})
      expect(json.stdout).not.toMatch(/[\u007f-\u009f]/)
    } finally {
      peer.kill()
    }
  })

  it("US-6 a claims row nested 5,000 levels deep does not break status", () => {
    const dir = tmp()
    seedSql(dir, "INSERT INTO claims (host, pid, instance, gen, body, written_at) VALUES (?, 4242, 0, 1, ?, ?)", [hostname(), `{"pid":4242,"claims":{"k":${"[".repeat(5000)}${"]".repeat(5000)}},"x":${"{\"a\":".repeat(5000)}1${"}".repeat(5000)}}`, Date.now()])
    const r = quick(["status", "--json", "--state-dir", dir], {})
    expect(r.code).toBe(0)
    expect(r.stderr).toBe("")
  })
})
