/**
 * Fuzz family: plugin options and environments. Random and hostile values for `stateDir`, `trace`,
 * `OCPOOL_STATE_DIR`, `OCPOOL_TRACE`, `HOME` and the XDG variables (fresh paths, existing directories,
 * regular files where a directory belongs, symbolic links to directories, loops and dangling links,
 * FIFOs, paths under /proc, `~` forms, relative and empty values, hostile strings) go through the
 * plugin's boot of its directories in-process: the state dir (resolution, creation, trust), the shared
 * state's first read of claims and cooldowns, the trace recorder's boot and the config dir creation.
 * Each case returns within a bound, throws nothing, reads every kind it asks for, logs at most one
 * warning for the state dir and one for the trace, deletes nothing in a directory it does not trust,
 * and writes nothing outside its own temp directory.
 *
 * HOME is always absolute and inside the case's directory: a missing or relative HOME falls back to the
 * system's home, which a test must never write in (test/layers/stateDir.test.ts covers "no home").
 * Relative state and trace paths are left out for the same reason (they resolve against the working
 * directory, which is the source tree).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import fc from "fast-check"
import { spawnSync } from "node:child_process"
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { homedir, tmpdir } from "node:os"
import { join } from "node:path"
import { parseSettings } from "../../src/core/options.js"
import { AppLogMemory } from "../../src/layers/opencode/AppLogMemory.js"
import { makeDir } from "../../src/layers/fs/dirs.js"
import { configDir } from "../../src/layers/pool/PoolConfigFile.js"
import { sharedStateLayer } from "../../src/layers/state/sharedStateLayer.js"
import { StateDirFile } from "../../src/layers/state/StateDirFile.js"
import { TraceRecorderFile } from "../../src/layers/pool/TraceRecorderFile.js"
import type { LogLevel } from "../../src/services/opencode/AppLog.js"
import { SharedState } from "../../src/services/state/SharedState.js"
import { StateDir } from "../../src/services/state/StateDir.js"
import { TraceRecorder } from "../../src/services/pool/TraceRecorder.js"
import { breather, FUZZ_RUNS, fuzzParams, fuzzTimeout, hostileString } from "./common.js"

/** One case (boot, one read, one trace record) must end within this; a loop never would. */
const CASE_MS = 2_000

/** What a path value is, built inside the case's own directory (`root`). */
type Place =
  | { readonly k: "fresh"; readonly depth: number }
  | { readonly k: "dir"; readonly mode: number; readonly stranger: boolean }
  | { readonly k: "file" }
  | { readonly k: "underFile" }
  | { readonly k: "linkToDir" }
  | { readonly k: "loop" }
  | { readonly k: "dangling" }
  | { readonly k: "fifo" }
  | { readonly k: "proc"; readonly tail: string }
  | { readonly k: "tilde"; readonly name: string }
  | { readonly k: "empty" }
  | { readonly k: "relative"; readonly text: string }
  | { readonly k: "absent" }

const safeName = fc.stringMatching(/^[A-Za-z0-9._-]{1,12}$/).filter((s) => s !== "." && s !== "..")

const place = (allowRelative: boolean): fc.Arbitrary<Place> =>
  fc.oneof(
    fc.record({ k: fc.constant("fresh" as const), depth: fc.integer({ min: 0, max: 4 }) }),
    fc.record({ k: fc.constant("dir" as const), mode: fc.constantFrom(0o700, 0o755, 0o777, 0o500, 0o711), stranger: fc.boolean() }),
    fc.constant({ k: "file" as const }),
    fc.constant({ k: "underFile" as const }),
    fc.constant({ k: "linkToDir" as const }),
    fc.constant({ k: "loop" as const }),
    fc.constant({ k: "dangling" as const }),
    fc.constant({ k: "fifo" as const }),
    fc.record({ k: fc.constant("proc" as const), tail: fc.constantFrom("nope", "nope/deeper/still", "self/nope", "1/nope", "sys/nope") }),
    fc.record({ k: fc.constant("tilde" as const), name: safeName }),
    fc.constant({ k: "empty" as const }),
    fc.constant({ k: "absent" as const }),
    ...(allowRelative ? [fc.record({ k: fc.constant("relative" as const), text: hostileString.filter((s) => !s.startsWith("/") && !s.startsWith("~")) })] : [])
  )

/** Materialises `p` under `root` as entry `name`; `undefined` leaves the variable unset. `fifo`: one FIFO made once for the run (no child process per case). */
const buildIn = (root: string, name: string, p: Place, fifo: string | undefined): string | undefined => {
  const at = join(root, name)
  switch (p.k) {
    case "fresh":
      return join(at, ...Array.from({ length: p.depth }, (_, i) => `l${i}`))
    case "dir":
      mkdirSync(at, { mode: p.mode })
      if (p.stranger) writeFileSync(join(at, "notes.txt"), "x")
      writeFileSync(join(at, "claims.7.json.tmp"), "{}") // litter a trusted reader could delete when old
      return at
    case "file":
      writeFileSync(at, "x")
      return at
    case "underFile":
      writeFileSync(at, "x")
      return join(at, "below")
    case "linkToDir":
      mkdirSync(`${at}.target`, { mode: 0o700 })
      writeFileSync(join(`${at}.target`, "cooldown.x.json"), "not json")
      symlinkSync(`${at}.target`, at)
      return at
    case "loop":
      symlinkSync(at, at)
      return at
    case "dangling":
      symlinkSync(join(root, "nowhere", name), at)
      return at
    case "fifo":
      if (fifo !== undefined) return fifo
      writeFileSync(at, "x")
      return at
    case "proc":
      return `/proc/${p.tail}`
    case "tilde":
      return `~/${p.name}`
    case "empty":
      return ""
    case "relative":
      return p.text
    case "absent":
      return undefined
  }
}

interface Case {
  readonly home: Place
  readonly stateOption: Place
  readonly stateEnv: Place
  readonly trace: Place
  readonly traceFromEnv: boolean
  readonly xdgState: Place
  readonly xdgConfig: Place
}

const cases: fc.Arbitrary<Case> = fc.record({
  home: place(false).filter((p) => p.k !== "empty" && p.k !== "absent" && p.k !== "tilde" && p.k !== "relative"),
  stateOption: place(false).filter((p) => p.k !== "relative"),
  stateEnv: place(false).filter((p) => p.k !== "relative" && p.k !== "tilde"),
  trace: place(false).filter((p) => p.k !== "relative" && p.k !== "tilde"),
  traceFromEnv: fc.boolean(),
  xdgState: place(true).filter((p) => p.k !== "tilde"),
  xdgConfig: place(true).filter((p) => p.k !== "tilde")
})

/** Every entry under `dir` (names only, sorted), or `undefined` when it cannot be listed. */
const listing = (dir: string): ReadonlyArray<string> | undefined => {
  try {
    return readdirSync(dir).sort()
  } catch {
    return undefined
  }
}

/** The real home's XDG dirs for this package: a case must never create them. */
const realHomeDirs = (() => {
  try {
    const h = homedir()
    return [join(h, ".local", "state", "opencode-pool"), join(h, ".config", "opencode-pool"), join(h, ".local", "share", "opencode-pool")]
  } catch {
    return []
  }
})()

const runCase = async (c: Case, root: string, fifo: string | undefined): Promise<void> => {
  const build = (name: string, p: Place) => buildIn(root, name, p, fifo)
  const home = build("home", c.home)!
  const env: NodeJS.ProcessEnv = { HOME: home }
  const set = (k: string, v: string | undefined) => {
    if (v !== undefined) env[k] = v
  }
  set("OCPOOL_STATE_DIR", build("stateEnv", c.stateEnv))
  set("XDG_STATE_HOME", build("xdgState", c.xdgState))
  set("XDG_CONFIG_HOME", build("xdgConfig", c.xdgConfig))
  const stateOption = build("stateOption", c.stateOption)
  const trace = build("trace", c.trace)
  if (c.traceFromEnv) set("OCPOOL_TRACE", trace)
  // the settings as the plugin parses them: the option values are untrusted too
  const { settings } = parseSettings({ stateDir: stateOption, ...(c.traceFromEnv ? {} : { trace }) }, env)

  const before = new Map<string, ReadonlyArray<string> | undefined>()
  for (const name of readdirSync(root)) before.set(name, listing(join(root, name)))

  const logs: Array<{ level: LogLevel; message: string }> = []
  const log = AppLogMemory(logs)
  const state = StateDirFile(settings.stateDir, env).pipe(Layer.provide(log))
  const t0 = Date.now()
  const seen = await Effect.runPromise(
    Effect.gen(function* () {
      const dir = yield* StateDir
      // the first read of claims and cooldowns, as the plugin's first spawn makes it: every kind readable
      const first = yield* (yield* SharedState).read(Date.now(), { claims: true, cooldowns: true })
      expect(first.problems).toEqual([])
      yield* (yield* TraceRecorder).record([{ type: "pool", at: 1 } as never], [])
      return dir
    }).pipe(
      Effect.provide(
        Layer.mergeAll(sharedStateLayer({ backend: "sqlite", lockWaitMs: settings.lockWaitMs }).pipe(Layer.provide(log)), TraceRecorderFile(settings.trace).pipe(Layer.provide(log))).pipe(
          Layer.provideMerge(state)
        )
      ),
      Effect.scoped,
      Effect.timeoutFail({ duration: CASE_MS, onTimeout: () => new Error("case did not end in time") })
    )
  )
  const config = configDir(env)
  if (config !== undefined) makeDir(config, 0o777)
  expect(Date.now() - t0).toBeLessThan(CASE_MS)

  // at most one warning for the state dir and one for the trace, nothing louder
  expect(logs.every((l) => l.level === "warn")).toBe(true)
  expect(logs.filter((l) => l.message.startsWith("state dir")).length).toBeLessThanOrEqual(1)
  expect(logs.filter((l) => l.message.startsWith("trace")).length).toBeLessThanOrEqual(1)
  expect(logs.length).toBeLessThanOrEqual(2)

  if (seen.dir !== undefined) {
    if (seen.trusted === true) {
      const st = lstatSync(seen.dir)
      expect(st.isDirectory() && !st.isSymbolicLink()).toBe(true)
      expect(st.mode & 0o077).toBe(0)
    } else {
      // untrusted: read, never cleaned (the only new name may be this process's own claim file)
      for (const [name, was] of before) {
        const at = join(root, name)
        if (was === undefined || !seen.dir.startsWith(at)) continue
        const now = listing(at)
        for (const entry of was) expect(now).toContain(entry)
      }
    }
  }
}

describe("fuzz: plugin options and environments", () => {
  it(
    `US-9 ${FUZZ_RUNS} hostile option and environment sets boot the plugin's directories within a bound, with at most one warning each, writing only inside their own directory`,
    async () => {
      const realBefore = realHomeDirs.map((d) => existsSync(d))
      const cwdBefore = readdirSync(process.cwd())
      const parent = mkdtempSync(join(tmpdir(), "ocpool-fuzz-opts-"))
      const fifo = spawnSync("mkfifo", [join(parent, "shared.fifo")]).status === 0 ? join(parent, "shared.fifo") : undefined
      let n = 0
      const breathe = breather(50)
      try {
        await fc.assert(
          fc.asyncProperty(cases, async (c) => {
            await breathe()
            const root = join(parent, String(n++))
            mkdirSync(root)
            try {
              await runCase(c, root, fifo)
            } finally {
              rmSync(root, { recursive: true, force: true })
            }
          }),
          fuzzParams()
        )
      } finally {
        rmSync(parent, { recursive: true, force: true })
      }
      expect(realHomeDirs.map((d) => existsSync(d))).toEqual(realBefore)
      expect(readdirSync(process.cwd()).filter((f) => !cwdBefore.includes(f) && /^(claims\.|cooldown\.|pool\.lock|opencode-pool|l0$)|\.jsonl$|\.tmp$/.test(f))).toEqual([])
    },
    fuzzTimeout(40) // about 11 ms a case measured on 2 shared cores; each case is bounded on its own
  )
})
