/**
 * The start-up fast path (src/cli/entry.ts, fastRoute.ts): `--help`/`--version` from dist/help.json and a
 * well-formed `status` without the command tree must answer exactly as the full CLI does; anything the
 * fast path is unsure of goes to the full CLI.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import fc from "fast-check"
import { execFileSync, spawnSync } from "node:child_process"
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { runCli } from "../../src/cli/app.js"
import { runReceive } from "../../src/cli/receiveMain.js"
import { helpWidth, wrapHelp } from "../../src/cli/help/wrap.js"
import { fastRoute, helpKey, helpKeys } from "../../src/cli/fastRoute.js"
import { captureStream, type CliIo } from "../../src/cli/output.js"
import { runStatus } from "../../src/cli/statusMain.js"

const root = new URL("../../", import.meta.url).pathname
if (!existsSync(join(root, "dist/help.json"))) execFileSync(process.execPath, [join(root, "scripts/build.mjs")], { cwd: root })

const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version
const base = mkdtempSync(join(tmpdir(), "ocpool-fast-"))
// status reads the process's environment: keep both runs away from the real home
process.env.XDG_CONFIG_HOME = join(base, "config")
process.env.XDG_STATE_HOME = join(base, "xstate")
process.env.OCPOOL_STATE_DIR = join(base, "state")
const pool = join(base, "pool.txt")
writeFileSync(pool, "zen/alpha 3\ngo/\u001b[31mgamma 1\n")
const stateDir = join(base, "other-state")
mkdirSync(stateDir, { mode: 0o700 })


const ioPair = (tty: boolean) => {
  const stdout = captureStream(tty)
  const stderr = captureStream(tty)
  const io: CliIo = { stdout, stderr, stdinIsTTY: false, env: {} }
  return { io, out: () => stdout.text, err: () => stderr.text }
}

/** The full command tree and the fast path on the same argv: code, stdout and stderr. */
const both = (args: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const route = fastRoute(args)
    if (route?._tag !== "Status") return undefined
    const full = ioPair(false)
    const fast = ioPair(false)
    const fullCode = yield* runCli(["node", "ocpool", ...args], full.io)
    const fastCode = yield* runStatus(route.flags, fast.io)
    return { full: { code: fullCode, out: full.out(), err: full.err() }, fast: { code: fastCode, out: fast.out(), err: fast.err() } }
  })

describe("the fast path", () => {
  it.effect("US-46 a well-formed status answers through the fast path exactly as through the command tree", () =>
    Effect.gen(function* () {
      for (const args of [
        ["status"],
        ["status", "--json"],
        ["status", "--pool", pool],
        ["status", `--pool=${pool}`, "--json"],
        ["status", "--state-dir", stateDir, "--pool", pool],
        ["status", "--pool", join(base, "missing.txt")],
        ["status", "--pool", base]
      ]) {
        const r = yield* both(args)
        expect(r, args.join(" ")).toBeDefined()
        expect(r!.fast, args.join(" ")).toEqual(r!.full)
      }
    })
  )

  it.effect("US-18 receive runs through its own bundle exactly as through the command tree: any arguments, never a usage error; only a lone --help shows help", () =>
    Effect.gen(function* () {
      expect(fastRoute(["receive"])).toEqual({ _tag: "Receive" })
      expect(fastRoute(["receive", "--nope", "x"])).toEqual({ _tag: "Receive" })
      expect(fastRoute(["receive", "--help", "x"])).toEqual({ _tag: "Receive" })
      expect(fastRoute(["receive", "--help"])).toEqual({ _tag: "Help", key: "receive --help" })
      const saved = process.env.SSH_ORIGINAL_COMMAND
      delete process.env.SSH_ORIGINAL_COMMAND
      try {
        const full = ioPair(false)
        const fast = ioPair(false)
        const fullCode = yield* runCli(["node", "ocpool", "receive", "--bogus"], full.io)
        const fastCode = yield* runReceive(fast.io)
        expect({ code: fastCode, out: fast.out(), err: fast.err() }).toEqual({ code: fullCode, out: full.out(), err: full.err() })
        expect(fastCode).toBe(0)
        expect(fast.err()).toContain("no payload")
      } finally {
        if (saved !== undefined) process.env.SSH_ORIGINAL_COMMAND = saved
      }
    })
  )

  it("US-46 anything the fast path is unsure of goes to the full command tree", () => {
    for (const args of [
      [],
      ["status", "--nope"],
      ["status", "--json", "--json"],
      ["status", "--pool"],
      ["status", "--pool", ""],
      ["status", "--pool", "--json"],
      ["status", "--json=1"],
      ["status", "extra"],
      ["status", "-j"],
      ["status", "--", "--json"],
      ["doctor"],
      ["status", "--help", "--json"],
      ["--help", "status"],
      ["status", "--wizard"]
    ])
      expect(fastRoute(args), JSON.stringify(args)).toBeUndefined()
    expect(fastRoute(["status", "--help"])).toEqual({ _tag: "Help", key: "status --help" })
  })

  it.live("US-46 random argv the fast path takes answers as the command tree does", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(
          fc.array(fc.constantFrom("--json", "--pool", pool, `--pool=${pool}`, "--state-dir", stateDir, `--state-dir=${stateDir}`, "-h", "--pool=", "x", "--", base), { maxLength: 6 }),
          async (rest) => {
            const r = await Effect.runPromise(both(["status", ...rest]))
            if (r !== undefined) expect(r.fast).toEqual(r.full)
          }
        ),
        { numRuns: 150, seed: 9 }
      )
    )
  )

  it.effect("US-46 the pre-rendered help in dist/help.json is what the command tree prints today", () =>
    Effect.gen(function* () {
      const table = JSON.parse(readFileSync(join(root, "dist/help.json"), "utf8")) as Record<string, { stdout: string }>
      for (const args of helpKeys()) {
        const r = ioPair(true)
        expect(yield* runCli(["node", "ocpool", ...args], r.io)).toBe(0)
        // the sources say 0.0.0-dev where the build puts the package's version
        // help pages are kept unwrapped (the entry wraps them to the terminal it prints on)
        const kept = table[helpKey(args)]?.stdout
        const printed = args[0] === "--version" ? kept : wrapHelp(kept ?? "", helpWidth(undefined, {}))
        expect(printed, helpKey(args)).toBe(r.out().replaceAll("0.0.0-dev", version))
      }
    })
  )

  it("US-46 the built entry prints the pre-rendered help plain into a pipe and runs status", () => {
    const env = { ...process.env, NO_COLOR: "" }
    const help = spawnSync(process.execPath, [join(root, "bin/ocpool.js"), "status", "--help"], { encoding: "utf8", env })
    expect(help.status).toBe(0)
    expect(help.stdout).toContain("--state-dir")
    expect(help.stdout).not.toMatch(/\u001b/)
    const status = spawnSync(process.execPath, [join(root, "bin/ocpool.js"), "status", "--json", "--pool", pool, "--state-dir", stateDir], { encoding: "utf8", env })
    expect(status.status).toBe(0)
    expect(JSON.parse(status.stdout).origin).toBe(pool)
    const full = spawnSync(process.execPath, [join(root, "dist/cli.js"), "status", "--json", "--pool", pool, "--state-dir", stateDir], { encoding: "utf8", env })
    expect(status.stdout).toBe(full.stdout)
  })

  it("US-46 without the fast status bundle, status still answers through the full CLI", () => {
    // under node_modules/ so that the full CLI's better-sqlite3 import still resolves
    mkdirSync(join(root, "node_modules", ".cache"), { recursive: true })
    const copy = mkdtempSync(join(root, "node_modules", ".cache", "ocpool-fast-copy-"))
    mkdirSync(join(copy, "dist"))
    writeFileSync(join(copy, "package.json"), '{"type":"module"}')
    for (const f of ["ocpool.cjs", "cli.js", "help.json"]) copyFileSync(join(root, "dist", f), join(copy, "dist", f))
    const r = spawnSync(process.execPath, [join(copy, "dist/ocpool.cjs"), "status", "--json", "--pool", pool, "--state-dir", stateDir], { encoding: "utf8" })
    expect(r.stderr).toBe("")
    expect(r.status).toBe(0)
    expect(JSON.parse(r.stdout).origin).toBe(pool)
    rmSync(copy, { recursive: true, force: true })
  })
})
