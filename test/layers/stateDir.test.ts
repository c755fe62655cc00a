/**
 * The state directory, its trust, and the directories the plugin and the CLI create (SPEC §2.1):
 * directories under /proc or behind a file end at once with a named problem; a state directory that
 * is a symbolic link, another user's, wider than 0700 or holding foreign files is read but never
 * cleaned; no home directory is a value, never a throw.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import fc from "fast-check"
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { encodeClaimFile } from "../../src/core/pool/claimFile.js"
import { judgeStateDir, STATE_ENTRY } from "../../src/core/stateTrust.js"
import { AppLogMemory } from "../../src/layers/opencode/AppLogMemory.js"
import { makeDir } from "../../src/layers/fs/dirs.js"
import { RetentionLogFile } from "../../src/layers/retention/RetentionLogFile.js"
import { sharedStateLayer } from "../../src/layers/state/sharedStateLayer.js"
import { inspectStateDir, resolveStateDir, StateDirFile } from "../../src/layers/state/StateDirFile.js"
import { TraceRecorderFile } from "../../src/layers/pool/TraceRecorderFile.js"
import { homeDir, xdgDir } from "../../src/layers/fs/xdg.js"
import type { LogLevel } from "../../src/services/opencode/AppLog.js"
import { RetentionLog } from "../../src/services/retention/RetentionLog.js"
import { SharedState } from "../../src/services/state/SharedState.js"
import { StateDir } from "../../src/services/state/StateDir.js"
import { TraceRecorder } from "../../src/services/pool/TraceRecorder.js"

const tmp = () => mkdtempSync(join(tmpdir(), "ocpool-statedir-"))
const DEAD_PID = 2 ** 22 + 12_345 // above Linux's pid_max default: never alive

/** An earlier version's litter: a dead peer's claim file, an old orphan tmp, an unparseable cooldown file. */
const litter = (dir: string) => {
  writeFileSync(join(dir, `claims.${DEAD_PID}.json`), encodeClaimFile({ pid: DEAD_PID, startTime: null, host: hostname(), writtenAt: Date.now(), reaped: 0, claims: [] }))
  writeFileSync(join(dir, "claims.7.json.tmp"), "{}")
  writeFileSync(join(dir, "cooldown.zen_2falpha.json"), "not json")
  const old = (Date.now() - 600_000) / 1000
  for (const n of ["claims.7.json.tmp", "cooldown.zen_2falpha.json"]) utimesSync(join(dir, n), old, old)
  return readdirSync(dir).sort()
}

/** Boots the state dir and the shared state as the plugin does, and reads claims and cooldowns once (both readable). */
const bootAndRead = (option: string | undefined, env: NodeJS.ProcessEnv) => {
  const logs: Array<{ level: LogLevel; message: string }> = []
  const state = StateDirFile(option, env).pipe(Layer.provide(AppLogMemory(logs)))
  return Effect.gen(function* () {
    const dir = yield* StateDir
    expect((yield* (yield* SharedState).read(Date.now(), { claims: true, cooldowns: true })).problems).toEqual([])
    return { dir, logs }
  }).pipe(Effect.provide(sharedStateLayer({ backend: "sqlite", lockWaitMs: 250 }).pipe(Layer.provideMerge(state))), Effect.scoped)
}

describe("directories are created level by level (SPEC §2.1)", () => {
  it("US-9 a directory under /proc, behind a regular file or behind nothing ends at once with the path and code", () => {
    expect(makeDir("/proc/nope/state")).toEqual({ path: "/proc/nope", code: "ENOENT" })
    const dir = tmp()
    writeFileSync(join(dir, "file"), "x")
    expect(makeDir(join(dir, "file", "a", "b"))).toMatchObject({ path: join(dir, "file"), code: "ENOTDIR" })
    expect(makeDir(join(dir, "file"))).toMatchObject({ code: "EEXIST" })
    expect(makeDir(join(dir, "a", "b", "c"), 0o700)).toBeUndefined()
    expect(statSync(join(dir, "a", "b", "c")).mode & 0o777).toBe(0o700)
    expect(makeDir(join(dir, "a", "b", "c"))).toBeUndefined() // already there
  })

  it.live("US-9 a state dir under /proc boots at once: one 'state dir … unusable' warning, memory mode", () =>
    Effect.gen(function* () {
      const { dir, logs } = yield* bootAndRead("/proc/nope/state", {})
      expect(dir.dir).toBeUndefined()
      expect(logs.filter((l) => l.message.includes("state dir") && l.message.includes("unusable"))).toHaveLength(1)
      const fromEnv = yield* bootAndRead(undefined, { OCPOOL_STATE_DIR: "/proc/nope" })
      expect(fromEnv.dir.dir).toBeUndefined()
      expect(fromEnv.logs).toHaveLength(1)
    })
  )

  it.live("US-45 a trace path under /proc or behind a file: one warning at boot, nothing recorded, no hang", () =>
    Effect.gen(function* () {
      const base = tmp()
      writeFileSync(join(base, "file"), "x")
      for (const template of ["/proc/nope/t.jsonl", join(base, "file", "t-%p.jsonl")]) {
        const logs: Array<{ level: LogLevel; message: string }> = []
        yield* Effect.gen(function* () {
          const rec = yield* TraceRecorder
          yield* rec.record([{ type: "pool", at: 1 } as never], [])
          yield* rec.record([{ type: "pool", at: 2 } as never], [])
        }).pipe(Effect.provide(TraceRecorderFile(template).pipe(Layer.provide(AppLogMemory(logs)))))
        expect(logs.map((l) => l.message).filter((m) => m.includes("recording stopped"))).toHaveLength(1)
      }
    })
  )

  it.live("US-32 the sweeps' run log under /proc fails as a typed error instead of looping", () =>
    Effect.gen(function* () {
      const r = yield* Effect.flatMap(RetentionLog, (l) => l.run("event-prune", "{}")).pipe(Effect.provide(RetentionLogFile("/proc/nope/opencode-pool")), Effect.either)
      expect(r).toMatchObject({ _tag: "Left", left: { reason: "/proc/nope: cannot be created (no such file or directory)" } })
    })
  )
})

describe("the home directory (SPEC §2.1)", () => {
  const noSystemHome = () => {
    throw Object.assign(new Error("uv_os_homedir returned ENOENT"), { code: "ERR_SYSTEM_ERROR" })
  }

  it("US-15 no HOME and no system entry is no home, never a throw; an XDG variable still names its directory", () => {
    expect(homeDir({}, noSystemHome)).toBeUndefined()
    expect(homeDir({ HOME: "" }, noSystemHome)).toBeUndefined()
    expect(homeDir({ HOME: "relative/home" }, noSystemHome)).toBeUndefined()
    expect(homeDir({ HOME: "/h" }, noSystemHome)).toBe("/h")
    expect(xdgDir("XDG_STATE_HOME", {}, noSystemHome)).toBeUndefined()
    expect(xdgDir("XDG_STATE_HOME", { XDG_STATE_HOME: "/s" }, noSystemHome)).toBe("/s")
  })

  it("US-15 a relative XDG variable is ignored for its default under the home directory", () => {
    expect(xdgDir("XDG_CONFIG_HOME", { HOME: "/h", XDG_CONFIG_HOME: "rel/config" })).toBe("/h/.config")
    expect(xdgDir("XDG_DATA_HOME", { HOME: "/h", XDG_DATA_HOME: "" })).toBe("/h/.local/share")
  })

  it.live("US-9 the plugin's state dir without any home directory: one warning, memory mode", () =>
    Effect.gen(function* () {
      expect(resolveStateDir("~/state", { HOME: "relative" })._tag).toBe("Dir") // relative HOME: the system entry stands in
      const { dir, logs } = yield* bootAndRead(undefined, { HOME: "", XDG_STATE_HOME: "relative/state", OCPOOL_STATE_DIR: "/proc/nope" })
      expect(dir.dir).toBeUndefined()
      expect(logs).toHaveLength(1)
    })
  )
})

/** What the database adds to a directory. */
const withoutDb = (names: ReadonlyArray<string>) => names.filter((n) => !n.startsWith("state.db")).sort()

describe("a state dir is changed only when it is trusted (SPEC §2.1, §5.2; issue 32)", () => {
  it.live("US-9 a trusted state dir (0700, this user's, only state files) holds state.db; an earlier version's record files are imported and renamed *.imported, and it stays trusted", () =>
    Effect.gen(function* () {
      const dir = join(tmp(), "state")
      mkdirSync(dir, { mode: 0o700 })
      litter(dir)
      const { dir: state, logs } = yield* bootAndRead(dir, {})
      expect(state.trusted).toBe(true)
      expect(logs).toEqual([])
      expect(statSync(join(dir, "state.db")).mode & 0o777).toBe(0o600)
      expect(withoutDb(readdirSync(dir))).toEqual([`claims.${DEAD_PID}.json`, "claims.7.json.tmp", "cooldown.zen_2falpha.json.imported"])
      expect(inspectStateDir(dir)).toEqual({ trusted: true })
    })
  )

  it.live("US-9 a state dir that is a symbolic link: one warning, its target read but nothing in it deleted", () =>
    Effect.gen(function* () {
      const base = tmp()
      const target = join(base, "elsewhere")
      mkdirSync(target, { mode: 0o700 })
      const before = litter(target)
      symlinkSync(target, join(base, "state"))
      const { dir, logs } = yield* bootAndRead(join(base, "state"), {})
      expect(dir.dir).toBe(join(base, "state"))
      expect(dir.trusted).toBe(false)
      expect(logs.map((l) => l.message)).toEqual([expect.stringContaining("symbolic link")])
      expect(withoutDb(readdirSync(target))).toEqual(before)
    })
  )

  it.live("US-9 a state dir with mode 0755, or holding a file that is not a state file, is read and left as it is", () =>
    Effect.gen(function* () {
      const wide = join(tmp(), "state")
      mkdirSync(wide)
      chmodSync(wide, 0o755)
      const wideBefore = litter(wide)
      const w = yield* bootAndRead(wide, {})
      expect(w.logs.map((l) => l.message)).toEqual([expect.stringContaining("mode 755")])
      expect(withoutDb(readdirSync(wide))).toEqual(wideBefore)
      const foreign = tmp()
      writeFileSync(join(foreign, "notes.txt"), "mine")
      const foreignBefore = litter(foreign)
      const f = yield* bootAndRead(foreign, {})
      expect(f.logs.map((l) => l.message)).toEqual([expect.stringContaining('"notes.txt"')])
      expect(withoutDb(readdirSync(foreign))).toEqual(foreignBefore)
    })
  )

  it("US-9 the trust rule: any symlink, other owner, group or other permission bit, or stranger makes a dir untrusted", () => {
    fc.assert(
      fc.property(fc.boolean(), fc.boolean(), fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 0o777 }), fc.option(fc.string(), { nil: undefined }), (isSymlink, isDirectory, uid, mode, stranger) => {
        const verdict = judgeStateDir({ isSymlink, isDirectory, uid, ownUid: 1, mode, stranger })
        const expected = !isSymlink && isDirectory && uid === 1 && (mode & 0o077) === 0 && stranger === undefined
        expect(verdict.trusted).toBe(expected)
      }),
      { seed: 20261201, numRuns: 500 }
    )
    expect(["claims.12.json", "claims.12-3.json.tmp", "cooldown.zen_2falpha.json", "quota.zen_2falpha.json", "fallback.ses_abc.json.tmp", "pool.lock", "popups.json", "permits.json", "permits.json.tmp", "context._2fp.json", "context._2fp.queued.tmp", "state.db", "state.db-wal", "state.db-shm", "cooldown.zen_2falpha.json.imported"].every((n) => STATE_ENTRY.test(n))).toBe(true)
    expect(["notes.txt", ".bashrc", "claims.x.json", "cooldown..json", "fallback..json", "context..json", "context._2fp.txt", "a.tmp", "state.db.bak", "state.dbx", "notes.imported"].some((n) => STATE_ENTRY.test(n))).toBe(false)
    expect(inspectStateDir("/proc/nope")).toMatchObject({ trusted: false })
  })
})

describe("process facts from untrusted pids (SPEC §5.2)", () => {
  it("US-9 a pid no process can have (0, negative, fractional, huge) is dead and has no start token; a live pid is alive", async () => {
    const { pidState, startTimeOf } = await import("../../src/layers/state/proc.js")
    for (const pid of [0, -1, -process.pid, 1.5, Number.NaN, 2 ** 60]) {
      expect(pidState(pid)).toBe("dead")
      expect(startTimeOf(pid)).toBeNull()
    }
    expect(pidState(process.pid)).toBe("alive")
  })
})
