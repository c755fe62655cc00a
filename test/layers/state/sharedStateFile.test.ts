/** The shared-state contract over the file backend: processes on one temporary, trusted state directory; and how it judges a holder. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { execFileSync, spawn } from "node:child_process"
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import type { PermitEntry } from "../../../src/core/permits/types.js"
import { AppLogMemory, type MemoryLine } from "../../../src/layers/opencode/AppLogMemory.js"
import { startTimeOf } from "../../../src/layers/state/proc.js"
import { sharedStateLayer } from "../../../src/layers/state/sharedStateLayer.js"
import { ALL_RECORDS, SharedState, type Commit, type SharedStateService } from "../../../src/services/state/SharedState.js"
import { StateDir, type StateDirService } from "../../../src/services/state/StateDir.js"
import { sharedStateContract } from "./sharedState.contract.js"

/** Pids that run (this test's processes), and one that does not: the highest Linux allows is 4194304. */
const LIVE_PIDS = [process.pid, process.ppid, 1]
const DEAD_PID = 4_194_303
/** This process's own group (field 5 of /proc/self/stat, or what `ps` says): it lives while this test does. */
const ownGroup = (): number => {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8")
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2])
  } catch {
    return Number(execFileSync("ps", ["-o", "pgid=", "-p", String(process.pid)], { encoding: "utf8" }).trim())
  }
}
const OWN_GROUP = ownGroup()

const stateDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "ocpool-shared-"))
  chmodSync(dir, 0o700)
  return dir
}

/** The port of the process `as` names, on `dir`. */
const portAs = (dir: string, as: Omit<StateDirService, "dir" | "trusted">, lines: Array<MemoryLine> = []) =>
  sharedStateLayer({ backend: "file", lockWaitMs: 5_000 }).pipe(Layer.provide(Layer.merge(Layer.succeed(StateDir, { dir, trusted: true, ...as }), AppLogMemory(lines))))

sharedStateContract({
  name: "file",
  make: () => {
    const dir = stateDir()
    const port = (pid: number) => portAs(dir, { pid, host: hostname(), startTime: null })
    return {
      process: (n) => port(LIVE_PIDS[n - 1]!),
      dead: () => port(DEAD_PID),
      holders: { host: hostname(), live: (n) => LIVE_PIDS[n - 1]!, dead: DEAD_PID, liveGroup: OWN_GROUP, deadGroup: DEAD_PID }
    }
  }
})

describe("the file backend judges a holder by host, pid and start token (SPEC §5.2)", () => {
  const claim = (now: number) => ({ key: "k", base: "explore", slot: 1, model: "a/x", acquiredAt: now, heartbeatAt: now, ownerSession: "s", targetSession: null, abortAttempts: 0, abortPending: false, abortOrigin: null, abortInFlight: false, endedInFlight: false })
  const publishAs = (dir: string, as: Omit<StateDirService, "dir" | "trusted">, now: number) =>
    Effect.scoped(Effect.flatMap(SharedState, (p) => p.commit(now, { claims: { claims: [claim(now)], reaped: 0 }, cool: [], uncool: [] })).pipe(Effect.provide(portAs(dir, as))))
  const peersSeen = (dir: string, now: number) =>
    Effect.scoped(Effect.flatMap(SharedState, (p) => p.read(now, { claims: true })).pipe(Effect.provide(portAs(dir, { pid: process.pid, host: hostname(), startTime: null })))).pipe(
      Effect.map((snap) => snap.peers.map((x) => x.pid))
    )

  it.live.skipIf(startTimeOf(process.ppid) === null)("US-41 a holder on this host whose pid now runs under another start token (a reused pid) is gone; under its own token it holds", () => {
    const now = Date.now()
    const reused = stateDir()
    const same = stateDir()
    return Effect.gen(function* () {
      yield* publishAs(reused, { pid: process.ppid, host: hostname(), startTime: "1" }, now)
      yield* publishAs(same, { pid: process.ppid, host: hostname(), startTime: startTimeOf(process.ppid) }, now)
      expect(yield* peersSeen(reused, now)).toEqual([])
      expect(yield* peersSeen(same, now)).toEqual([process.ppid])
    })
  })

  it.live("US-41 a holder on another host is judged by its lease alone: a pid that is dead here does not end it", () => {
    const now = Date.now()
    const dir = stateDir()
    return Effect.gen(function* () {
      yield* publishAs(dir, { pid: DEAD_PID, host: "elsewhere", startTime: null }, now)
      expect(yield* peersSeen(dir, now)).toEqual([DEAD_PID])
    })
  })
})

describe("the file backend keeps permits in permits.json (issue 21)", () => {
  const nothing: Commit = { cool: [], uncool: [] }
  const entry = (id: string, seq: number, now: number): PermitEntry => ({
    id,
    token: `t-${id}`,
    budget: "heavy",
    weight: 1,
    reason: "npm test",
    holder: { host: hostname(), pid: process.pid, startToken: null, via: "plugin" },
    seq,
    requestedAt: now
  })
  const withPort = <A>(dir: string, f: (p: SharedStateService) => Effect.Effect<A>, lines: Array<MemoryLine> = []) =>
    Effect.scoped(Effect.flatMap(SharedState, f).pipe(Effect.provide(portAs(dir, { pid: process.pid, host: hostname(), startTime: null }, lines))))
  const fileOf = (dir: string) => join(dir, "permits.json")

  it.live("US-51 the file is written 0600 as {v:1,entries}, and a commit without permit changes does not rewrite it", () => {
    const dir = stateDir()
    const now = Date.now()
    return Effect.gen(function* () {
      yield* withPort(dir, (p) => p.commit(now, { ...nothing, permits: { put: [entry("a", 1, now)], remove: [] } }))
      const before = statSync(fileOf(dir))
      expect(before.mode & 0o777).toBe(0o600)
      expect(JSON.parse(readFileSync(fileOf(dir), "utf8"))).toEqual({ v: 1, entries: [entry("a", 1, now)] })
      yield* Effect.sleep("20 millis")
      yield* withPort(dir, (p) =>
        Effect.gen(function* () {
          yield* p.commit(now, { ...nothing, cool: [{ model: "a/x", reason: "rate_limit", strikes: 1, scope: "model", since: now, until: now + 60_000, source: "backoff" }] })
          yield* p.commit(now, { ...nothing, permits: { put: [], remove: [] } })
          // removing an entry that is not there changes nothing either
          yield* p.commit(now, { ...nothing, permits: { put: [], remove: ["unknown"] } })
          yield* p.transact(now, { permits: true }, () => ({ value: undefined, commit: nothing }))
        })
      )
      const after = statSync(fileOf(dir))
      expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs])
      // a real change does rewrite it
      yield* withPort(dir, (p) => p.commit(now, { ...nothing, permits: { put: [], remove: ["a"] } }))
      expect(statSync(fileOf(dir)).ino).not.toBe(before.ino)
      expect(JSON.parse(readFileSync(fileOf(dir), "utf8"))).toEqual({ v: 1, entries: [] })
    })
  })

  it.live("US-51 a corrupt permits.json reads as no entries with a problem of kind permits (a transaction logs it), and the next commit with permit changes rewrites it whole", () => {
    const dir = stateDir()
    const now = Date.now()
    const lines: Array<MemoryLine> = []
    writeFileSync(fileOf(dir), '{"v":1,"entries":[', { mode: 0o600 })
    return Effect.gen(function* () {
      const seen = yield* withPort(dir, (p) => p.read(now, ALL_RECORDS))
      expect(seen.permits).toEqual([])
      expect(seen.problems.map((x) => x.kind)).toEqual(["permits"])
      expect(seen.problems[0]?.reason).toMatch(/^permits\.json: /)
      yield* withPort(dir, (p) => p.transact(now, { permits: true }, () => ({ value: undefined, commit: { ...nothing, permits: { put: [entry("b", 7, now)], remove: [] } } })), lines)
      expect(lines.filter((l) => l.level === "warn").map((l) => l.message)).toEqual([expect.stringMatching(/^reading permits failed: permits\.json: /)])
      expect(JSON.parse(readFileSync(fileOf(dir), "utf8"))).toEqual({ v: 1, entries: [entry("b", 7, now)] })
      const again = yield* withPort(dir, (p) => p.read(now, { permits: true }))
      expect([again.permits.map((e) => e.id), again.problems]).toEqual([["b"], []])
    })
  })

  it.live("US-51 a bad entry is skipped, the others are read without a problem; another version or shape is a problem", () => {
    const now = Date.now()
    const readWith = (body: unknown) => {
      const dir = stateDir()
      writeFileSync(fileOf(dir), typeof body === "string" ? body : JSON.stringify(body), { mode: 0o600 })
      return withPort(dir, (p) => p.read(now, { permits: true })).pipe(Effect.map((snap) => [snap.permits.map((e) => e.id), snap.problems.map((x) => x.kind)]))
    }
    return Effect.gen(function* () {
      expect(yield* readWith({ v: 1, entries: [entry("a", 1, now), { id: "broken" }, { ...entry("c", 3, now), weight: 0 }, entry("d", 2, now)] })).toEqual([["a", "d"], []])
      expect(yield* readWith({ v: 2, entries: [entry("a", 1, now)] })).toEqual([[], ["permits"]])
      expect(yield* readWith([entry("a", 1, now)])).toEqual([[], ["permits"]])
      expect(yield* readWith("")).toEqual([[], ["permits"]])
    })
  })

  it.live("US-51 without a usable state directory permits live in this process, judged by this host's processes", () => {
    const now = Date.now()
    const port = sharedStateLayer({ backend: "file", lockWaitMs: 5_000 }).pipe(
      Layer.provide(Layer.merge(Layer.succeed(StateDir, { dir: undefined, pid: process.pid, host: hostname(), startTime: null }), AppLogMemory([])))
    )
    const dead = { ...entry("dead", 2, now), holder: { ...entry("dead", 2, now).holder, pid: DEAD_PID } }
    return Effect.gen(function* () {
      const seen = yield* Effect.scoped(
        Effect.flatMap(SharedState, (p) => Effect.zipRight(p.commit(now, { ...nothing, permits: { put: [dead, entry("a", 1, now)], remove: [] } }), p.read(now, { permits: true }))).pipe(Effect.provide(port))
      )
      expect(seen.permits.map((e) => [e.id, e.gone])).toEqual([
        ["a", false],
        ["dead", true]
      ])
    })
  })
})

describe("a permit step never goes ahead without the pool lock while a live process holds it (issue 21)", () => {
  const lockedBy = (dir: string, pid: number) =>
    writeFileSync(join(dir, "pool.lock"), JSON.stringify({ pid, host: hostname(), startTime: startTimeOf(pid), at: Date.now() }), { mode: 0o600 })
  const spawnPort = (dir: string, lines: Array<MemoryLine>) =>
    sharedStateLayer({ backend: "file", lockWaitMs: 250 }).pipe(
      Layer.provide(Layer.merge(Layer.succeed(StateDir, { dir, trusted: true, pid: process.pid, host: hostname(), startTime: null }), AppLogMemory(lines)))
    )

  it.live("US-51 with the lock held 1.5 s by a live process, a permit transaction waits for it (no fail-open) where a spawn's goes ahead after lockWaitMs", () => {
    const dir = stateDir()
    const holder = spawn("sleep", ["30"], { stdio: "ignore" })
    return Effect.gen(function* () {
      yield* Effect.sleep("100 millis")
      lockedBy(dir, holder.pid!)
      const freed = Date.now() + 1_500
      setTimeout(() => rmSync(join(dir, "pool.lock"), { force: true }), 1_500)
      const lines: Array<MemoryLine> = []
      const port = yield* Effect.scoped(
        Effect.gen(function* () {
          const p = yield* SharedState
          const t0 = Date.now()
          yield* p.transact(Date.now(), { claims: true }, () => ({ value: undefined, commit: { cool: [], uncool: [] } }))
          const spawnMs = Date.now() - t0
          yield* p.transact(Date.now(), { permits: true }, () => ({ value: undefined, commit: { cool: [], uncool: [] } }))
          return { spawnMs, permitDone: Date.now(), stats: yield* p.stats }
        }).pipe(Effect.provide(spawnPort(dir, lines)))
      )
      expect(port.spawnMs).toBeLessThan(1_000)
      expect(port.permitDone).toBeGreaterThanOrEqual(freed)
      // only the spawn's transaction went ahead without the lock
      expect(port.stats.failOpens).toBe(1)
    }).pipe(Effect.ensuring(Effect.sync(() => holder.kill("SIGKILL"))))
  }, 20_000)
})

