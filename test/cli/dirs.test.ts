/**
 * The CLI's directories as a user meets them (SPEC §2.1, §12.1): no home directory, directories under
 * /proc or behind a file, a state dir that is a link or not plainly a state dir, and a doctor that
 * prints its whole report whatever one check meets. Every run has its own temp HOME and XDG dirs.
 */
import { describe, expect, it } from "@effect/vitest"
import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { cooldownFileName } from "../../src/core/pool/cooldownFile.js"
import { OpencodeDb } from "../retention/opencodeDb.js"

const root = new URL("../../", import.meta.url).pathname
const cli = join(root, "bin/ocpool.js")
const tmp = () => mkdtempSync(join(tmpdir(), "ocpool-dirs-"))

/** A child environment with its own HOME and XDG dirs; `null` removes a variable. */
const envWith = (over: Record<string, string | null> = {}): NodeJS.ProcessEnv => {
  const home = tmp()
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, "config"), XDG_STATE_HOME: join(home, "state"), XDG_DATA_HOME: join(home, "data"), OCPOOL_STATE_DIR: "", OPENCODE_DB: "" }
  for (const [k, v] of Object.entries(over)) {
    if (v === null) delete env[k]
    else env[k] = v
  }
  return env
}

/** Runs the built CLI; a run that does not end within 15 s is killed (status null; SIGKILL, as a process stuck in a synchronous call never handles SIGTERM). */
const ocpool = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, extra: { uid?: number } = {}) => {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: "utf8", timeout: 15_000, killSignal: "SIGKILL", env, cwd: "/", ...(extra.uid !== undefined ? { uid: extra.uid, gid: extra.uid } : {}) })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

const oneLine = (stderr: string) => {
  expect(stderr).not.toMatch(/\n\s+at /)
  expect(stderr.split("\n").filter((l) => l !== "")).toHaveLength(1)
}

type Doctor = { checks: Array<{ id: string; status: string; detail: string }>; ok: boolean }
const check = (out: string, id: string) => (JSON.parse(out) as Doctor).checks.find((c) => c.id === id)

/** An earlier version's old orphan tmp and an unparseable cooldown file. */
const litter = (dir: string) => {
  writeFileSync(join(dir, "claims.7.json.tmp"), "{}")
  writeFileSync(join(dir, "cooldown.zen_2falpha.json"), "not json")
  const old = (Date.now() - 600_000) / 1000
  for (const n of ["claims.7.json.tmp", "cooldown.zen_2falpha.json"]) utimesSync(join(dir, n), old, old)
  return readdirSync(dir).sort()
}

describe("ocpool init: directory problems are one line, exit 1 (SPEC §12.1)", () => {
  it("US-15 a config home under /proc ends at once with the path and the reason", () => {
    const r = ocpool(["init"], envWith({ XDG_CONFIG_HOME: "/proc/nope" }))
    expect(r.code).toBe(1)
    expect(r.stderr).toBe("ocpool: /proc/nope: cannot be created (no such file or directory)\n")
  })

  it("US-15 a config home that is a regular file, and a pool.txt that is a directory, each name the path", () => {
    const base = tmp()
    writeFileSync(join(base, "file"), "x")
    const r = ocpool(["init"], envWith({ XDG_CONFIG_HOME: join(base, "file") }))
    expect(r.code).toBe(1)
    expect(r.stderr).toBe(`ocpool: ${join(base, "file")}: not a directory\n`)
    mkdirSync(join(base, "config", "opencode-pool", "pool.txt"), { recursive: true })
    const d = ocpool(["init", "--force"], envWith({ XDG_CONFIG_HOME: join(base, "config") }))
    expect(d.code).toBe(1)
    expect(d.stderr).toBe(`ocpool: ${join(base, "config", "opencode-pool", "pool.txt")}: is a directory\n`)
  })

  it("US-15 init --force replaces a FIFO or a link at pool.txt instead of blocking on it or writing through it", () => {
    const base = tmp()
    const dir = join(base, "config", "opencode-pool")
    mkdirSync(dir, { recursive: true })
    execFileSync("mkfifo", [join(dir, "pool.txt")])
    const f = ocpool(["init", "--force"], envWith({ XDG_CONFIG_HOME: join(base, "config") }))
    expect(f.code).toBe(0)
    expect(lstatSync(join(dir, "pool.txt")).isFile()).toBe(true)
    const victim = join(base, "victim.txt")
    writeFileSync(victim, "keep me")
    rmSync(join(dir, "pool.txt"))
    symlinkSync(victim, join(dir, "pool.txt"))
    const l = ocpool(["init", "--force"], envWith({ XDG_CONFIG_HOME: join(base, "config") }))
    expect(l.code).toBe(0)
    expect(readFileSync(victim, "utf8")).toBe("keep me")
    expect(lstatSync(join(dir, "pool.txt")).isSymbolicLink()).toBe(false)
    expect(readdirSync(dir)).toEqual(["pool.txt"])
  })

  const canDropPrivileges = process.getuid?.() === 0 && process.platform === "linux"
  it.skipIf(!canDropPrivileges)("US-15 no home directory at all (no HOME, no system entry): init, status, sweep say so in one line; doctor still prints its report", () => {
    const env = envWith({ HOME: null, XDG_CONFIG_HOME: null, XDG_STATE_HOME: null, XDG_DATA_HOME: null })
    const uid = 54_321 // no passwd entry: the system has no home for it either
    const init = ocpool(["init"], env, { uid })
    expect(init.code).toBe(1)
    expect(init.stderr).toMatch(/^ocpool: \$XDG_CONFIG_HOME\/opencode-pool: no home directory .*set HOME or XDG_CONFIG_HOME\n$/)
    const status = ocpool(["status"], env, { uid })
    expect(status.code).toBe(1)
    expect(status.stderr).toMatch(/no home directory .*set HOME or XDG_STATE_HOME\n$/)
    oneLine(status.stderr)
    const sweep = ocpool(["sweep", "events", "--dry-run"], env, { uid })
    expect(sweep.code).toBe(2)
    oneLine(sweep.stderr)
    const doctor = ocpool(["doctor", "--json"], env, { uid })
    expect(check(doctor.stdout, "state-dir")).toMatchObject({ status: "fail", detail: expect.stringContaining("no home directory") })
  })
})

describe("ocpool sweep with a data home it cannot create (SPEC §2.1)", () => {
  it("US-32 XDG_DATA_HOME under /proc: the sweep ends within its bound, with no stack", () => {
    const dir = tmp()
    const db = join(dir, "opencode.db")
    new OpencodeDb(db).close()
    const r = ocpool(["sweep", "events", "--db", db, "--json"], envWith({ XDG_DATA_HOME: "/proc/nope" }))
    expect(r.code).not.toBeNull()
    expect([0, 1, 2, 75]).toContain(r.code)
    expect(r.stderr).not.toMatch(/\n\s+at /)
  })
})

describe("ocpool status changes no state dir (SPEC §2.1, §5.2; issue 32)", () => {
  it("US-46 a --state-dir that is a symbolic link is read, nothing in its target is deleted, and the status says why", () => {
    const base = tmp()
    const target = join(base, "target")
    mkdirSync(target, { mode: 0o700 })
    const before = litter(target)
    symlinkSync(target, join(base, "state"))
    const r = ocpool(["status", "--json", "--state-dir", join(base, "state")], envWith())
    expect(r.code).toBe(0)
    expect(readdirSync(target).sort()).toEqual(before)
    expect((JSON.parse(r.stdout) as { warnings: Array<string> }).warnings).toEqual([expect.stringContaining("symbolic link")])
  })

  it("US-46 a --state-dir holding files that are not state files (a home, a project) is read only", () => {
    const dir = tmp()
    writeFileSync(join(dir, "notes.txt"), "mine")
    const before = litter(dir)
    const r = ocpool(["status", "--json", "--state-dir", dir], envWith())
    expect(r.code).toBe(0)
    expect(readdirSync(dir).sort()).toEqual(before)
    expect((JSON.parse(r.stdout) as { warnings: Array<string> }).warnings).toEqual([expect.stringContaining('"notes.txt"')])
  })

  it("US-46 a plain state dir (0700, only state files) gives no warning, and a view makes no state.db there", () => {
    const dir = tmp()
    const before = litter(dir)
    const r = ocpool(["status", "--json", "--state-dir", dir], envWith())
    expect(readdirSync(dir).sort()).toEqual(before)
    expect((JSON.parse(r.stdout) as { warnings: Array<string> }).warnings).toEqual([])
  })
})

describe("ocpool doctor always prints its report (SPEC §12.2)", () => {
  it("US-46 a cooldown whose until is 1e16 still gives the whole JSON report", () => {
    const dir = tmp()
    writeFileSync(join(dir, cooldownFileName("zen/alpha")), JSON.stringify({ version: 1, model: "zen/alpha", reason: "quota", strikes: 0, scope: "model", since: 0, until: 1e16, source: "flat" }))
    const r = ocpool(["doctor", "--json", "--state-dir", dir], envWith())
    const out = JSON.parse(r.stdout) as Doctor
    expect(out.checks.map((c) => c.id)).toEqual(expect.arrayContaining(["pool", "state-dir", "claims", "cooldowns", "database", "runtime"]))
    expect(r.code).toBe(out.ok ? 0 : 1)
  })

  it("US-46 a pool file that is a symbolic link loop fails the pool check, naming the loop", () => {
    const env = envWith()
    const config = join(env.XDG_CONFIG_HOME!, "opencode-pool")
    mkdirSync(config, { recursive: true })
    symlinkSync(join(config, "pool.txt"), join(config, "pool.txt"))
    const r = ocpool(["doctor", "--json", "--state-dir", tmp()], env)
    expect(r.code).toBe(1)
    expect(check(r.stdout, "pool")).toMatchObject({ status: "fail", detail: expect.stringContaining("symbolic link loop") })
  })

  it("US-46 a state dir that is a symbolic link makes the state-dir check warn", () => {
    const base = tmp()
    mkdirSync(join(base, "target"), { mode: 0o700 })
    symlinkSync(join(base, "target"), join(base, "state"))
    const r = ocpool(["doctor", "--json", "--state-dir", join(base, "state")], envWith())
    expect(check(r.stdout, "state-dir")).toMatchObject({ status: "warn", detail: expect.stringContaining("symbolic link") })
  })

  it("US-46 the plugin check reads opencode's config as JSONC: a listing counts, a mention in a comment does not", () => {
    const env = envWith()
    const oc = join(env.XDG_CONFIG_HOME!, "opencode")
    mkdirSync(oc, { recursive: true })
    writeFileSync(join(oc, "opencode.json"), '{\n  // opencode-pool: maybe later\n  "plugin": ["other-plugin"],\n}\n')
    const comment = ocpool(["doctor", "--json", "--state-dir", tmp()], env)
    expect(check(comment.stdout, "plugin")?.status).toBe("warn")
    writeFileSync(join(oc, "opencode.json"), '{\n  // pooled subagents\n  "plugin": [["opencode-pool", { "reapMs": 30000 }],],\n}\n')
    const listed = ocpool(["doctor", "--json", "--state-dir", tmp()], env)
    expect(check(listed.stdout, "plugin")).toMatchObject({ status: "ok", detail: `listed in ${join(oc, "opencode.json")} (opencode-pool); opencode reads ${join(oc, "opencode.json")}` })
    expect(existsSync(join(oc, "opencode.json"))).toBe(true)
  })
})
