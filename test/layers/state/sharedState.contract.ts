/**
 * The shared-state contract (SPEC §5): what every backend of the `SharedState` port must do, as one
 * suite over a backend factory. SharedStateSqlite, SharedStateMemory and SharedStatePg run it; a new
 * backend only has to pass it. Time is the wall clock: leases are written with the wall clock's time. Permit entries (issue 21)
 * name their holders themselves: the factory says which host, pids and process groups live.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Ref, Stream } from "effect"
import type { Claim } from "../../../src/core/pool/claims.js"
import { DEAD_FILE_MS, STRIKE_DECAY_MS } from "../../../src/core/constants.js"
import type { Cooldown } from "../../../src/core/pool/cooldown.js"
import type { PermitEntry, PermitHolder } from "../../../src/core/permits/types.js"
import type { FallbackRecord } from "../../../src/core/quota/fallbackRecord.js"
import type { QuotaRecord } from "../../../src/core/quota/record.js"
import type { GroupBudget } from "../../../src/core/limits/learned.js"
import { count, observeWait } from "../../../src/core/metrics/counters.js"
import { ALL_RECORDS, SharedState, type Commit, type SharedStateService } from "../../../src/services/state/SharedState.js"
import { makeClaim } from "../../helpers.js"
import { recordSpans } from "../../support/spans.js"

/** One shared state several "processes" use. */
export interface Shared {
  /** The port of a live process `n` (1, 2, 3: distinct processes on this host). */
  readonly process: (n: number) => Layer.Layer<SharedState>
  /** The port of a process whose holder is dead on this host (its pid no longer runs). */
  readonly dead: () => Layer.Layer<SharedState>
  /** Holders as the backend sees them on its own host. */
  readonly holders: {
    readonly host: string
    /** The pid of live process `n`. */
    readonly live: (n: number) => number
    /** A pid that does not run. */
    readonly dead: number
    /** A process group with a live member, and one without. */
    readonly liveGroup: number
    readonly deadGroup: number
  }
}

export interface Backend {
  readonly name: string
  /** A fresh, empty shared state. */
  readonly make: () => Shared
}

const claim = (key: string, model: string, at: number): Claim => makeClaim(key, model, "explore", at)
const cooldown = (model: string, until: number, strikes = 1): Cooldown => ({ model, reason: "rate_limit", strikes, scope: "model", since: until - 60_000, until, source: "backoff" })
const quota = (model: string, remaining: number, seenAt: number): QuotaRecord => ({ model, requests: { remaining, limit: 100, resetAt: seenAt + 600_000 }, seenAt })
const fallback = (session: string, until: number, at: number): FallbackRecord => ({ session, original: "a/x", active: "b/y", until, at })
const nothing: Commit = { cool: [], uncool: [] }
const permit = (id: string, seq: number, holder: Pick<PermitHolder, "host" | "pid"> & Partial<PermitHolder>, at: number, more: Partial<PermitEntry> = {}): PermitEntry => ({
  id,
  token: `t-${id}`,
  budget: "heavy",
  weight: 1,
  reason: `npm test ${id}`,
  holder: { startToken: null, via: "plugin", ...holder },
  seq,
  requestedAt: at,
  ...more
})

/** Runs `f` with process `n`'s port (each call builds it afresh: a new process reads what the others left). */
const on = <A>(layer: Layer.Layer<SharedState>, f: (s: SharedStateService) => Effect.Effect<A>) => Effect.scoped(Effect.flatMap(SharedState, f).pipe(Effect.provide(layer)))

export const sharedStateContract = (backend: Backend) =>
  describe(`SharedState contract: ${backend.name}`, () => {
    it.live("US-40 a transaction reads what another process committed: its claims and cooldowns, never its own claims", () => {
      const s = backend.make()
      const now = Date.now()
      return Effect.gen(function* () {
        yield* on(s.process(1), (p) => p.commit(now, { claims: { claims: [claim("k1", "a/x", now)], reaped: 2 }, cool: [cooldown("a/x", now + 60_000)], uncool: [] }))
        const seen = yield* on(s.process(2), (p) =>
          p.transact(now + 1, { claims: true, cooldowns: true }, (snap) => ({ value: snap, commit: { claims: { claims: [claim("k2", "b/y", now)], reaped: 0 }, cool: [], uncool: [] } }))
        )
        expect(seen.peers.map((x) => [x.reaped, x.claims.map((c) => c.key)])).toEqual([[2, ["k1"]]])
        expect([...seen.cooldowns.keys()]).toEqual(["a/x"])
        expect(seen.problems).toEqual([])
        // each process reads the other's claims, never its own
        const back = yield* on(s.process(1), (p) => p.read(now + 2, { claims: true }))
        expect(back.peers.flatMap((x) => x.claims.map((c) => c.key))).toEqual(["k2"])
      })
    })

    it.live("US-48 a commit's quota and fallback records are read back by every process; records given are written as they are (throttling is not the backend's job)", () => {
      const s = backend.make()
      const now = Date.now()
      return Effect.gen(function* () {
        yield* on(s.process(1), (p) => p.commit(now, { ...nothing, quota: [quota("m/x", 55, now)], fallbacks: [fallback("root", now + 60_000, now)] }))
        // the same band a millisecond later: the backend writes it all the same
        yield* on(s.process(1), (p) => p.commit(now + 1, { ...nothing, quota: [quota("m/x", 54, now + 1), quota("a/y", 9, now + 1)] }))
        const seen = yield* on(s.process(2), (p) => p.read(now + 2, ALL_RECORDS))
        expect(seen.quota).toEqual([quota("a/y", 9, now + 1), quota("m/x", 54, now + 1)])
        expect(seen.fallbacks).toEqual([fallback("root", now + 60_000, now)])
      })
    })

    it.live("US-48 learned budgets (issue 35): a group's record one process wrote is read by another, sorted by group; a later write replaces it; forget removes it; one that learned nothing is gone after its day", () => {
      const s = backend.make()
      const now = Date.now()
      const learned = (group: string, used: number, at: number, limit?: number): GroupBudget => {
        const minute = Math.floor(at / 60_000) * 60_000
        const day = Math.floor(at / 86_400_000) * 86_400_000
        return { group, minute: { start: minute, used }, day: { start: day, used }, limits: limit === undefined ? [] : [{ window: "minute", limit, samples: 1, learnedAt: at }], seenAt: at }
      }
      return Effect.gen(function* () {
        yield* on(s.process(1), (p) => p.commit(now, { ...nothing, learned: [learned("z/*:free", 3, now, 20), learned("a/x", 1, now)] }))
        yield* on(s.process(1), (p) => p.commit(now + 1, { ...nothing, learned: [learned("z/*:free", 4, now + 1, 20)] }))
        const seen = yield* on(s.process(2), (p) => p.read(now + 2, { learned: true }))
        expect(seen.learned).toEqual([learned("a/x", 1, now), learned("z/*:free", 4, now + 1, 20)])
        expect((yield* on(s.process(2), (p) => p.read(now + 2, { cooldowns: true }))).learned).toEqual([])
        yield* on(s.process(2), (p) => p.commit(now + 3, { ...nothing, forget: ["z/*:free"] }))
        expect((yield* on(s.process(1), (p) => p.read(now + 4, { learned: true }))).learned.map((b) => b.group)).toEqual(["a/x"])
        expect((yield* on(s.process(1), (p) => p.read(now + 2 * 86_400_000, { learned: true }))).learned).toEqual([])
      })
    })

    it.live("US-53 counters (issue 36): a commit's counts add to this host's counters, summed per counter; every process reads them back sorted; they only grow", () => {
      const s = backend.make()
      const now = Date.now()
      return Effect.gen(function* () {
        const route = count("routes_total", ["explore", "first"])
        yield* on(s.process(1), (p) => p.commit(now, { ...nothing, counts: [route, route, count("limits_total", ['or "x"\\\n', "rate_limit"])] }))
        yield* on(s.process(2), (p) => p.transact(now + 1, {}, () => ({ value: undefined, commit: { ...nothing, counts: [route, ...observeWait("heavy", 2.5)] } })))
        const read = yield* on(s.process(3), (p) => p.read(now + 2, { counters: true }))
        const host = s.holders.host
        expect(read.counters).toEqual([
          { host, name: "limits_total", labels: ['or "x"\\\n', "rate_limit"], value: 1 },
          { host, name: "permit_wait_seconds_bucket", labels: ["heavy", "5"], value: 1 },
          { host, name: "permit_wait_seconds_count", labels: ["heavy"], value: 1 },
          { host, name: "permit_wait_seconds_sum", labels: ["heavy"], value: 2.5 },
          { host, name: "routes_total", labels: ["explore", "first"], value: 3 }
        ])
        expect((yield* on(s.process(3), (p) => p.read(now + 2, { cooldowns: true }))).counters).toEqual([])
      })
    })

    it.live("US-50 uncool and endFallbacks remove records; a transaction's commit is written", () => {
      const s = backend.make()
      const now = Date.now()
      return Effect.gen(function* () {
        yield* on(s.process(1), (p) => p.commit(now, { cool: [cooldown("a/x", now + 60_000), cooldown("b/y", now + 60_000)], uncool: [], fallbacks: [fallback("r1", now + 60_000, now), fallback("r2", now + 60_000, now)] }))
        yield* on(s.process(2), (p) => p.transact(now, { cooldowns: true }, () => ({ value: undefined, commit: { cool: [], uncool: ["a/x"], endFallbacks: ["r1"] } })))
        const seen = yield* on(s.process(3), (p) => p.read(now, ALL_RECORDS))
        expect([...seen.cooldowns.keys()]).toEqual(["b/y"])
        expect(seen.fallbacks.map((r) => r.session)).toEqual(["r2"])
      })
    })

    it.live("US-40 removeOwn takes this process's claims away", () => {
      const s = backend.make()
      const now = Date.now()
      return Effect.gen(function* () {
        yield* on(s.process(1), (p) => Effect.zipRight(p.commit(now, { ...nothing, claims: { claims: [claim("k1", "a/x", now)], reaped: 0 } }), p.removeOwn))
        expect((yield* on(s.process(2), (p) => p.read(now, { claims: true }))).peers).toEqual([])
      })
    })

    it.live("US-41 a dead holder's claims are not read", () => {
      const s = backend.make()
      const now = Date.now()
      return Effect.gen(function* () {
        yield* on(s.dead(), (p) => p.commit(now, { ...nothing, claims: { claims: [claim("ghost", "a/x", now)], reaped: 0 } }))
        yield* on(s.process(1), (p) => p.commit(now, { ...nothing, claims: { claims: [claim("k1", "a/x", now)], reaped: 0 } }))
        const seen = yield* on(s.process(2), (p) => p.read(now, { claims: true }))
        expect(seen.peers.flatMap((x) => x.claims.map((c) => c.key))).toEqual(["k1"])
      })
    })

    it.live("US-41 claims past their holder's lease are not read", () => {
      const s = backend.make()
      const now = Date.now()
      return Effect.gen(function* () {
        yield* on(s.process(1), (p) => p.commit(now, { ...nothing, claims: { claims: [claim("k1", "a/x", now)], reaped: 0 } }))
        expect((yield* on(s.process(2), (p) => p.read(now + DEAD_FILE_MS - 60_000, { claims: true }))).peers).toHaveLength(1)
        expect((yield* on(s.process(2), (p) => p.read(now + DEAD_FILE_MS + 60_000, { claims: true }))).peers).toEqual([])
      })
    })

    it.live("US-48 expired records are not read: a cooldown past its decay window, a stale quota record, a fallback that is over", () => {
      const s = backend.make()
      const now = Date.now()
      return Effect.gen(function* () {
        yield* on(s.process(1), (p) =>
          p.commit(now, {
            cool: [cooldown("old/x", now - STRIKE_DECAY_MS - 1), cooldown("new/y", now + 60_000)],
            uncool: [],
            quota: [{ model: "old/x", requests: { remaining: 0, limit: 10, resetAt: now - 1 }, seenAt: now - 60_000 }, quota("new/y", 5, now)],
            fallbacks: [fallback("over", now - 1, now - 60_000), fallback("on", now + 60_000, now)]
          })
        )
        const seen = yield* on(s.process(2), (p) => p.read(now, ALL_RECORDS))
        expect([...seen.cooldowns.keys()]).toEqual(["new/y"])
        expect(seen.quota.map((r) => r.model)).toEqual(["new/y"])
        expect(seen.fallbacks.map((r) => r.session)).toEqual(["on"])
      })
    })

    it.live("US-40 only what `needs` asks for is read", () => {
      const s = backend.make()
      const now = Date.now()
      return Effect.gen(function* () {
        yield* on(s.process(1), (p) =>
          p.commit(now, { claims: { claims: [claim("k1", "a/x", now)], reaped: 0 }, cool: [cooldown("a/x", now + 60_000)], uncool: [], quota: [quota("a/x", 5, now)], fallbacks: [fallback("r", now + 60_000, now)] })
        )
        const seen = yield* on(s.process(2), (p) => p.transact(now, { cooldowns: true }, (snap) => ({ value: snap, commit: nothing })))
        expect([seen.peers, seen.quota, seen.fallbacks, seen.cooldowns.size]).toEqual([[], [], [], 1])
        const all = yield* on(s.process(2), (p) => p.read(now, ALL_RECORDS))
        expect([all.peers.length, all.quota.length, all.fallbacks.length, all.cooldowns.size]).toEqual([1, 1, 1, 1])
      })
    })

    it.live("US-40 transactions of several processes are serialised: none reads a state another is about to change", () => {
      const s = backend.make()
      const now = Date.now()
      const bump = (n: number) =>
        on(s.process(n), (p) =>
          p.transact(now, { cooldowns: true }, (snap) => ({ value: undefined, commit: { cool: [cooldown("c/x", now + 60_000, (snap.cooldowns.get("c/x")?.strikes ?? 0) + 1)], uncool: [] } }))
        )
      return Effect.gen(function* () {
        yield* Effect.all([1, 2, 3, 1, 2, 3].map(bump), { concurrency: "unbounded" })
        expect((yield* on(s.process(1), (p) => p.read(now, { cooldowns: true }))).cooldowns.get("c/x")?.strikes).toBe(6)
        expect((yield* on(s.process(1), (p) => p.stats)).failOpens).toBe(0)
      })
    })

    it.live("US-40 every method is the span SharedState.<method>; a transaction's read and commit are inside its span", () => {
      const s = backend.make()
      const now = Date.now()
      const spans = recordSpans()
      return Effect.gen(function* () {
        yield* on(s.process(1), (p) =>
          Effect.gen(function* () {
            yield* p.transact(now, { claims: true }, () => ({ value: undefined, commit: nothing }))
            yield* p.commit(now, nothing)
            yield* p.read(now, { cooldowns: true })
            yield* p.removeOwn
            yield* p.stats
            yield* p.fleet(now)
          }).pipe(Effect.withTracer(spans.tracer))
        )
        // a backend's own spans (a SQL client's transaction and statements) may sit between; the port's are these
        const port = (name: string | undefined) => name?.startsWith("SharedState.") === true
        const own = spans.spans.filter((x) => port(x.name))
        expect(own.map((x) => [x.name, x.ancestors.find(port)])).toEqual([
          ["SharedState.transact", undefined],
          ["SharedState.read", "SharedState.transact"],
          ["SharedState.commit", "SharedState.transact"],
          ["SharedState.commit", undefined],
          ["SharedState.read", undefined],
          ["SharedState.removeOwn", undefined],
          ["SharedState.stats", undefined],
          ["SharedState.fleet", undefined]
        ])
        expect(own.every((x) => x.exit?._tag === "Success")).toBe(true)
      })
    })

    it.live("US-51 permit entries one process wrote are read by another in FIFO (seq) order, every field as written", () => {
      const s = backend.make()
      const now = Date.now()
      const h = { host: s.holders.host, pid: s.holders.live(1) }
      const first = permit("p-1", 1, { ...h, session: "ses_a" }, now, { grantedAt: now + 5, ahead: 0 })
      const second = permit("p-2", 2, { ...h, via: "run", group: { pgid: s.holders.liveGroup, startToken: null } }, now + 1, { weight: 2, budget: "gpu" })
      const third = permit("p-3", 3, { ...h, via: "mcp" }, now + 2, { seenAt: now + 3, headSince: now + 4, ahead: 2 })
      return Effect.gen(function* () {
        yield* on(s.process(1), (p) => p.commit(now, { ...nothing, permits: { put: [third, first, second], remove: [] } }))
        const seen = yield* on(s.process(2), (p) => p.transact(now + 10, { permits: true }, (snap) => ({ value: snap, commit: nothing })))
        expect(seen.permits).toEqual([first, second, third].map((e) => ({ ...e, gone: false })))
        expect(seen.problems).toEqual([])
      })
    })

    it.live("US-51 a commit's removes take entries away and its puts replace entries by id", () => {
      const s = backend.make()
      const now = Date.now()
      const h = { host: s.holders.host, pid: s.holders.live(1) }
      return Effect.gen(function* () {
        yield* on(s.process(1), (p) => p.commit(now, { ...nothing, permits: { put: [permit("a", 1, h, now), permit("b", 2, h, now), permit("c", 3, h, now)], remove: [] } }))
        yield* on(s.process(2), (p) =>
          p.transact(now, { permits: true }, () => ({ value: undefined, commit: { ...nothing, permits: { put: [permit("c", 3, h, now, { grantedAt: now + 1 })], remove: ["a", "unknown"] } } }))
        )
        const seen = yield* on(s.process(3), (p) => p.read(now, { permits: true }))
        expect(seen.permits.map((e) => [e.id, e.grantedAt])).toEqual([
          ["b", undefined],
          ["c", now + 1]
        ])
      })
    })

    it.live("US-51 a dead holder's entries read as gone, a live one's not; an `ocpool run` entry holds while its process group lives; another host's by its lease alone", () => {
      const s = backend.make()
      const now = Date.now()
      const { host, dead, liveGroup, deadGroup } = s.holders
      const live = s.holders.live(1)
      const entries = [
        permit("live", 1, { host, pid: live }, now),
        permit("dead", 2, { host, pid: dead }, now),
        permit("runner-dead-group-alive", 3, { host, pid: dead, via: "run", group: { pgid: liveGroup, startToken: null } }, now),
        permit("runner-dead-group-gone", 4, { host, pid: dead, via: "run", group: { pgid: deadGroup, startToken: null } }, now),
        permit("elsewhere", 5, { host: "another-host", pid: dead }, now)
      ]
      return Effect.gen(function* () {
        yield* on(s.process(1), (p) => p.commit(now, { ...nothing, permits: { put: entries, remove: [] } }))
        const judged = (at: number) => on(s.process(2), (p) => p.read(at, { permits: true })).pipe(Effect.map((snap) => snap.permits.map((e) => [e.id, e.gone])))
        expect(yield* judged(now)).toEqual([
          ["live", false],
          ["dead", true],
          ["runner-dead-group-alive", false],
          ["runner-dead-group-gone", true],
          ["elsewhere", false]
        ])
        // past the lease: another host's entry is gone; a live holder here holds however long it runs
        const later = (yield* judged(now + DEAD_FILE_MS + 60_000)).filter(([, gone]) => gone === false).map(([id]) => id)
        expect(later).toEqual(["live", "runner-dead-group-alive"])
        // the backend only judges: the entries stay until a commit removes them
        expect((yield* judged(now)).length).toBe(5)
      })
    })

    it.live("US-51 permits are read only when `needs` asks for them", () => {
      const s = backend.make()
      const now = Date.now()
      return Effect.gen(function* () {
        yield* on(s.process(1), (p) => p.commit(now, { ...nothing, permits: { put: [permit("a", 1, { host: s.holders.host, pid: s.holders.live(1) }, now)], remove: [] } }))
        const without = yield* on(s.process(2), (p) => p.transact(now, { claims: true, cooldowns: true, quota: true, fallbacks: true }, (snap) => ({ value: snap, commit: nothing })))
        expect(without.permits).toEqual([])
        expect((yield* on(s.process(2), (p) => p.read(now, { cooldowns: true }))).permits).toEqual([])
        expect((yield* on(s.process(2), (p) => p.read(now, ALL_RECORDS))).permits.map((e) => e.id)).toEqual(["a"])
      })
    })

    it.live("US-51 two processes each adding 50 entries in interleaved transactions lose none and never reuse a seq", () => {
      const s = backend.make()
      const now = Date.now()
      const addAll = (n: number) =>
        on(s.process(n), (p) =>
          Effect.forEach(
            Array.from({ length: 50 }, (_, i) => i),
            (i) =>
              Effect.zipRight(
                Effect.yieldNow(),
                p.transact(now, { permits: true }, (snap) => {
                  const seq = snap.permits.reduce((m, e) => Math.max(m, e.seq), 0) + 1
                  return { value: undefined, commit: { ...nothing, permits: { put: [permit(`p${n}-${i}`, seq, { host: s.holders.host, pid: s.holders.live(n) }, now)], remove: [] } } }
                })
              ),
            { discard: true }
          )
        )
      return Effect.gen(function* () {
        yield* Effect.all([addAll(1), addAll(2)], { concurrency: 2 })
        const seen = (yield* on(s.process(3), (p) => p.read(now, { permits: true }))).permits
        expect(seen.map((e) => e.seq)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1))
        expect(new Set(seen.map((e) => e.id)).size).toBe(100)
        // the two really took turns
        const owners = seen.map((e) => e.id.slice(0, 2))
        expect(owners.filter((o, i) => i > 0 && o !== owners[i - 1]).length).toBeGreaterThan(1)
        expect((yield* on(s.process(1), (p) => p.stats)).failOpens).toBe(0)
      })
    })

    it.live("US-20 the context map's entries one process puts are read by another, by key; removes take them away; read only when `needs` asks", () => {
      const s = backend.make()
      const now = Date.now()
      return Effect.gen(function* () {
        yield* on(s.process(1), (p) => p.commit(now, { ...nothing, context: { put: [{ key: "record:/p", body: '{"a":1}' }, { key: "queued:/p", body: '{"at":5}' }], remove: [] } }))
        expect((yield* on(s.process(2), (p) => p.read(now, { context: true }))).context).toEqual([
          { key: "queued:/p", body: '{"at":5}' },
          { key: "record:/p", body: '{"a":1}' }
        ])
        expect((yield* on(s.process(2), (p) => p.read(now, { claims: true }))).context).toEqual([])
        yield* on(s.process(2), (p) => p.transact(now, { context: true }, () => ({ value: undefined, commit: { ...nothing, context: { put: [{ key: "record:/p", body: '{"a":2}' }], remove: ["queued:/p"] } } })))
        expect((yield* on(s.process(1), (p) => p.read(now, { context: true }))).context).toEqual([{ key: "record:/p", body: '{"a":2}' }])
      })
    })

    it.live("US-46 a plugin engine registers once and every process reads it, its own included: pid, version, backend, since, live; read only when `needs` asks; removeOwn takes it away", () => {
      const s = backend.make()
      const now = Date.now()
      const { host } = s.holders
      return Effect.gen(function* () {
        // registered and nothing else: an idle engine, no claims table
        yield* on(s.process(1), (p) => p.commit(now, { ...nothing, engine: { version: "1.2.3", since: now - 5_000, backend: "sqlite" } }))
        const seen = yield* on(s.process(2), (p) => p.read(now, { engines: true }))
        expect([seen.engines, seen.peers, seen.problems]).toEqual([[{ host, pid: s.holders.live(1), version: "1.2.3", backend: "sqlite", since: now - 5_000, live: true, local: true }], [], []])
        expect((yield* on(s.process(1), (p) => p.read(now, { engines: true }))).engines.map((e) => e.pid)).toEqual([s.holders.live(1)])
        expect((yield* on(s.process(2), (p) => p.read(now, ALL_RECORDS))).engines).toEqual([])
        // an idle engine holds however long it runs: no lease on this host
        expect((yield* on(s.process(2), (p) => p.read(now + DEAD_FILE_MS * 10, { engines: true }))).engines.map((e) => e.live)).toEqual([true])
        yield* on(s.process(2), (p) => p.commit(now + 1, { ...nothing, engine: { version: "1.2.3", since: now + 1, backend: "sqlite" } }))
        yield* on(s.process(1), (p) => p.removeOwn)
        expect((yield* on(s.process(3), (p) => p.read(now + 2, { engines: true }))).engines.map((e) => [e.pid, e.live])).toEqual([[s.holders.live(2), true]])
      })
    })

    it.live("US-46 an engine whose process ended without unregistering reads as gone, and the next engine registering on this host removes it", () => {
      const s = backend.make()
      const now = Date.now()
      return Effect.gen(function* () {
        yield* on(s.dead(), (p) => p.commit(now, { ...nothing, engine: { version: "1.0.0", since: now, backend: "sqlite" } }))
        const judged = (at: number) => on(s.process(2), (p) => p.read(at, { engines: true })).pipe(Effect.map((snap) => snap.engines.map((e) => [e.pid, e.live])))
        expect(yield* judged(now)).toEqual([[s.holders.dead, false]])
        yield* on(s.process(1), (p) => p.commit(now + 1, { ...nothing, engine: { version: "1.0.1", since: now + 1, backend: "sqlite" } }))
        expect(yield* judged(now + 2)).toEqual([[s.holders.live(1), true]])
      })
    })

    it.live("US-6 a commit by one process wakes another's `changes` (the live view re-reads on it)", () => {
      const s = backend.make()
      const now = Date.now()
      return on(s.process(2), (watcher) =>
        Effect.gen(function* () {
          // a backend may say once that its watch is in place: only what comes after the first commit counts
          const committing = yield* Ref.make(false)
          const woke = yield* watcher.changes.pipe(Stream.filterEffect(() => Ref.get(committing)), Stream.take(1), Stream.runDrain, Effect.as(true), Effect.fork)
          yield* Effect.sleep("200 millis")
          yield* Ref.set(committing, true)
          // a commit, repeated until seen (a watch or a LISTEN may take a moment to be in place); five seconds at most
          const commits = on(s.process(1), (p) =>
            Effect.repeat(p.commit(Date.now(), { claims: { claims: [claim("k1", "a/x", now)], reaped: 0 }, cool: [], uncool: [] }).pipe(Effect.zipRight(Effect.sleep("200 millis"))), { times: 25 })
          ).pipe(Effect.as(false))
          expect(yield* Effect.raceFirst(Fiber.join(woke), commits)).toBe(true)
        })
      )
    })
  })
