/**
 * `pool.lock` (SPEC §5.3) through the file backend's lock part (poolLock.ts; the port keeps it private). Every synchronous `node:fs` call of the code
 * under test goes through a pass-through wrapper (below), so a test can look at the directory after
 * each call, or make a call fail, or "kill" the process at any call (that call and every later one
 * throws, as nothing more happens after a SIGKILL).
 */
import { describe, expect, it } from "@effect/vitest"
import { vi } from "vitest"
import { Effect, Layer } from "effect"
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { decodeLockFile } from "../../src/core/lockFile.js"
import { STATE_ENTRY } from "../../src/core/stateTrust.js"
import { AppLogMemory } from "../../src/layers/opencode/AppLogMemory.js"
import { poolLockOn } from "../../src/layers/state/poolLock.js"
import { sharedStateLayer } from "../../src/layers/state/sharedStateLayer.js"
import { inspectStateDir } from "../../src/layers/state/StateDirFile.js"
import { SharedState } from "../../src/services/state/SharedState.js"
import { StateDir } from "../../src/services/state/StateDir.js"

const fsCtl = vi.hoisted(() => ({
  /** Runs before each wrapped call, with its name and arguments; a throw fails the call. */
  before: undefined as undefined | ((name: string, args: ReadonlyArray<unknown>) => void),
  /** Runs after each wrapped call, whether it threw or not. */
  after: undefined as undefined | ((name: string) => void)
}))
vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs")>()
  const wrapped: Record<string, unknown> = { ...real }
  for (const [name, f] of Object.entries(real)) {
    if (typeof f !== "function" || !name.endsWith("Sync")) continue
    wrapped[name] = (...args: Array<unknown>) => {
      fsCtl.before?.(name, args)
      try {
        return (f as (...a: Array<unknown>) => unknown)(...args)
      } finally {
        fsCtl.after?.(name)
      }
    }
  }
  return { ...wrapped, default: wrapped }
})
/** The file system as it is, for looking without being looked at. */
const realFs = await vi.importActual<typeof import("node:fs")>("node:fs")

const DEAD_PID = 2 ** 22 + 12_345 // above Linux's pid_max default: never alive

const failure = (code: string) => Object.assign(new Error(`${code} (injected)`), { code })

/** `fsCtl` set for the run of `f` only. */
const withFs = async <A>(hooks: Partial<typeof fsCtl>, f: () => Promise<A>): Promise<A> => {
  fsCtl.before = hooks.before
  fsCtl.after = hooks.after
  try {
    return await f()
  } finally {
    fsCtl.before = undefined
    fsCtl.after = undefined
  }
}

const tmps = (dir: string) => realFs.readdirSync(dir).filter((n) => n.endsWith(".tmp"))

/** The lock of process `pid` (this one by default) on `dir`, waiting up to `waitMs`. */
const lockOn = (dir: string, o: { readonly pid?: number; readonly waitMs?: number } = {}) =>
  poolLockOn({ dir, pid: o.pid ?? process.pid, host: hostname(), startTime: null }, o.waitMs ?? 250).pipe(Effect.provide(AppLogMemory([])))

/** The lock of a process `pid`, waiting up to `waitMs`: runs `body` under it and returns its result, the fail-opens and the time taken. */
const underLock = <A>(dir: string, body: Effect.Effect<A>, o: { readonly pid?: number; readonly waitMs?: number } = {}) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const lock = yield* lockOn(dir, o)
      const t0 = Date.now()
      const value = yield* lock.withLock(body)
      return { value, ms: Date.now() - t0, failOpens: yield* lock.failOpens }
    })
  )

/** What sits at pool.lock: absent, or its text. */
const lockText = (dir: string): string | undefined => {
  try {
    return realFs.readFileSync(join(dir, "pool.lock"), "utf8")
  } catch {
    return undefined
  }
}

describe("pool.lock ownership (SPEC §5.3)", () => {
  it.live("US-40 the lock is held during the body and removed after it", () => {
    const dir = mkdtempSync(join(tmpdir(), "ocpool-lock-"))
    return Effect.gen(function* () {
      const seen = yield* Effect.flatMap(lockOn(dir), (l) => l.withLock(Effect.sync(() => JSON.parse(readFileSync(join(dir, "pool.lock"), "utf8")) as { pid: number })))
      expect(seen.pid).toBe(process.pid)
      expect(existsSync(join(dir, "pool.lock"))).toBe(false)
    })
  })

  it.live("US-40 a lock whose content another process replaced during the pick is not deleted", () => {
    const dir = mkdtempSync(join(tmpdir(), "ocpool-lock-"))
    const other = JSON.stringify({ pid: 1, startTime: null, host: "elsewhere", at: Date.now() })
    return Effect.gen(function* () {
      yield* Effect.flatMap(lockOn(dir), (l) => l.withLock(Effect.sync(() => writeFileSync(join(dir, "pool.lock"), other))))
      expect(readFileSync(join(dir, "pool.lock"), "utf8")).toBe(other)
    })
  })
})

describe("pool.lock is never empty (SPEC §5.3, issue 18)", () => {
  it("US-40 at no moment of many acquisitions, releases, takeovers and busy attempts does pool.lock exist empty, and no temporary stays behind", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ocpool-lock-"))
    const seen = { empty: 0, whole: 0, strangers: [] as Array<string> }
    const look = () => {
      const text = lockText(dir)
      if (text === "") seen.empty++
      else if (text !== undefined && decodeLockFile(text) !== undefined) seen.whole++
      for (const n of realFs.readdirSync(dir)) if (!STATE_ENTRY.test(n)) seen.strangers.push(n)
    }
    await withFs({ after: look }, async () => {
      for (let i = 0; i < 20; i++) await underLock(dir, Effect.void)
      for (let i = 0; i < 10; i++) {
        // a dead holder's lock, taken over
        realFs.writeFileSync(join(dir, "pool.lock"), JSON.stringify({ pid: DEAD_PID, startTime: null, host: hostname(), at: Date.now() }))
        await underLock(dir, Effect.void)
        // a busy attempt while held: fails open, takes nothing
        const inner = await underLock(dir, Effect.promise(() => underLock(dir, Effect.void, { pid: DEAD_PID + 1, waitMs: 20 })))
        expect(inner.value.failOpens).toBe(1)
      }
    })
    expect(seen.empty).toBe(0)
    expect(seen.whole).toBeGreaterThan(40)
    expect(seen.strangers).toEqual([])
    expect(realFs.readdirSync(dir)).toEqual([])
  })

  it("US-40 a process killed at any step of taking the lock leaves no empty lock: the next process takes it at once, the dir stays trusted, a left temporary goes after a minute", async () => {
    // how many file-system calls one acquisition and release make
    const dry = mkdtempSync(join(tmpdir(), "ocpool-lock-"))
    let calls = 0
    await withFs({ before: () => void calls++ }, () => underLock(dry, Effect.void, { pid: DEAD_PID, waitMs: 0 }))
    expect(calls).toBeGreaterThan(1)
    let leftTemps = 0
    for (let k = 0; k < calls; k++) {
      const dir = mkdtempSync(join(tmpdir(), "ocpool-lock-"))
      let n = 0
      // the victim dies at its k-th call: that call and every later one fail
      await withFs(
        {
          before: () => {
            if (n++ >= k) throw failure("EKILLED")
          }
        },
        () => underLock(dir, Effect.void, { pid: DEAD_PID, waitMs: 0 })
      )
      const text = lockText(dir)
      expect(text === undefined || decodeLockFile(text) !== undefined, `killed at call ${k}: pool.lock holds ${JSON.stringify(text)}`).toBe(true)
      expect(inspectStateDir(dir), `killed at call ${k}`).toEqual({ trusted: true })
      const left = tmps(dir)
      expect(left.length).toBeLessThanOrEqual(1)
      leftTemps += left.length
      // the next process: at once, never failing open
      const next = await underLock(dir, Effect.sync(() => decodeLockFile(readFileSync(join(dir, "pool.lock"), "utf8"))?.pid))
      expect(next.value).toBe(process.pid)
      expect(next.failOpens, `killed at call ${k}`).toBe(0)
      expect(next.ms).toBeLessThan(200)
      // an orphan temporary is removed by the next read of claims once it is a minute old
      await Effect.runPromise(
        Effect.flatMap(SharedState, (s) => s.read(Date.now() + 61_000, { claims: true })).pipe(
          Effect.provide(sharedStateLayer({ backend: "file", lockWaitMs: 250 }).pipe(Layer.provide(Layer.succeed(StateDir, { dir, trusted: true, pid: process.pid, host: hostname(), startTime: null })))),
          Effect.scoped
        )
      )
      expect(tmps(dir)).toEqual([])
    }
    // some kill landed between the temporary's write and its removal
    expect(leftTemps).toBeGreaterThan(0)
  })

  it("US-40 a write that fails (no room left) leaves neither an empty lock nor a temporary; the next attempt takes the lock", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ocpool-lock-"))
    let failed = 0
    const r = await withFs(
      {
        before: (name) => {
          if ((name === "writeSync" || name === "writeFileSync") && failed++ === 0) throw failure("ENOSPC")
        }
      },
      () => underLock(dir, Effect.sync(() => lockText(dir)), { waitMs: 50 })
    )
    expect(realFs.readdirSync(dir)).toEqual([])
    expect(r.failOpens).toBe(0)
    expect(decodeLockFile(r.value ?? "")?.pid).toBe(process.pid)
    expect(failed).toBeGreaterThan(1)
  })

  it("US-40 where hard links are missing (link fails EPERM) the lock is made in place, whole, once tried; no temporary stays", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ocpool-lock-"))
    let links = 0
    const held = await withFs(
      {
        before: (name) => {
          if (name === "linkSync") {
            links++
            throw failure("EPERM")
          }
        }
      },
      () =>
        Effect.runPromise(
          Effect.gen(function* () {
            const lock = yield* lockOn(dir)
            const seen: Array<string | undefined> = []
            for (let i = 0; i < 3; i++) seen.push(yield* lock.withLock(Effect.sync(() => lockText(dir))))
            return { seen, failOpens: yield* lock.failOpens }
          })
        )
    )
    expect(links).toBe(1)
    expect(held.failOpens).toBe(0)
    for (const text of held.seen) expect(decodeLockFile(text ?? "")?.pid).toBe(process.pid)
    expect(realFs.readdirSync(dir)).toEqual([])
  })

  it("US-40 an empty pool.lock left by an older version is taken over once its file is 5 s old, and waited for while fresh", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ocpool-lock-"))
    const lock = join(dir, "pool.lock")
    realFs.writeFileSync(lock, "")
    const old = (Date.now() - 6_000) / 1000
    realFs.utimesSync(lock, old, old)
    const taken = await underLock(dir, Effect.sync(() => lockText(dir)))
    expect(taken.failOpens).toBe(0)
    expect(taken.ms).toBeLessThan(200)
    expect(decodeLockFile(taken.value ?? "")?.pid).toBe(process.pid)
    realFs.writeFileSync(lock, "")
    const fresh = await underLock(dir, Effect.void, { waitMs: 50 })
    expect(fresh.failOpens).toBe(1)
    expect(lockText(dir)).toBe("")
    expect(tmps(dir)).toEqual([])
  })

  it("US-40 the lock's temporaries are state files: pool.lock.<pid>-<hex>.tmp, nothing looser", () => {
    expect(["pool.lock.123-0123456789abcdef.tmp", "pool.lock.1-a.tmp", "pool.lock.tmp", "pool.lock"].every((n) => STATE_ENTRY.test(n))).toBe(true)
    expect(["pool.lock.123-0123456789ABCDEF.tmp", "pool.lock.x-ab.tmp", "pool.lock.123-ab", "pool.lock.123-.tmp", "pool.lock.123-ab.tmp.tmp"].some((n) => STATE_ENTRY.test(n))).toBe(false)
  })
})

