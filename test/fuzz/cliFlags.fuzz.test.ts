/**
 * Fuzz family: CLI flags. Random and hostile argv for every command (known flags with hostile values,
 * unknown flags, stray words, `=` forms, built-ins such as --help, --version, --completions, --wizard)
 * parsed and run in-process by runCli on captured streams: every case ends within its bound with a
 * documented exit code (0, 1, 2, 75), no stack and no "internal error" in the output, and nothing is
 * written outside the case's temp directories. Every path a command would write or sweep (the state
 * directory, --db, the XDG and home directories) points into a temp directory; the process works in
 * a temp directory, so a relative path lands there too.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import fc from "fast-check"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createRequire, syncBuiltinESMExports } from "node:module"
import { tmpdir } from "node:os"
import { join, resolve, sep } from "node:path"
import { runCli } from "../../src/cli/app.js"
import type { CliIo, OutStream } from "../../src/cli/output.js"
import { fuzzParams, fuzzTimeout, hostileNumber, hostileString } from "./common.js"

/** Each case must settle within this (a hang is a failure, not a slow test). */
const CASE_MS = 10_000
const EXIT_CODES = new Set([0, 1, 2, 75])
const STACK = /\n\s+at \S|node:internal|\bat file:\/\//

let base = ""
let paths: ReadonlyArray<string> = []
let trace = ""
let savedCwd = ""
const savedEnv: Record<string, string | undefined> = {}
const ENV_KEYS = ["HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "OCPOOL_STATE_DIR", "OPENCODE_DB", "OPENCODE_CONFIG", "NO_COLOR"]

/**
 * Every path a case passes to a mutating `fs` call (callback, sync and promise forms, as Effect's
 * platform layer and the commands call them): recorded while a case runs, then checked to lie under the
 * temp base. `syncBuiltinESMExports` makes the named ESM imports of node:fs see the wrappers.
 */
/** node:fs itself (not an ESM namespace, whose bindings are read-only). */
const fs = createRequire(import.meta.url)("node:fs") as typeof import("node:fs")
const written: Array<string> = []
let seen = 0
let recording = false
const MUTATING = ["writeFile", "appendFile", "mkdir", "mkdtemp", "rename", "rm", "rmdir", "unlink", "copyFile", "cp", "symlink", "link", "chmod", "chown", "utimes", "truncate", "open", "createWriteStream"]
const restorers: Array<() => void> = []
const isWriteFlag = (flags: unknown): boolean =>
  typeof flags === "string" ? /[wa+]/.test(flags) : typeof flags === "number" ? (flags & (fs.constants.O_WRONLY | fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_APPEND)) !== 0 : false
const record = (name: string, args: ReadonlyArray<unknown>) => {
  if (!recording) return
  const open = name.startsWith("open") || name === "createWriteStream"
  if (open && !isWriteFlag(name === "createWriteStream" ? ((args[1] as { flags?: unknown } | undefined)?.flags ?? "w") : args[1])) return
  const two = ["rename", "copyFile", "cp", "symlink", "link"].some((n) => name.startsWith(n))
  for (const a of two ? args.slice(0, 2) : args.slice(0, 1)) {
    if (typeof a === "string" || a instanceof URL || Buffer.isBuffer(a)) {
      seen++
      written.push(resolve(a instanceof URL ? a.pathname : a.toString()))
    }
  }
}
const wrap = (target: Record<string, unknown>, name: string) => {
  const original = target[name]
  if (typeof original !== "function") return
  target[name] = function (this: unknown, ...args: Array<unknown>) {
    record(name, args)
    return (original as (...a: Array<unknown>) => unknown).apply(this, args)
  }
  restorers.push(() => (target[name] = original))
}
const spyOnWrites = () => {
  const target = fs as unknown as Record<string, unknown>
  for (const n of MUTATING) {
    wrap(target, n)
    wrap(target, `${n}Sync`)
    wrap(fs.promises as unknown as Record<string, unknown>, n)
  }
  syncBuiltinESMExports()
}
const unspy = () => {
  for (const r of restorers.splice(0)) r()
  syncBuiltinESMExports()
}

beforeAll(() => {
  spyOnWrites()
  base = mkdtempSync(join(tmpdir(), "ocpool-fuzz-cli-"))
  const home = join(base, "home")
  for (const d of ["home", "cwd", "state", "files/dir"]) mkdirSync(join(base, d), { recursive: true })
  for (const k of ENV_KEYS) savedEnv[k] = process.env[k]
  process.env.HOME = home
  process.env.XDG_CONFIG_HOME = join(home, ".config")
  process.env.XDG_STATE_HOME = join(home, ".local", "state")
  process.env.XDG_DATA_HOME = join(home, ".local", "share")
  process.env.XDG_CACHE_HOME = join(home, ".cache")
  process.env.OCPOOL_STATE_DIR = join(base, "state")
  delete process.env.OPENCODE_DB
  delete process.env.OPENCODE_CONFIG
  savedCwd = process.cwd()
  process.chdir(join(base, "cwd"))
  const file = (name: string, text: string) => {
    const p = join(base, "files", name)
    writeFileSync(p, text)
    return p
  }
  trace = file("trace.jsonl", `${JSON.stringify({ at: 1_796_115_600_000, type: "pool", slots: [{ model: "zen/alpha", weight: 1 }] })}\n`)
  paths = [
    join(base, "files", "absent"),
    join(base, "files", "dir"),
    file("pool.txt", "zen/alpha 3\ngo/gamma 1\n"),
    file("garbage", "\u0000\u0001 not a pool, a trace or a database \u001b[31m\n"),
    file("empty", ""),
    file("db-like.db", "SQLite format 3\u0000 but not really"),
    file("--dash", "zen/alpha 1\n"),
    trace
  ]
})

afterAll(() => {
  unspy()
  if (savedCwd !== "") process.chdir(savedCwd)
  for (const k of ENV_KEYS) {
    if (savedEnv[k] === undefined) delete process.env[k]
    else process.env[k] = savedEnv[k]
  }
  if (base !== "") rmSync(base, { recursive: true, force: true })
})

/** A stream that keeps what is written. */
const capture = (): OutStream & { readonly text: () => string } => {
  const chunks: Array<string> = []
  return {
    isTTY: false,
    write(chunk, cb) {
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

/** Flags whose value is a path a command reads, writes or sweeps: the value is always one of the temp paths. */
const PATH_FLAGS = new Set(["--db", "--state-dir", "--pool", "--expect"])

const FLAGS = [
  "--json", "--pool", "--state-dir", "--probe", "--format", "--force", "--expect", "--explain",
  "--db", "--days", "--grace-hours", "--directory", "--limit", "--dry-run", "--no-events", "--vacuum",
  "--since", "--by", "--baseline-model",
  "--help", "-h", "--version", "--wizard", "--completions", "--log-level", "--", "-", "--nope", "-x"
] as const

const value = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom("txt", "json", "30", "7", "1", "0", "24", "-1", "1e16", "NaN", "2.5", "bash", "zsh", "fish", "debug", "sh", "", "7d", "30m", "all", "agent", "session", "day", "fakeA/pool-a") },
  { weight: 2, arbitrary: hostileNumber.map(String) },
  { weight: 2, arbitrary: hostileString.map((s) => s.slice(0, 2_000)) }
)

/** One argv token: a flag, a flag with its value, a `--flag=value`, or a stray word. */
const token: fc.Arbitrary<ReadonlyArray<string>> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...FLAGS).map((f) => [f]) },
  { weight: 4, arbitrary: fc.tuple(fc.constantFrom(...FLAGS), value).map(([f, v]) => [f, v]) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...FLAGS), value).map(([f, v]) => [`${f}=${v}`]) },
  { weight: 1, arbitrary: value.map((v) => [v]) }
)

const COMMANDS: ReadonlyArray<ReadonlyArray<string>> = [
  ["status"], ["doctor"], ["replay"], ["init"], ["sweep", "sessions"], ["sweep", "events"], ["sweep"], ["cost"], [], ["statuz"], ["sweep", "nope"]
]

const caseArb = fc.record({
  command: fc.constantFrom(...COMMANDS),
  tokens: fc.array(token, { maxLength: 8 }).map((ts) => ts.flat()),
  pathPick: fc.array(fc.nat(), { minLength: 8, maxLength: 8 }),
  colour: fc.boolean()
})

/**
 * Confines the argv to the temp directories: a path flag's value (next word or `=value`) becomes one of
 * the temp paths; replay always gets the temp trace first and never `-` (standard input).
 */
const confine = (command: ReadonlyArray<string>, tokens: ReadonlyArray<string>, pick: ReadonlyArray<number>): Array<string> => {
  let n = 0
  const somePath = () => paths[pick[n++ % pick.length]! % paths.length]!
  const out: Array<string> = [...command]
  if (command[0] === "replay") out.push(trace)
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!
    const eq = t.indexOf("=")
    if (t.startsWith("--") && eq > 0 && PATH_FLAGS.has(t.slice(0, eq))) {
      out.push(`${t.slice(0, eq)}=${somePath()}`)
    } else if (PATH_FLAGS.has(t)) {
      out.push(t, somePath())
      if (i + 1 < tokens.length && !tokens[i + 1]!.startsWith("-")) i++
    } else if (command[0] === "replay" && (t === "-" || t.startsWith("/dev/") || t.startsWith("/proc/"))) {
      out.push(somePath())
    } else out.push(t)
  }
  return out
}

const bounded = async <A>(p: Promise<A>, what: string): Promise<A> => {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} did not settle within ${CASE_MS} ms`)), CASE_MS)
      })
    ])
  } finally {
    clearTimeout(timer)
  }
}

describe("fuzz: CLI flags", () => {
  it(
    "US-6 random and hostile argv for every command: a documented exit code, no stack, no hang, no write outside the temp directories",
    async () => {
      await fc.assert(
        fc.asyncProperty(caseArb, async ({ command, tokens, pathPick, colour }) => {
          const args = confine(command, tokens, pathPick)
          const stdout = capture()
          const stderr = capture()
          const io: CliIo = { stdout, stderr, stdinIsTTY: false, env: colour ? {} : { NO_COLOR: "1" } }
          written.length = 0
          recording = true
          const code = await bounded(Effect.runPromise(runCli(["node", "ocpool", ...args], io)), JSON.stringify(args).slice(0, 300)).finally(() => {
            recording = false
          })
          const outside = written.filter((p) => !p.startsWith(base + sep))
          if (outside.length > 0) throw new Error(`wrote outside the temp directories for ${JSON.stringify(args)}: ${outside.join(", ")}`)
          const out = stdout.text()
          const err = stderr.text()
          if (!EXIT_CODES.has(code)) throw new Error(`exit ${code} for ${JSON.stringify(args)}: ${err.slice(0, 500)}`)
          if (STACK.test(out) || STACK.test(err)) throw new Error(`a stack for ${JSON.stringify(args)}: ${(err + out).slice(0, 800)}`)
          if (err.includes("internal error")) throw new Error(`an unexpected defect for ${JSON.stringify(args)}: ${err.slice(0, 500)}`)
          // a failure says why on stderr (doctor's failing checks are on stdout), and stderr lines are ocpool's or @effect/cli's usage
          if (code !== 0 && err === "" && !(command[0] === "doctor" && out !== "")) throw new Error(`exit ${code} with nothing said for ${JSON.stringify(args)}`)
        }),
        fuzzParams()
      )
      // the spy saw the commands write (init's pool file at least): it was not blind
      expect(seen).toBeGreaterThan(0)
    },
    fuzzTimeout(60)
  )
})
