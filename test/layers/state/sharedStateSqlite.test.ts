/** The shared-state contract over the embedded SQLite backend (issue 32): processes on one temporary, trusted state directory's state.db; how it judges a holder, keeps permits, waits for the database and imports an earlier version's files. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { execFileSync, spawn } from "node:child_process"
import { chmodSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import type { PermitEntry } from "../../../src/core/permits/types.js"
import { count } from "../../../src/core/metrics/counters.js"
import type { Cooldown } from "../../../src/core/pool/cooldown.js"
import { cooldownFileName, encodeCooldown } from "../../../src/core/pool/cooldownFile.js"
import { encodeFallback, fallbackFileName, type FallbackRecord } from "../../../src/core/quota/fallbackRecord.js"
import { encodeQuota, quotaFileName, type QuotaRecord } from "../../../src/core/quota/record.js"
import { SCHEMA_VERSION } from "../../../src/core/state/fleet.js"
import { emptyRecord, encodeQueued, encodeRecord, queueFileName, recordFileName } from "../../../src/core/context/record.js"
import { openSqlite } from "../../../src/layers/state/sqliteDriver.js"
import { CHECKPOINT_IDLE_MS } from "../../../src/layers/state/SharedStateSqlite.js"
import { SQLITE_SCHEMA_VERSION, sqliteSchemaVersion } from "../../../src/layers/state/sqliteSchema.js"
import { AppLogMemory, type MemoryLine } from "../../../src/layers/opencode/AppLogMemory.js"
import { startTimeOf } from "../../../src/layers/state/proc.js"
import { sharedStateLayer } from "../../../src/layers/state/sharedStateLayer.js"
import { ALL_RECORDS, SharedState, type Commit, type SharedStateService } from "../../../src/services/state/SharedState.js"
import { StateDir, type StateDirService } from "../../../src/services/state/StateDir.js"
import { sharedStateContract } from "./sharedState.contract.js"

/** Pids that run (this test's processes), and one that does not: the highest Linux allows is 4194304. */
const LIVE_PIDS = [process.pid, process.ppid, 1]
const DEAD_PID = 4_194_303
const require = createRequire(import.meta.url)
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
  sharedStateLayer({ backend: "sqlite", lockWaitMs: 5_000 }).pipe(Layer.provide(Layer.merge(Layer.succeed(StateDir, { dir, trusted: true, ...as }), AppLogMemory(lines))))

sharedStateContract({
  name: "sqlite",
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

describe("the SQLite backend judges a holder by host, pid and start token (SPEC §5.2)", () => {
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

describe("the SQLite backend keeps permits in state.db (issue 21, 32)", () => {
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

  it.live("US-51 a bad row is skipped, the others are read without a problem", () => {
    const now = Date.now()
    const dir = stateDir()
    return Effect.gen(function* () {
      yield* withPort(dir, (p) => p.commit(now, { ...nothing, permits: { put: [entry("a", 1, now), entry("d", 2, now)], remove: [] } }))
      const db = openSqlite(join(dir, "state.db"))
      db.run("INSERT INTO permits (id, seq, host, pid, body, written_at) VALUES (?, ?, ?, ?, ?, ?)", ["broken", 3, hostname(), process.pid, '{"id":"broken"}', now])
      db.run("INSERT INTO permits (id, seq, host, pid, body, written_at) VALUES (?, ?, ?, ?, ?, ?)", ["zero", 4, hostname(), process.pid, JSON.stringify({ ...entry("zero", 4, now), weight: 0 }), now])
      db.close()
      const seen = yield* withPort(dir, (p) => p.read(now, { permits: true }))
      expect([seen.permits.map((e) => e.id), seen.problems]).toEqual([["a", "d"], []])
    })
  })

  it.live("US-51 without a usable state directory permits live in this process, judged by this host's processes", () => {
    const now = Date.now()
    const port = sharedStateLayer({ backend: "sqlite", lockWaitMs: 5_000 }).pipe(
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

describe("state.db itself (issue 32)", () => {
  it.live("US-40 a new state directory holds state.db (0600, WAL) with every migration recorded, and nothing else but its WAL files", () => {
    const dir = stateDir()
    return Effect.gen(function* () {
      yield* Effect.scoped(Effect.flatMap(SharedState, (p) => p.commit(Date.now(), { cool: [{ model: "a/x", reason: "rate_limit", strikes: 1, scope: "model", since: Date.now(), until: Date.now() + 60_000, source: "backoff" }], uncool: [] })).pipe(Effect.provide(portAs(dir, { pid: process.pid, host: hostname(), startTime: null }))))
      expect(readdirSync(dir).filter((n) => !/^state\.db(-wal|-shm)?$/.test(n))).toEqual([])
      expect(statSync(join(dir, "state.db")).mode & 0o777).toBe(0o600)
      const db = openSqlite(join(dir, "state.db"))
      expect(db.all("PRAGMA journal_mode")).toEqual([{ journal_mode: "wal" }])
      expect(sqliteSchemaVersion(db)).toBe(SQLITE_SCHEMA_VERSION)
      expect(SQLITE_SCHEMA_VERSION).toBe(SCHEMA_VERSION)
      expect(db.all<{ model: string }>("SELECT model FROM cooldowns").map((r) => r.model)).toEqual(["a/x"])
      db.close()
    })
  })

  it.live("US-40 a commit writes only the WAL; the checkpoint into state.db comes once this process's commits stop for a moment (CHECKPOINT_IDLE_MS)", () => {
    const dir = stateDir()
    const file = join(dir, "state.db")
    const cool = (model: string): Commit => ({ cool: [{ model, reason: "rate_limit", strikes: 1, scope: "model", since: Date.now(), until: Date.now() + 60_000, source: "backoff" }], uncool: [] })
    return Effect.gen(function* () {
      const port = yield* SharedState
      yield* port.commit(Date.now(), cool("a/x"))
      yield* Effect.sleep(CHECKPOINT_IDLE_MS * 4)
      const before = statSync(file).mtimeMs
      yield* port.commit(Date.now(), cool("a/y"))
      expect(statSync(file).mtimeMs).toBe(before)
      yield* Effect.sleep(CHECKPOINT_IDLE_MS * 4)
      expect(statSync(file).mtimeMs).toBeGreaterThan(before)
    }).pipe(Effect.provide(portAs(dir, { pid: process.pid, host: hostname(), startTime: null })), Effect.scoped)
  })

  it.live("US-40 an earlier version's cooldown, quota and fallback files are imported once and renamed *.imported; an expired one is not imported; claim files are left alone", () => {
    const dir = stateDir()
    const now = Date.now()
    const long: Cooldown = { model: "zen/big", reason: "quota", strikes: 3, scope: "model", since: now - 60_000, until: now + 6 * 3_600_000, source: "flat" }
    const over: Cooldown = { model: "zen/old", reason: "rate_limit", strikes: 1, scope: "model", since: now - 7_200_000, until: now - 3_600_000, source: "backoff" }
    const q: QuotaRecord = { model: "zen/big", requests: { remaining: 3, limit: 10, resetAt: now + 600_000 }, seenAt: now }
    const f: FallbackRecord = { session: "ses_r", original: "zen/big", active: "go/b", until: now + 600_000, at: now }
    writeFileSync(join(dir, cooldownFileName(long.model)), encodeCooldown(long))
    writeFileSync(join(dir, cooldownFileName(over.model)), encodeCooldown(over))
    writeFileSync(join(dir, quotaFileName(q.model)), encodeQuota(q))
    writeFileSync(join(dir, fallbackFileName(f.session)), encodeFallback(f))
    writeFileSync(join(dir, "claims.12.json"), "{}")
    return Effect.gen(function* () {
      const seen = yield* Effect.scoped(Effect.flatMap(SharedState, (p) => p.read(now, ALL_RECORDS)).pipe(Effect.provide(portAs(dir, { pid: process.pid, host: hostname(), startTime: null }))))
      expect([...seen.cooldowns.values()]).toEqual([long])
      expect(seen.quota).toEqual([q])
      expect(seen.fallbacks).toEqual([f])
      expect(readdirSync(dir).filter((n) => !n.startsWith("state.db")).sort()).toEqual(
        ["claims.12.json", `${cooldownFileName(long.model)}.imported`, `${cooldownFileName(over.model)}.imported`, `${fallbackFileName(f.session)}.imported`, `${quotaFileName(q.model)}.imported`].sort()
      )
      // a second start finds nothing to import and keeps what was imported
      const again = yield* Effect.scoped(Effect.flatMap(SharedState, (p) => p.read(now, { cooldowns: true })).pipe(Effect.provide(portAs(dir, { pid: process.pid, host: hostname(), startTime: null }))))
      expect([...again.cooldowns.keys()]).toEqual(["zen/big"])
    })
  })

  it.live("US-20 an earlier version's context map record and its refresh marker are imported under the project's root; a marker without its record is not", () => {
    const dir = stateDir()
    const record = { ...emptyRecord("/home/u/shop"), pending: ["src/a.ts"] }
    writeFileSync(join(dir, recordFileName(record.root)), encodeRecord(record))
    writeFileSync(join(dir, queueFileName(record.root)), encodeQueued(1_796_000_000_000))
    writeFileSync(join(dir, queueFileName("/home/u/other")), encodeQueued(1_796_000_000_000))
    return Effect.gen(function* () {
      const seen = yield* Effect.scoped(Effect.flatMap(SharedState, (p) => p.read(Date.now(), { context: true })).pipe(Effect.provide(portAs(dir, { pid: process.pid, host: hostname(), startTime: null }))))
      expect(seen.context).toEqual([
        { key: "queued:/home/u/shop", body: encodeQueued(1_796_000_000_000) },
        { key: "record:/home/u/shop", body: encodeRecord(record) }
      ])
      expect(readdirSync(dir).filter((n) => n.endsWith(".imported")).length).toBe(3)
    })
  })
})

/** Holds state.db's write lock from another connection of this process until `release` is called. */
const holdWriteLock = (dir: string) => {
  const db = openSqlite(join(dir, "state.db"))
  db.exec("PRAGMA busy_timeout = 5000")
  db.exec("BEGIN IMMEDIATE")
  return () => {
    db.exec("COMMIT")
    db.close()
  }
}

describe("contention on state.db (issue 32)", () => {
  const port = (dir: string, pid: number, lines: Array<MemoryLine>, lockWaitMs = 250) =>
    sharedStateLayer({ backend: "sqlite", lockWaitMs }).pipe(
      Layer.provide(Layer.merge(Layer.succeed(StateDir, { dir, trusted: true, pid, host: hostname(), startTime: null }), AppLogMemory(lines)))
    )
  const claim = (key: string, now: number) => ({ key, base: "explore", slot: 1, model: "a/x", acquiredAt: now, heartbeatAt: now, ownerSession: "s", targetSession: null, abortAttempts: 0, abortPending: false, abortOrigin: null, abortInFlight: false, endedInFlight: false })

  it.live("US-51 with the database held 1.5 s, a permit step waits for it (never fails open) while a spawn decides after lockWaitMs on what it reads; the spawn's claim is written once the database is free", () => {
    const dir = stateDir()
    return Effect.gen(function* () {
      const lines: Array<MemoryLine> = []
      // the database made first (a port opened and closed), then held by another connection
      yield* Effect.scoped(Effect.flatMap(SharedState, (p) => p.stats).pipe(Effect.provide(port(dir, process.pid, lines))))
      const release = holdWriteLock(dir)
      const freed = Date.now() + 1_500
      setTimeout(release, 1_500)
      const got = yield* Effect.scoped(
        Effect.gen(function* () {
          const p = yield* SharedState
          const t0 = Date.now()
          const seenPeers = yield* p.transact(Date.now(), { claims: true }, (snap) => ({ value: snap.peers.length, commit: { claims: { claims: [claim("late", Date.now())], reaped: 0 }, cool: [], uncool: [] } }))
          const spawnMs = Date.now() - t0
          yield* p.transact(Date.now(), { permits: true }, () => ({ value: undefined, commit: { cool: [], uncool: [] } }))
          const permitDone = Date.now()
          // the claim decided without the lock is there for another process once the database was free
          const other = yield* Effect.scoped(Effect.flatMap(SharedState, (q) => q.read(Date.now(), { claims: true })).pipe(Effect.provide(port(dir, process.ppid, []))))
          return { seenPeers, spawnMs, permitDone, stats: yield* p.stats, peers: other.peers.flatMap((x) => x.claims.map((c) => c.key)) }
        }).pipe(Effect.provide(port(dir, process.pid, lines)))
      )
      expect(got.seenPeers).toBe(0)
      expect(got.spawnMs).toBeGreaterThanOrEqual(240)
      expect(got.spawnMs).toBeLessThan(1_000)
      expect(got.permitDone).toBeGreaterThanOrEqual(freed)
      expect(got.stats.failOpens).toBe(1)
      expect(got.peers).toEqual(["late"])
      expect(lines.filter((l) => l.level === "warn").map((l) => l.message)).toEqual([expect.stringMatching(/^state\.db busy; deciding on what it reads without the lock/)])
    })
  }, 20_000)

  it.live("US-53 a transaction that went ahead without the lock counts fail_opens_total in its own commit, written with its queued writes; metrics off counts none", () =>
    Effect.gen(function* () {
      const failOpened = (metrics: boolean) =>
        Effect.gen(function* () {
          const dir = stateDir()
          const layer = sharedStateLayer({ backend: "sqlite", lockWaitMs: 50, metrics }).pipe(
            Layer.provide(Layer.merge(Layer.succeed(StateDir, { dir, trusted: true, pid: process.pid, host: hostname(), startTime: null }), AppLogMemory([])))
          )
          return yield* Effect.scoped(
            Effect.gen(function* () {
              const p = yield* SharedState
              yield* p.stats
              const release = holdWriteLock(dir)
              yield* p.transact(Date.now(), { claims: true }, () => ({ value: undefined, commit: { cool: [], uncool: [], counts: [count("routes_total", ["explore", "first"])] } }))
              release()
              // the next transaction writes what was queued first
              yield* p.transact(Date.now(), { cooldowns: true }, () => ({ value: undefined, commit: { cool: [], uncool: [] } }))
              return { counters: (yield* p.read(Date.now(), { counters: true })).counters.map((r) => `${r.name}=${r.value}`), failOpens: (yield* p.stats).failOpens }
            }).pipe(Effect.provide(layer))
          )
        })
      expect(yield* failOpened(true)).toEqual({ counters: ["fail_opens_total=1", "routes_total=1"], failOpens: 1 })
      expect(yield* failOpened(false)).toEqual({ counters: ["routes_total=1"], failOpens: 1 })
    }), 20_000)

  it.live("US-41 a process SIGKILLed while it holds the database's write lock holds nothing: the next transaction goes at once", () => {
    const dir = stateDir()
    return Effect.gen(function* () {
      yield* Effect.scoped(Effect.flatMap(SharedState, (p) => p.stats).pipe(Effect.provide(port(dir, process.pid, []))))
      const script = `const D=require(${JSON.stringify(require.resolve("better-sqlite3"))});const db=new D(${JSON.stringify(join(dir, "state.db"))});db.exec("BEGIN IMMEDIATE");db.prepare("INSERT INTO cooldowns (model, body, expires_at) VALUES ('half/done', '{}', 1)").run();process.stdout.write("held\\n");setInterval(()=>{},1000)`
      const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] })
      yield* Effect.promise(() => new Promise<void>((resolve) => child.stdout!.once("data", () => resolve())))
      child.kill("SIGKILL")
      yield* Effect.promise(() => new Promise<void>((resolve) => child.once("exit", () => resolve())))
      const t0 = Date.now()
      const got = yield* Effect.scoped(
        Effect.flatMap(SharedState, (p) => Effect.zip(p.transact(Date.now(), { permits: true, cooldowns: true }, (snap) => ({ value: [...snap.cooldowns.keys()], commit: { cool: [], uncool: [] } })), p.stats)).pipe(
          Effect.provide(port(dir, process.pid, []))
        )
      )
      expect(Date.now() - t0).toBeLessThan(1_000)
      // what it had not committed is gone
      expect(got[0]).toEqual([])
      expect(got[1].failOpens).toBe(0)
    })
  }, 20_000)
})

describe("what the SQLite backend says of itself (issue 34: doctor asks the port)", () => {
  const inspectAt = (dir: string, view: boolean) =>
    Effect.scoped(
      Effect.flatMap(SharedState, (p) => p.inspect(Date.now())).pipe(
        Effect.provide(sharedStateLayer({ backend: "sqlite", lockWaitMs: 5_000, view }).pipe(Layer.provide(Layer.merge(Layer.succeed(StateDir, { dir, trusted: true, pid: process.pid, host: hostname(), startTime: null }), AppLogMemory([])))))
      )
    )

  it.live("US-46 a view of a directory without state.db: none yet, an earlier version's files named (to import, unused), no fleet; the view made nothing", () => {
    const dir = stateDir()
    writeFileSync(join(dir, "pool.lock"), "")
    writeFileSync(join(dir, "claims.123.json"), "{}")
    writeFileSync(join(dir, cooldownFileName("zen/a")), "{}")
    return Effect.gen(function* () {
      const seen = yield* inspectAt(dir, true)
      expect(seen).toEqual({ store: { _tag: "Missing" }, leftovers: { toImport: [cooldownFileName("zen/a")], unused: ["claims.123.json", "pool.lock"] }, fleet: { _tag: "NotFleet" } })
      expect(readdirSync(dir)).not.toContain("state.db")
    })
  })

  it.live("US-46 once a process made state.db: its size, schema version and quick_check; the imported files are no longer to import", () => {
    const dir = stateDir()
    writeFileSync(join(dir, cooldownFileName("zen/a")), "{}")
    return Effect.gen(function* () {
      const seen = yield* inspectAt(dir, false)
      expect(seen.store).toMatchObject({ _tag: "Database", schemaVersion: SQLITE_SCHEMA_VERSION, quickCheck: "ok" })
      expect(seen.store._tag === "Database" && seen.store.bytes > 0).toBe(true)
      expect(seen.leftovers.toImport).toEqual([])
      expect(seen.fleet).toEqual({ _tag: "NotFleet" })
    })
  })

  it.live("US-46 a state.db that is not a database is unreadable, with SQLite's reason", () => {
    const dir = stateDir()
    writeFileSync(join(dir, "state.db"), "not a database, only text long enough to fill a header page ".repeat(100))
    return Effect.gen(function* () {
      const seen = yield* inspectAt(dir, true)
      expect(seen.store._tag).toBe("Unreadable")
    })
  })
})
