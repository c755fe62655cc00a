import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { AppLogMemory } from "../../src/layers/AppLogMemory.js"
import { PoolLockFile } from "../../src/layers/PoolLockFile.js"
import { PoolLock } from "../../src/services/PoolLock.js"
import { StateDir } from "../../src/services/StateDir.js"

const lockLayer = (dir: string) =>
  PoolLockFile(250).pipe(Layer.provide(Layer.mergeAll(AppLogMemory([]), Layer.succeed(StateDir, { dir, pid: process.pid, host: hostname(), startTime: null }))))

describe("pool.lock ownership (SPEC §5.3)", () => {
  it.live("US-40 the lock is held during the body and removed after it", () => {
    const dir = mkdtempSync(join(tmpdir(), "ocpool-lock-"))
    return Effect.gen(function* () {
      const seen = yield* Effect.flatMap(PoolLock, (l) => l.withLock(Effect.sync(() => JSON.parse(readFileSync(join(dir, "pool.lock"), "utf8")) as { pid: number })))
      expect(seen.pid).toBe(process.pid)
      expect(existsSync(join(dir, "pool.lock"))).toBe(false)
    }).pipe(Effect.provide(lockLayer(dir)))
  })

  it.live("US-40 a lock whose content another process replaced during the pick is not deleted", () => {
    const dir = mkdtempSync(join(tmpdir(), "ocpool-lock-"))
    const other = JSON.stringify({ pid: 1, startTime: null, host: "elsewhere", at: Date.now() })
    return Effect.gen(function* () {
      yield* Effect.flatMap(PoolLock, (l) => l.withLock(Effect.sync(() => writeFileSync(join(dir, "pool.lock"), other))))
      expect(readFileSync(join(dir, "pool.lock"), "utf8")).toBe(other)
    }).pipe(Effect.provide(lockLayer(dir)))
  })
})
