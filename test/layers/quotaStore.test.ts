/** The quota store (issue 12, US-48): `quota.<enc>.json` files shared by every process, throttled per model, stale ones hidden. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { QuotaObservation } from "../../src/core/quota/headers.js"
import { decodeQuota, encodeQuota, quotaFileName, type QuotaRecord } from "../../src/core/quota/record.js"
import { QuotaStoreFile } from "../../src/layers/state/QuotaStoreFile.js"
import { QuotaStoreMemory } from "../../src/layers/state/QuotaStoreMemory.js"
import { QuotaStore } from "../../src/services/state/QuotaStore.js"
import { StateDir } from "../../src/services/state/StateDir.js"

const NOW = Date.parse("2026-12-01T12:00:00Z")
const stateDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "ocpool-quota-"))
  chmodSync(dir, 0o700)
  return dir
}
const onDir = (dir: string | undefined, pid = 1, trusted = true) =>
  QuotaStoreFile.pipe(Layer.provide(Layer.succeed(StateDir, { dir, trusted, pid, host: "test", startTime: null })))

const requests = (remaining: number, limit = 100, resetAt: number | undefined = NOW + 600_000): QuotaObservation => ({
  requests: { remaining, limit, resetAt },
  tokens: undefined,
  retryAt: undefined
})

const store = QuotaStore

describe("QuotaStoreFile", () => {
  it.live("US-48 a record round-trips through its file, written 0600 under the cooldown-style name", () => {
    const dir = stateDir()
    return Effect.gen(function* () {
      const q = yield* store
      yield* q.record("fakeB/pool-b", requests(3), NOW)
      const path = join(dir, "quota.fakeB_2fpool-b.json")
      expect(statSync(path).mode & 0o777).toBe(0o600)
      expect(decodeQuota(readFileSync(path, "utf8"))).toEqual({ model: "fakeB/pool-b", requests: { remaining: 3, limit: 100, resetAt: NOW + 600_000 }, seenAt: NOW })
      expect(yield* q.readAll(NOW + 1000)).toEqual([{ model: "fakeB/pool-b", requests: { remaining: 3, limit: 100, resetAt: NOW + 600_000 }, seenAt: NOW }])
      expect(readdirSync(dir).filter((n) => n.endsWith(".tmp"))).toEqual([])
    }).pipe(Effect.provide(onDir(dir)))
  })

  it.live("US-48 a busy provider is throttled: the same band within 5 s is not rewritten, a band crossing or 5 s later is", () => {
    const dir = stateDir()
    return Effect.gen(function* () {
      const q = yield* store
      const seen = () => decodeQuota(readFileSync(join(dir, quotaFileName("m/x")), "utf8"))
      yield* q.record("m/x", requests(55), NOW)
      yield* q.record("m/x", requests(51), NOW + 1000)
      expect(seen()?.requests?.remaining).toBe(55)
      yield* q.record("m/x", requests(49), NOW + 2000)
      expect(seen()?.requests?.remaining).toBe(49)
      yield* q.record("m/x", requests(45), NOW + 6999)
      expect(seen()?.requests?.remaining).toBe(49)
      yield* q.record("m/x", requests(44), NOW + 7000)
      expect(seen()).toMatchObject({ requests: { remaining: 44 }, seenAt: NOW + 7000 })
      // an observation with no figures writes nothing
      yield* q.record("other/y", { requests: undefined, tokens: undefined, retryAt: NOW + 5000 }, NOW)
      expect(existsSync(join(dir, quotaFileName("other/y")))).toBe(false)
    }).pipe(Effect.provide(onDir(dir)))
  })

  it.live("US-48 stale records are hidden and deleted in a trusted dir, left alone in an untrusted one", () => {
    const dir = stateDir()
    const passed: QuotaRecord = { model: "a/passed", requests: { remaining: 0, limit: 10, resetAt: NOW - 1 }, seenAt: NOW - 60_000 }
    const undated: QuotaRecord = { model: "b/undated", tokens: { remaining: 5 }, seenAt: NOW - 11 * 60_000 }
    const fresh: QuotaRecord = { model: "c/fresh", tokens: { remaining: 5 }, seenAt: NOW - 60_000 }
    for (const r of [passed, undated, fresh]) writeFileSync(join(dir, quotaFileName(r.model)), encodeQuota(r))
    return Effect.gen(function* () {
      expect(yield* (yield* store).readAll(NOW)).toEqual([])
      expect(yield* Effect.provide(Effect.flatMap(store, (q) => q.readAll(NOW)), onDir(dir, 2, false))).toEqual([fresh])
      expect(readdirSync(dir).sort()).toEqual([quotaFileName(passed.model), quotaFileName(undated.model), quotaFileName(fresh.model)].sort())
      expect(yield* Effect.provide(Effect.flatMap(store, (q) => q.readAll(NOW)), onDir(dir, 3, true))).toEqual([fresh])
      expect(readdirSync(dir)).toEqual([quotaFileName(fresh.model)])
    }).pipe(Effect.provide(onDir(undefined)))
  })

  it.live("US-48 a garbage file, a directory under a quota name and other models' files under a wrong name are ignored", () => {
    const dir = stateDir()
    const good: QuotaRecord = { model: "z/good", requests: { remaining: 7, limit: 10 }, seenAt: NOW }
    writeFileSync(join(dir, quotaFileName("z/good")), encodeQuota(good))
    writeFileSync(join(dir, "quota.garbage.json"), "\u0000not json{")
    writeFileSync(join(dir, "quota.elsewhere.json"), encodeQuota({ ...good, model: "z/other" }))
    writeFileSync(join(dir, "cooldown.z_2fgood.json"), "{}")
    mkdirSync(join(dir, "quota.dir.json"))
    return Effect.gen(function* () {
      expect(yield* (yield* store).readAll(NOW)).toEqual([good])
    }).pipe(Effect.provide(onDir(dir, 1, false)))
  })

  it.live("US-48 two processes' writes are both visible to each, sorted by model", () => {
    const dir = stateDir()
    const read = (pid: number) => Effect.provide(Effect.flatMap(store, (q) => q.readAll(NOW + 100)), onDir(dir, pid))
    return Effect.gen(function* () {
      yield* Effect.provide(Effect.flatMap(store, (q) => q.record("zen/alpha", requests(80), NOW)), onDir(dir, 1))
      yield* Effect.provide(Effect.flatMap(store, (q) => q.record("go/gamma", { requests: undefined, tokens: { remaining: 9000, limit: 10_000, resetAt: undefined }, retryAt: undefined }, NOW)), onDir(dir, 2))
      for (const pid of [1, 2]) expect((yield* read(pid)).map((r) => r.model)).toEqual(["go/gamma", "zen/alpha"])
    })
  })

  it.live("US-48 a state dir that cannot be written: record does not fail, and the next response tries again", () => {
    const dir = join(stateDir(), "gone")
    return Effect.gen(function* () {
      const q = yield* store
      yield* q.record("m/x", requests(50), NOW)
      expect(yield* q.readAll(NOW)).toEqual([])
    }).pipe(Effect.provide(onDir(dir)))
  })

  it.effect("US-48 without a state dir the records live in the process, stale ones hidden", () =>
    Effect.gen(function* () {
      const q = yield* store
      yield* q.record("m/x", requests(50, 100, NOW + 1000), NOW)
      yield* q.record("a/y", requests(5, 10, undefined), NOW)
      expect((yield* q.readAll(NOW + 10)).map((r) => r.model)).toEqual(["a/y", "m/x"])
      expect((yield* q.readAll(NOW + 1000)).map((r) => r.model)).toEqual(["a/y"])
    }).pipe(Effect.provide(onDir(undefined)))
  )
})

describe("QuotaStoreMemory", () => {
  it.effect("US-48 two layers on one table see each other's records; each throttles its own writes", () => {
    const table = new Map<string, QuotaRecord>()
    return Effect.gen(function* () {
      yield* Effect.provide(Effect.flatMap(store, (q) => Effect.zipRight(q.record("m/x", requests(55), NOW), q.record("m/x", requests(54), NOW + 10))), QuotaStoreMemory(table))
      expect(table.get("m/x")?.requests?.remaining).toBe(55)
      yield* Effect.provide(Effect.flatMap(store, (q) => q.record("n/y", requests(1, 10, NOW + 50), NOW)), QuotaStoreMemory(table))
      const all = yield* Effect.provide(Effect.flatMap(store, (q) => q.readAll(NOW + 20)), QuotaStoreMemory(table))
      expect(all.map((r) => r.model)).toEqual(["m/x", "n/y"])
      const later = yield* Effect.provide(Effect.flatMap(store, (q) => q.readAll(NOW + 50)), QuotaStoreMemory(table))
      expect(later.map((r) => r.model)).toEqual(["m/x"])
    })
  })
})
