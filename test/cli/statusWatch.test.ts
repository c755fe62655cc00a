/**
 * `ocpool top` / `ocpool status --watch` (issue 24) as a real process: on a pseudo-terminal made by
 * util-linux's `script` (the redraw on a change, the keys, the terminal put back after q and after
 * SIGTERM), and off a terminal (NDJSON per change, a closed stdout ending it quietly). The frames
 * themselves are core/view/live.ts's, tested as a pure function in test/core/view/live.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { execFileSync, spawn, type ChildProcess } from "node:child_process"
import { appendFileSync, chmodSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { seedCooldowns } from "../support/stateDb.js"
import { cli, ensureBuilt } from "./builtCli.js"
import { frameText } from "../../src/cli/statusWatch.js"

const SCRIPT_MISSING = "script not found: the pseudo-terminal tests need util-linux's script (apt-get install -y bsdutils)"

const tmp = () => mkdtempSync(join(tmpdir(), "ocpool-top-"))

const stateDir = () => {
  const dir = tmp()
  chmodSync(dir, 0o700)
  return dir
}

const POOL = "zen/alpha 2\ngo/gamma 1\n"

const poolFile = () => {
  const file = join(tmp(), "pool.txt")
  writeFileSync(file, POOL)
  return file
}

const cool = (dir: string, model: string, ms = 5 * 60_000) => {
  const now = Date.now()
  seedCooldowns(dir, [{ model, reason: "rate_limit", strikes: 2, scope: "model", since: now, until: now + ms, source: "backoff" }])
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

interface Running {
  readonly child: ChildProcess
  /** Everything written so far (stdout and stderr). */
  readonly out: () => string
  readonly stderr: () => string
  readonly exited: Promise<number | null>
  /** Resolves once `re` matches the output after `from` (ten seconds at most). */
  readonly waitFor: (re: RegExp, from?: number) => Promise<void>
}

const watchOutput = (child: ChildProcess): Running => {
  let out = ""
  let err = ""
  child.stdout?.on("data", (b: Buffer) => (out += b.toString("utf8")))
  child.stderr?.on("data", (b: Buffer) => (err += b.toString("utf8")))
  const exited = new Promise<number | null>((resolve) => child.on("close", (code, signal) => resolve(code ?? (signal === null ? null : -1))))
  const waitFor = (re: RegExp, from = 0) =>
    new Promise<void>((resolve, reject) => {
      const started = Date.now()
      const check = () => {
        if (re.test(out.slice(from))) return resolve()
        if (Date.now() - started > 10_000) return reject(new Error(`no ${re} in output:\n${JSON.stringify(out.slice(-2000))}\nstderr: ${err}`))
        setTimeout(check, 25)
      }
      check()
    })
  return { child, out: () => out, stderr: () => err, exited, waitFor }
}

/** `ocpool top …` on a 72x20 pseudo-terminal; the first line it prints is the shell's pid, which `exec` hands to ocpool. */
const onTerminal = (args: ReadonlyArray<string>, env: Record<string, string> = {}): Running => {
  try {
    execFileSync("script", ["--version"], { stdio: "ignore" })
  } catch {
    throw new Error(SCRIPT_MISSING)
  }
  const quoted = [process.execPath, cli, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(" ")
  const child = spawn("script", ["-qfec", `stty cols 72 rows 20; echo "PID $$"; exec ${quoted}`, "/dev/null"], {
    env: { ...process.env, XDG_CONFIG_HOME: tmp(), OCPOOL_STATE_DIR: "", OCPOOL_TRACE: "", TERM: "xterm", ...env },
    stdio: ["pipe", "pipe", "pipe"]
  })
  return watchOutput(child)
}

const pidOf = (r: Running): number => Number(/PID (\d+)/.exec(r.out())![1])

const ENTER = "\x1b[?1049h"
const RESTORE = /\x1b\[\?25h\x1b\[\?1049l/

describe("ocpool top on a terminal (issue 24)", () => {
  ensureBuilt("top --help")

  it("US-6 draws the pool on the alternate screen, redraws when a model starts cooling, and q puts the terminal back with exit 0", async () => {
    const dir = stateDir()
    const r = onTerminal(["top", "--state-dir", dir, "--pool", poolFile()])
    try {
      await r.waitFor(/zen\/alpha/)
      expect(r.out()).toContain(ENTER)
      expect(r.out()).not.toMatch(/cooling.*zen\/alpha|zen\/alpha.*rate_limit/)
      const mark = r.out().length
      cool(dir, "zen/alpha")
      // the state directory is watched: the change shows without any key or tick
      await r.waitFor(/rate_limit/, mark)
      r.child.stdin!.write("q")
      expect(await r.exited).toBe(0)
      expect(r.out()).toMatch(RESTORE)
      expect(r.stderr()).toBe("")
    } finally {
      r.child.kill("SIGKILL")
    }
  })

  it("US-6 ? shows the help screen and another key closes it; arrows and j/k do not end the view", async () => {
    const r = onTerminal(["top", "--state-dir", stateDir(), "--pool", poolFile()])
    try {
      await r.waitFor(/zen\/alpha/)
      let mark = r.out().length
      r.child.stdin!.write("?")
      await r.waitFor(/quit/i, mark)
      mark = r.out().length
      r.child.stdin!.write("j\x1b[Bk\x1b[A")
      await r.waitFor(/zen\/alpha/, mark)
      r.child.stdin!.write("q")
      expect(await r.exited).toBe(0)
      expect(r.out()).toMatch(RESTORE)
    } finally {
      r.child.kill("SIGKILL")
    }
  })

  it("US-6 SIGTERM puts the terminal back (cursor shown, main screen) and exits 143", async () => {
    const r = onTerminal(["status", "--watch", "--state-dir", stateDir(), "--pool", poolFile()])
    try {
      await r.waitFor(/zen\/alpha/)
      process.kill(pidOf(r), "SIGTERM")
      expect(await r.exited).toBe(143)
      expect(r.out()).toMatch(RESTORE)
      expect(r.stderr()).toBe("")
    } finally {
      r.child.kill("SIGKILL")
    }
  })

  it("US-6 a cooldown that runs out leaves the screen by itself: no file changes, the countdown's end re-reads", async () => {
    const dir = stateDir()
    cool(dir, "zen/alpha", 1_500)
    const r = onTerminal(["top", "--state-dir", dir, "--pool", poolFile()])
    try {
      await r.waitFor(/1 cooling/)
      const mark = r.out().length
      await r.waitFor(/ 0 cooling/, mark)
      r.child.stdin!.write("q")
      expect(await r.exited).toBe(0)
    } finally {
      r.child.kill("SIGKILL")
    }
  })

  it("US-6 the last decisions of a recorded trace, redrawn when one is appended", async () => {
    const trace = join(tmp(), "pool-1.jsonl")
    const at = Date.UTC(2026, 0, 1, 12, 0, 3)
    writeFileSync(`${trace}.decisions.jsonl`, `${JSON.stringify({ at, type: "route", claim: "ses_1:call_7", base: "explore", slot: 1, model: "zen/alpha", agent: "explore-1", pass: "first" })}\n`)
    const r = onTerminal(["top", "--state-dir", stateDir(), "--pool", poolFile(), "--trace", trace])
    try {
      await r.waitFor(/12:00:03 route call_7 explore -> explore-1 \(zen\/alpha\) first pass/)
      const mark = r.out().length
      appendFileSync(`${trace}.decisions.jsonl`, `${JSON.stringify({ at: at + 1000, type: "release", claim: "ses_1:call_7", cooled: false, reason: "done" })}\n`)
      await r.waitFor(/12:00:04 release call_7 done/, mark)
      r.child.stdin!.write("q")
      expect(await r.exited).toBe(0)
    } finally {
      r.child.kill("SIGKILL")
    }
  })

  it("US-6 the terminal going away (its pseudo-terminal closed) ends the view", async () => {
    const r = onTerminal(["top", "--state-dir", stateDir(), "--pool", poolFile()])
    try {
      await r.waitFor(/zen\/alpha/)
      const pid = pidOf(r)
      expect(alive(pid)).toBe(true)
      r.child.kill("SIGKILL")
      const started = Date.now()
      while (alive(pid) && Date.now() - started < 5_000) await new Promise((ok) => setTimeout(ok, 50))
      expect(alive(pid)).toBe(false)
    } finally {
      r.child.kill("SIGKILL")
    }
  })

  it("US-6 NO_COLOR: no colour on the terminal, only the screen's own control sequences", async () => {
    const dir = stateDir()
    cool(dir, "zen/alpha")
    const r = onTerminal(["top", "--state-dir", dir, "--pool", poolFile()], { NO_COLOR: "1" })
    try {
      await r.waitFor(/rate_limit/)
      r.child.stdin!.write("q")
      expect(await r.exited).toBe(0)
      // SGR sequences other than the reset the view ends every line with
      expect(r.out()).not.toMatch(/\x1b\[(?!0m)[0-9;]*m/)
    } finally {
      r.child.kill("SIGKILL")
    }
  })
})

describe("ocpool top off a terminal (issue 24)", () => {
  ensureBuilt("top --help")

  const offTerminal = (args: ReadonlyArray<string>): Running =>
    watchOutput(spawn(process.execPath, [cli, ...args], { env: { ...process.env, XDG_CONFIG_HOME: tmp(), OCPOOL_STATE_DIR: "", OCPOOL_TRACE: "" }, stdio: ["ignore", "pipe", "pipe"] }))

  it("US-6 prints one JSON status object per change (NDJSON), and SIGTERM ends it with 143", async () => {
    const dir = stateDir()
    const r = offTerminal(["top", "--state-dir", dir, "--pool", poolFile()])
    try {
      await r.waitFor(/\n/)
      const first = JSON.parse(r.out().split("\n")[0]!) as { slots: Array<{ model: string; cooling: unknown }> }
      expect(first.slots.map((s) => s.model)).toEqual(["zen/alpha", "go/gamma"])
      expect(first.slots[0]!.cooling).toBeNull()
      cool(dir, "zen/alpha")
      await r.waitFor(/\n.*rate_limit.*\n/)
      const lines = r.out().trim().split("\n")
      expect(lines.length).toBe(2)
      const second = JSON.parse(lines[1]!) as { slots: Array<{ cooling: { reason: string; strikes: number } | null }> }
      expect(second.slots[0]!.cooling).toMatchObject({ reason: "rate_limit", strikes: 2 })
      expect(r.out()).not.toContain("\x1b")
      r.child.kill("SIGTERM")
      expect(await r.exited).toBe(143)
    } finally {
      r.child.kill("SIGKILL")
    }
  })

  it("US-6 the pool is resolved once and again when its file changes (issue 34): an edited pool file is the next line's slots", async () => {
    const dir = stateDir()
    const file = poolFile()
    const r = offTerminal(["top", "--state-dir", dir, "--pool", file])
    try {
      await r.waitFor(/\n/)
      expect((JSON.parse(r.out().split("\n")[0]!) as { slots: Array<{ model: string }> }).slots.map((s) => s.model)).toEqual(["zen/alpha", "go/gamma"])
      writeFileSync(file, "go/gamma 1\nzen/beta 1\n")
      await r.waitFor(/zen\/beta/)
      const last = JSON.parse(r.out().trim().split("\n").at(-1)!) as { slots: Array<{ model: string }> }
      expect(last.slots.map((s) => s.model)).toEqual(["go/gamma", "zen/beta"])
      r.child.kill("SIGTERM")
      expect(await r.exited).toBe(143)
    } finally {
      r.child.kill("SIGKILL")
    }
  })

  it("US-6 a closed stdout ends it quietly with 0 at the next change", async () => {
    const dir = stateDir()
    const r = offTerminal(["status", "--watch", "--json", "--state-dir", dir, "--pool", poolFile()])
    try {
      await r.waitFor(/\n/)
      r.child.stdout!.destroy()
      cool(dir, "zen/alpha")
      expect(await r.exited).toBe(0)
      expect(r.stderr()).toBe("")
    } finally {
      r.child.kill("SIGKILL")
    }
  })

  it("US-6 a reader that takes one line and leaves ends an idle view quietly with 0 (`top --json | head -1`, `top </dev/null | head -1`), no change needed (issue 33)", () => {
    const dir = stateDir()
    const pool = poolFile()
    const q = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`
    for (const view of [`${q(process.execPath)} ${q(cli)} top --json`, `${q(process.execPath)} ${q(cli)} top </dev/null`]) {
      // an idle view that missed its reader going away would run until this timeout: execFileSync throws
      const out = execFileSync("bash", ["-c", `${view} --state-dir ${q(dir)} --pool ${q(pool)} | head -1; echo "rc=\${PIPESTATUS[0]}"`], {
        encoding: "utf8",
        timeout: 20_000,
        env: { ...process.env, XDG_CONFIG_HOME: tmp(), OCPOOL_STATE_DIR: "", OCPOOL_TRACE: "" }
      })
      const [line, rc] = out.trim().split("\n")
      expect((JSON.parse(line!) as { slots: Array<unknown> }).slots).toHaveLength(2)
      expect(rc).toBe("rc=0")
    }
  })

  it("US-6 a state directory made after the view started is watched from then on", async () => {
    const dir = join(stateDir(), "later")
    const r = offTerminal(["top", "--state-dir", dir, "--pool", poolFile()])
    try {
      await r.waitFor(/\n/)
      mkdirSync(dir, { mode: 0o700 })
      cool(dir, "zen/alpha")
      await r.waitFor(/\n.*rate_limit.*\n/)
      r.child.kill("SIGTERM")
      expect(await r.exited).toBe(143)
    } finally {
      r.child.kill("SIGKILL")
    }
  })

  it("US-6 --trace without --watch is a usage error (exit 2)", async () => {
    const r = offTerminal(["status", "--trace", "x.jsonl", "--state-dir", stateDir()])
    expect(await r.exited).toBe(2)
    expect(r.stderr()).toMatch(/^ocpool: --trace goes with --watch/)
  })

  it("US-6 a pool file that cannot be read is one line and exit 2, before anything is drawn", async () => {
    const r = offTerminal(["top", "--state-dir", stateDir(), "--pool", join(tmp(), "absent.txt")])
    expect(await r.exited).toBe(2)
    expect(r.stderr()).toMatch(/^ocpool: .*absent\.txt: no such file or directory\n$/)
    expect(r.out()).toBe("")
  })
})

describe("the frame as written to the terminal (issue 33 item 21)", () => {
  it("US-6 a line that fills the width is not followed by an erase (which would eat its last character); shorter lines are", () => {
    const text = frameText(["x".repeat(10), "\u001b[31mcooling 1m27\u001b[0m", "漢字".repeat(3)], 12)
    const rows = text.split("\r\n")
    expect(rows[0]).toBe(`\u001b[H${"x".repeat(10)}\u001b[0m\u001b[K`)
    expect(rows[1]).toBe("\u001b[31mcooling 1m27\u001b[0m\u001b[0m")
    expect(rows[2]).toBe(`${"漢字".repeat(3)}\u001b[0m\u001b[J`)
  })
})
