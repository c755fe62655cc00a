/**
 * The shared-state contract over the PostgreSQL backend (fleet mode, issue 22), on a real throwaway
 * cluster (test/real/pgCluster.ts): each `make()` is a fresh schema. Then what only this backend does:
 * the schema migrated once however many hosts start at once, another host judged by its lease and
 * reaped, the fallback to the state directory while the server is away and the rejoin after.
 */
import { describe, expect, it } from "@effect/vitest"
import { claimRowsIn } from "../support/stateDb.js"
import { afterAll } from "vitest"
import { Clock, Effect, Fiber, Layer, Ref, Schedule, Stream } from "effect"
import { execFileSync } from "node:child_process"
import { chmodSync, mkdtempSync, readFileSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { DEAD_FILE_MS } from "../../src/core/constants.js"
import { AppLogMemory, type MemoryLine } from "../../src/layers/opencode/AppLogMemory.js"
import { sharedStateLayer } from "../../src/layers/state/sharedStateLayer.js"
import { SharedState, type SharedStateService } from "../../src/services/state/SharedState.js"
import { StateDir, type StateDirService } from "../../src/services/state/StateDir.js"
import { makeClaim } from "../helpers.js"
import { sharedStateContract } from "../layers/state/sharedState.contract.js"
import { startPgCluster } from "./pgCluster.js"

const cluster = await startPgCluster()
afterAll(() => cluster.stop())

const LIVE_PIDS = [process.pid, process.ppid, 1]
const DEAD_PID = 4_194_303
const ownGroup = (): number => {
  const stat = readFileSync("/proc/self/stat", "utf8")
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2])
}
const stateDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "ocpool-fleet-"))
  chmodSync(dir, 0o700)
  return dir
}
let schemas = 0

const portAs = (o: { readonly url?: string; readonly schema: string; readonly dir: string; readonly as: Omit<StateDirService, "dir" | "trusted">; readonly lines?: Array<MemoryLine>; readonly lockWaitMs?: number; readonly leaseMs?: number }) =>
  sharedStateLayer({ backend: "postgres", url: o.url ?? cluster.url, schema: o.schema, leaseMs: o.leaseMs ?? DEAD_FILE_MS, lockWaitMs: o.lockWaitMs ?? 10_000 }).pipe(
    Layer.provide(Layer.merge(Layer.succeed(StateDir, { dir: o.dir, trusted: true, ...o.as }), AppLogMemory(o.lines ?? [])))
  )

sharedStateContract({
  name: "postgres",
  make: () => {
    const schema = `contract_${++schemas}`
    const dir = stateDir()
    // a generous wait: a host's first answer under a burst of starts can take a 5 s pause (see DECISIONS 208)
    const port = (pid: number) => portAs({ schema, dir, as: { pid, host: hostname(), startTime: null }, lockWaitMs: 30_000 })
    return {
      process: (n) => port(LIVE_PIDS[n - 1]!),
      dead: () => port(DEAD_PID),
      holders: { host: hostname(), live: (n) => LIVE_PIDS[n - 1]!, dead: DEAD_PID, liveGroup: ownGroup(), deadGroup: DEAD_PID }
    }
  }
})

const on = <A>(layer: Layer.Layer<SharedState>, f: (s: SharedStateService) => Effect.Effect<A>) => Effect.scoped(Effect.flatMap(SharedState, f).pipe(Effect.provide(layer)))
const claim = (key: string, at: number) => makeClaim(key, "a/x", "explore", at)

describe("the PostgreSQL backend (fleet mode)", () => {
  it.live("US-52 eight hosts starting at once migrate the schema once; its version is 5", () => {
    const schema = `race_${++schemas}`
    const dir = stateDir()
    const now = Date.now()
    return Effect.gen(function* () {
      const answers = yield* Effect.all(
        // a generous wait: under this start storm a host's first answer can take one 5 s retry pause, or two
        Array.from({ length: 8 }, (_, i) => on(portAs({ schema, dir, as: { pid: LIVE_PIDS[0]!, host: `h${i}`, startTime: null }, lockWaitMs: 30_000 }), (p) => p.fleet(now))),
        { concurrency: "unbounded" }
      )
      expect(answers.map((a) => (a._tag === "Unreachable" ? a.reason : a._tag))).toEqual(Array(8).fill("Fleet"))
      const a = answers[0]!
      if (a._tag !== "Fleet") return
      expect(a.view.schemaVersion).toBe(5)
      expect(a.view.url).not.toContain("s3cret-pw")
      expect(a.view.url).toContain("***")
      expect(Number(yield* Effect.promise(() => cluster.psql(`select count(*) from ${schema}.ocpool_migrations`)))).toBe(5)
    })
  })

  it.live("US-52 another host's claims count until its lease runs out, then any host's read removes them", () => {
    const schema = `lease_${++schemas}`
    const now = Date.now()
    const a = portAs({ schema, dir: stateDir(), as: { pid: 4242, host: "host-a", startTime: null }, leaseMs: 30_000 })
    const b = portAs({ schema, dir: stateDir(), as: { pid: 4343, host: "host-b", startTime: null }, leaseMs: 30_000 })
    return Effect.gen(function* () {
      yield* on(a, (p) => p.commit(now, { claims: { claims: [claim("ka", now)], reaped: 0 }, cool: [], uncool: [] }))
      expect((yield* on(b, (p) => p.read(now + 29_000, { claims: true }))).peers.map((x) => x.host)).toEqual(["host-a"])
      const fleet = yield* on(b, (p) => p.fleet(now + 1_000))
      // host-b itself may be on record too (its heartbeat), holding nothing
      expect(fleet._tag === "Fleet" ? fleet.view.hosts.filter((h) => h.host === "host-a").map((h) => [h.host, h.claims, h.live]) : fleet).toEqual([["host-a", 1, 1]])
      expect((yield* on(b, (p) => p.read(now + 31_000, { claims: true }))).peers).toEqual([])
      expect((yield* Effect.promise(() => cluster.psql(`select count(*) from ${schema}.claims`))).trim()).toBe("0")
    })
  })

  it.live("US-46 another host's plugin engine is live while that host's lease holds; once the host left, it reads as gone and a heartbeat removes it", () => {
    const schema = `engines_${++schemas}`
    const a = portAs({ schema, dir: stateDir(), as: { pid: 4242, host: "host-a", startTime: null }, leaseMs: 30_000 })
    const b = portAs({ schema, dir: stateDir(), as: { pid: 4343, host: "host-b", startTime: null }, leaseMs: 30_000 })
    const seenBy = (port: typeof b) => on(port, (p) => Effect.flatMap(Clock.currentTimeMillis, (now) => p.read(now, { engines: true }))).pipe(Effect.map((s) => s.engines.map((e) => [e.host, e.pid, e.live, e.local])))
    /** `read` again until it gives `want` (a heartbeat runs when a port opens), 50 times at most; the last answer. */
    const until = <A>(read: Effect.Effect<A>, want: A) =>
      read.pipe(
        Effect.filterOrFail((x) => JSON.stringify(x) === JSON.stringify(want), (x) => x),
        Effect.retry({ schedule: Schedule.spaced("200 millis"), times: 50 }),
        Effect.catchAll((last) => Effect.succeed(last))
      )
    return Effect.gen(function* () {
      yield* on(a, (p) =>
        Effect.gen(function* () {
          yield* p.commit(Date.now(), { cool: [], uncool: [], engine: { version: "1.0.0", since: Date.now(), backend: "postgres" } })
          // while host-a's port is open its heartbeat holds its lease
          expect(yield* until(seenBy(b), [["host-a", 4242, true, false]])).toEqual([["host-a", 4242, true, false]])
        })
      )
      // host-a left without unregistering (no removeOwn): its holder row went, so its engine is gone; host-b's heartbeat removes it
      expect(yield* until(seenBy(b), [])).toEqual([])
      expect((yield* Effect.promise(() => cluster.psql(`select count(*) from ${schema}.engines`))).trim()).toBe("0")
    })
  })

  it.live("US-52 with the server away a transaction is made on the state directory within lockWaitMs, warned once; the host rejoins and publishes what it claimed meanwhile", () => {
    const schema = `down_${++schemas}`
    const dir = stateDir()
    const lines: Array<MemoryLine> = []
    const now = Date.now()
    // a port nothing listens on: the connection is refused at once
    const deadUrl = cluster.url.replace(/:(\d+)\//, ":1/")
    const away = portAs({ url: deadUrl, schema, dir, as: { pid: LIVE_PIDS[0]!, host: "host-a", startTime: null }, lines, lockWaitMs: 300 })
    return Effect.gen(function* () {
      const t0 = performance.now()
      const stats = yield* on(away, (p) =>
        Effect.gen(function* () {
          yield* p.transact(now, { claims: true, cooldowns: true }, () => ({ value: undefined, commit: { claims: { claims: [claim("k-away", now)], reaped: 0 }, cool: [], uncool: [] } }))
          yield* p.transact(now + 1, { claims: true, cooldowns: true }, () => ({ value: undefined, commit: { claims: { claims: [claim("k-away", now), claim("k-away-2", now)], reaped: 0 }, cool: [], uncool: [] } }))
          return yield* p.stats
        })
      )
      expect(performance.now() - t0).toBeLessThan(2_000)
      expect(stats.fallbacks).toBe(2)
      expect(claimRowsIn(dir)).toHaveLength(1)
      const warnings = lines.filter((l) => l.level === "warn" && l.message.startsWith("fleet:"))
      expect(warnings).toHaveLength(1)
      expect(warnings[0]!.message).not.toContain("s3cret-pw")
      // the same process back on a server that answers: its claims are published there
      const back = portAs({ schema, dir, as: { pid: LIVE_PIDS[0]!, host: "host-a", startTime: null }, lines })
      yield* on(back, (p) =>
        Effect.gen(function* () {
          yield* p.commit(now + 2, { claims: { claims: [claim("k-back", now)], reaped: 0 }, cool: [], uncool: [] })
        })
      )
      const seen = yield* on(portAs({ schema, dir: stateDir(), as: { pid: 4343, host: "host-b", startTime: null } }), (p) => p.read(now + 3, { claims: true }))
      expect(seen.peers.flatMap((x) => x.claims.map((c) => c.key))).toEqual(["k-back"])
    })
  })

  it.live("US-52 one process through a server stop: its picks go to the state database meanwhile (no wait per pick once found away), and when the server is back its claims and cooldowns decided meanwhile are published there", () => {
    const schema = `rejoin_${++schemas}`
    const dir = stateDir()
    const lines: Array<MemoryLine> = []
    const port = portAs({ schema, dir, as: { pid: LIVE_PIDS[0]!, host: "host-a", startTime: null }, lines, lockWaitMs: 500 })
    const pick = (p: SharedStateService, keys: ReadonlyArray<string>) =>
      p.transact(Date.now(), { claims: true, cooldowns: true }, () => ({ value: undefined, commit: { claims: { claims: keys.map((k) => claim(k, Date.now())), reaped: 0 }, cool: [], uncool: [] } }))
    const keysInServer = () => Effect.promise(() => cluster.psql(`select body from ${schema}.claims`)).pipe(Effect.map((t) => t.trim().split("\n").filter((l) => l !== "").flatMap((b) => Object.keys(JSON.parse(b).claims as object)).sort()))
    return Effect.gen(function* () {
      yield* on(port, (p) =>
        Effect.gen(function* () {
          yield* pick(p, ["k1"])
          expect(yield* keysInServer()).toEqual(["k1"])
          yield* Effect.promise(() => cluster.stopOnly())
          const t0 = performance.now()
          yield* pick(p, ["k1", "k2"])
          const first = performance.now() - t0
          const t1 = performance.now()
          yield* pick(p, ["k1", "k2", "k3"])
          // a 429 decided meanwhile: cooled on files
          const until = Date.now() + 600_000
          yield* p.commit(Date.now(), { cool: [{ model: "a/x", reason: "rate_limit", strikes: 1, scope: "model", since: Date.now(), until, source: "backoff" }], uncool: [] })
          const second = performance.now() - t1
          expect(first).toBeLessThan(1_500)
          // found away: the next pick does not ask the server again
          expect(second).toBeLessThan(100)
          expect(claimRowsIn(dir)).toHaveLength(1)
          expect((yield* p.stats).fallbacks).toBe(3)
          yield* Effect.promise(() => cluster.start())
          // past the retry pause, the next pick reaches the server: what was claimed meanwhile is there
          yield* Effect.sleep("5200 millis")
          yield* p.read(Date.now(), { cooldowns: true })
          expect(yield* keysInServer()).toEqual(["k1", "k2", "k3"])
          // and the cooldown decided meanwhile is every host's now
          expect((yield* Effect.promise(() => cluster.psql(`select model from ${schema}.cooldowns`))).trim()).toBe("a/x")
          // this host's claims stay written through to its state database (what a fallback decides on)
          expect(claimRowsIn(dir).flatMap((r) => (r.file?.claims ?? []).map((c) => c.key)).sort()).toEqual(["k1", "k2", "k3"])
        })
      )
      expect(lines.filter((l) => l.message.startsWith("fleet:")).map((l) => l.level)).toEqual(["warn", "info"])
    })
  }, 60_000)

  it.live("US-6 the change feed survives a server restart: after it, another host's commit still wakes the view", () => {
    const schema = `feed_${++schemas}`
    const a = portAs({ schema, dir: stateDir(), as: { pid: 4242, host: "host-a", startTime: null } })
    const b = portAs({ schema, dir: stateDir(), as: { pid: 4343, host: "host-b", startTime: null } })
    // host-a's port is kept open: a port's start and close are not what this is about
    const commitUntilSeen = (woke: Fiber.Fiber<boolean>) =>
      on(a, (p) =>
        Effect.raceFirst(
          Fiber.join(woke),
          Effect.repeat(p.commit(Date.now(), { claims: { claims: [claim("ka", Date.now())], reaped: 0 }, cool: [], uncool: [] }).pipe(Effect.zipRight(Effect.sleep("300 millis"))), { times: 60 }).pipe(Effect.as(false))
        )
      )
    return on(b, (viewer) =>
      Effect.gen(function* () {
        // the view's stream: counts wakes; a wake before and one after the restart
        const wakes = yield* Ref.make(0)
        yield* Effect.fork(Stream.runForEach(viewer.changes, () => Ref.update(wakes, (n) => n + 1)))
        const wokeAfter = (since: number) => Effect.fork(Effect.repeat(Ref.get(wakes), { until: (n) => n > since, schedule: Schedule.spaced("50 millis") }).pipe(Effect.as(true)))
        expect(yield* commitUntilSeen(yield* wokeAfter(0))).toBe(true)
        yield* Effect.promise(() => cluster.restart())
        const before = yield* Ref.get(wakes)
        expect(yield* commitUntilSeen(yield* wokeAfter(before))).toBe(true)
      })
    )
  }, 90_000)

  it.live("US-52 the password never reaches the log or the fleet view", () => {
    const lines: Array<MemoryLine> = []
    const schema = `mask_${++schemas}`
    const port = portAs({ url: cluster.url.replace(/:(\d+)\//, ":1/"), schema, dir: stateDir(), as: { pid: LIVE_PIDS[0]!, host: "h", startTime: null }, lines, lockWaitMs: 200 })
    return Effect.gen(function* () {
      const answer = yield* on(port, (p) => Effect.zipRight(p.transact(Date.now(), { cooldowns: true }, () => ({ value: 0, commit: { cool: [], uncool: [] } })), p.fleet(Date.now())))
      expect(answer._tag).toBe("Unreachable")
      expect(JSON.stringify(answer)).not.toContain("s3cret-pw")
      expect(JSON.stringify(lines)).not.toContain("s3cret-pw")
    })
  })
})

// keep the helper's import used when the suite is filtered
void execFileSync
