/**
 * Output that cannot be written (a closed pipe, a full disk), a wizard without a terminal, and colour:
 * the built CLI with its stdout on /dev/full or a closed pipe, and runCli in-process on captured streams.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync, spawn, spawnSync } from "node:child_process"
import { closeSync, existsSync, mkdtempSync, openSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { runCli } from "../../src/cli/app.js"
import type { CliIo, OutStream } from "../../src/cli/output.js"

const root = new URL("../../", import.meta.url).pathname
const cli = join(root, "bin/ocpool.js")
const tmp = () => mkdtempSync(join(tmpdir(), "ocpool-output-"))
if (!existsSync(join(root, "dist/cli.js"))) execFileSync(process.execPath, [join(root, "scripts/build.mjs")], { cwd: root })

const env = () => {
  const dir = tmp()
  return { ...process.env, XDG_CONFIG_HOME: join(dir, "config"), OCPOOL_STATE_DIR: join(dir, "state"), XDG_STATE_HOME: join(dir, "xstate") }
}

/** A trace of `n` spawns and releases: enough output that a closed pipe is hit mid-run. */
const bigTrace = (n: number): string => {
  const at = 1_796_115_600_000
  const lines = [JSON.stringify({ at, type: "pool", slots: [{ model: "zen/alpha", weight: 3 }, { model: "go/gamma", weight: 1 }] })]
  for (let i = 0; i < n; i++) {
    lines.push(JSON.stringify({ at: at + 1 + i * 2, type: "spawn", claim: `c${i}`, base: "explore", session: "ses_p" }))
    lines.push(JSON.stringify({ at: at + 2 + i * 2, type: "release", claim: `c${i}`, ok: true }))
  }
  return `${lines.join("\n")}\n`
}

const STACK = /\n\s+at |node:internal|Error: /

/** The built CLI with stdout on `fd`; returns code and stderr. */
const withStdout = (args: ReadonlyArray<string>, fd: number) => {
  const r = spawnSync(process.execPath, [cli, ...args], { stdio: ["ignore", fd, "pipe"], encoding: "utf8", timeout: 30_000, env: env() })
  return { code: r.status, stderr: r.stderr }
}

/** The built CLI whose stdout pipe is closed by the reader before it writes anything. */
const closedPipe = (args: ReadonlyArray<string>) =>
  new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: ["ignore", "pipe", "pipe"], env: env() })
    child.stdout.destroy()
    let stderr = ""
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stderr })
    })
  })

describe.skipIf(!existsSync("/dev/full"))("output on a full disk", () => {
  it("US-6 `ocpool status > /dev/full` is one line `cannot write output: no space left on device` and exit 1", () => {
    const fd = openSync("/dev/full", "w")
    try {
      const r = withStdout(["status"], fd)
      expect(r.stderr).toBe("ocpool: cannot write output: no space left on device\n")
      expect(r.code).toBe(1)
    } finally {
      closeSync(fd)
    }
  })

  it("US-45 a replay into /dev/full stops with the one line and exit 1, no stack", () => {
    const trace = join(tmp(), "t.jsonl")
    writeFileSync(trace, bigTrace(2_000))
    const fd = openSync("/dev/full", "w")
    try {
      const r = withStdout(["replay", trace], fd)
      expect(r.stderr).toBe("ocpool: cannot write output: no space left on device\n")
      expect(r.code).toBe(1)
    } finally {
      closeSync(fd)
    }
  })
})

describe("output into a closed pipe", () => {
  it("US-45 `ocpool replay big.jsonl | head -c 0` ends quietly with exit 0", async () => {
    const trace = join(tmp(), "t.jsonl")
    writeFileSync(trace, bigTrace(20_000))
    const r = await closedPipe(["replay", trace])
    expect(r.stderr).not.toMatch(STACK)
    expect(r.stderr).toBe("")
    expect(r.code).toBe(0)
  })

  it("US-6 `ocpool status --json | head -c 0` and `ocpool --help | head -c 0` exit 0 with nothing on stderr", async () => {
    for (const args of [["status", "--json"], ["--help"]]) {
      const r = await closedPipe(args)
      expect(r.stderr).toBe("")
      expect(r.code).toBe(0)
    }
  })
})

describe("the wizard", () => {
  it("US-6 `ocpool --wizard < /dev/null` is a usage error (exit 2), not a wait for a terminal", () => {
    const r = spawnSync(process.execPath, [cli, "--wizard"], { stdio: ["ignore", "pipe", "pipe"], encoding: "utf8", timeout: 15_000, env: env() })
    expect(r.signal).toBeNull()
    expect(r.status).toBe(2)
    expect(r.stderr.split("\n")[0]).toBe("ocpool: --wizard needs an interactive terminal on standard input")
    expect(r.stdout).toBe("")
  })
})

/** A stream that keeps what is written; `fail` makes every write fail with that error. */
const capture = (isTTY: boolean, fail?: Error): OutStream & { readonly text: () => string } => {
  const chunks: Array<string> = []
  return {
    isTTY,
    write(chunk, cb) {
      if (fail !== undefined) {
        queueMicrotask(() => cb(fail))
        return false
      }
      chunks.push(chunk)
      cb()
      return true
    },
    on() {
      return this
    },
    text: () => chunks.join("")
  }
}

const io = (over: Partial<CliIo> & { readonly tty?: boolean } = {}) => {
  const dir = tmp()
  const stdout = capture(over.tty ?? false)
  const stderr = capture(over.tty ?? false)
  const value: CliIo = {
    stdout,
    stderr,
    stdinIsTTY: false,
    env: { XDG_CONFIG_HOME: join(dir, "config"), OCPOOL_STATE_DIR: join(dir, "state") },
    ...over
  }
  return { io: value, out: () => (value.stdout as typeof stdout).text(), err: () => (value.stderr as typeof stderr).text() }
}

const ESC = "\u001b["

describe("colour", () => {
  it.effect("US-6 `--help` on a terminal with NO_COLOR=1 has no escape sequence; without NO_COLOR it is styled", () =>
    Effect.gen(function* () {
      const plain = io({ tty: true, env: { NO_COLOR: "1" } })
      expect(yield* runCli(["node", "ocpool", "--help"], plain.io)).toBe(0)
      expect(plain.out()).toContain("status")
      expect(plain.out()).not.toContain(ESC)
      const styled = io({ tty: true, env: {} })
      expect(yield* runCli(["node", "ocpool", "--help"], styled.io)).toBe(0)
      expect(styled.out()).toContain(ESC)
    })
  )

  it.effect("US-6 `--help` and a usage error into a pipe or file carry no escape sequence", () =>
    Effect.gen(function* () {
      const help = io({ env: {} })
      expect(yield* runCli(["node", "ocpool", "--help"], help.io)).toBe(0)
      expect(help.out()).not.toContain(ESC)
      const bad = io({ env: {} })
      expect(yield* runCli(["node", "ocpool", "status", "--nope"], bad.io)).toBe(2)
      expect(bad.err()).not.toContain(ESC)
      expect(bad.out()).toBe("")
    })
  )
})

describe("the wizard in-process", () => {
  it.effect("US-6 `--wizard=p` (a boolean flag's = form) without a terminal is the same usage error", () =>
    Effect.gen(function* () {
      const r = io()
      expect(yield* runCli(["node", "ocpool", "statuz", "--wizard=p"], r.io)).toBe(2)
      expect(r.err().split("\n")[0]).toBe("ocpool: --wizard needs an interactive terminal on standard input")
    })
  )
})

describe("in-process write failures", () => {
  it.effect("US-6 a stdout that fails every write with ENOSPC gives one line on stderr and 1; EPIPE gives 0 and nothing", () =>
    Effect.gen(function* () {
      const full = Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" })
      const a = io({ stdout: capture(false, full) })
      expect(yield* runCli(["node", "ocpool", "--help"], a.io)).toBe(1)
      expect(a.err()).toBe("ocpool: cannot write output: no space left on device\n")
      const pipe = Object.assign(new Error("write EPIPE"), { code: "EPIPE" })
      const b = io({ stdout: capture(false, pipe) })
      expect(yield* runCli(["node", "ocpool", "--help"], b.io)).toBe(0)
      expect(b.err()).toBe("")
    })
  )
})
