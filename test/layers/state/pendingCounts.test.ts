/**
 * Fleet mode's counts while PostgreSQL does not answer (issue 36): what was decided on the state
 * directory keeps its counts in memory with the fallbacks themselves and the fallback database's
 * fail-opens, published to the server's counters when the host rejoins (or at a heartbeat); nothing of
 * it is written to `state.db`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { chmodSync, mkdtempSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { count, type CounterRow } from "../../../src/core/metrics/counters.js"
import { AppLogMemory } from "../../../src/layers/opencode/AppLogMemory.js"
import { countersInMemory } from "../../../src/layers/state/memoryRecords.js"
import { RecordsError, type CounterRecords } from "../../../src/layers/state/sharedStateOver.js"
import { sharedStateLayer } from "../../../src/layers/state/sharedStateLayer.js"
import { pendingCounts, withoutCounts } from "../../../src/layers/state/sqlCounters.js"
import { SharedState } from "../../../src/services/state/SharedState.js"
import { StateDir } from "../../../src/services/state/StateDir.js"

const values = (table: Map<string, CounterRow>) => Object.fromEntries([...table.values()].map((r) => [`${r.name}{${r.labels.join(",")}}`, r.value]))

const FAILING: CounterRecords = { readAll: Effect.succeed([]), add: () => Effect.fail(new RecordsError({ store: "pg", access: "write", detail: "down" })) }

describe("US-53 fleet mode's counts kept for the server", () => {
  it("US-53 counts made on files, fallbacks and fail-opens are summed in memory and published once; a failed publish keeps them", () =>
    Effect.gen(function* () {
      let failOpens = 2
      const pending = pendingCounts(true, Effect.sync(() => ({ failOpens })))
      pending.add([count("routes_total", ["explore", "first"])])
      pending.add([count("routes_total", ["explore", "first"]), count("cooldowns_total", ["rate_limit"])])
      pending.fellBack()
      pending.fellBack()
      // the server fails the write: nothing is lost
      yield* Effect.either(pending.publish(FAILING))
      const table = new Map<string, CounterRow>()
      yield* pending.publish(countersInMemory(table, "h"))
      expect(values(table)).toEqual({ "routes_total{explore,first}": 2, "cooldowns_total{rate_limit}": 1, "fleet_fallbacks_total{}": 2, "fail_opens_total{}": 2 })
      // published once: only what came since goes next time
      failOpens = 3
      pending.fellBack()
      yield* pending.publish(countersInMemory(table, "h"))
      expect(values(table)).toMatchObject({ "routes_total{explore,first}": 2, "fleet_fallbacks_total{}": 3, "fail_opens_total{}": 3 })
      const off = pendingCounts(false, Effect.succeed({ failOpens: 5 }))
      off.add([count("routes_total", ["explore", "first"])])
      off.fellBack()
      const none = new Map<string, CounterRow>()
      yield* off.publish(countersInMemory(none, "h"))
      expect(none.size).toBe(0)
      expect(withoutCounts({ cool: [], uncool: [], counts: [count("fleet_fallbacks_total")] }).counts).toBeUndefined()
    }).pipe(Effect.runPromise))

  it.live("US-53 a decision made on the state directory while PostgreSQL does not answer writes no counter there (they wait for the server)", () =>
    Effect.gen(function* () {
      const dir = mkdtempSync(join(tmpdir(), "ocpool-fleet-"))
      chmodSync(dir, 0o700)
      const id = Layer.merge(Layer.succeed(StateDir, { dir, trusted: true, pid: process.pid, host: hostname(), startTime: null }), AppLogMemory([]))
      const fleet = sharedStateLayer({ backend: "postgres", url: "postgres://nobody@127.0.0.1:1/none", schema: "ocpool", leaseMs: 30_000, lockWaitMs: 250 }).pipe(Layer.provide(id))
      const stats = yield* Effect.scoped(
        Effect.flatMap(SharedState, (p) =>
          Effect.zipRight(p.transact(Date.now(), { cooldowns: true }, () => ({ value: undefined, commit: { cool: [], uncool: [], counts: [count("routes_total", ["explore", "first"])] } })), p.stats)
        ).pipe(Effect.provide(fleet))
      )
      expect(stats.fallbacks).toBe(1)
      const local = yield* Effect.scoped(Effect.flatMap(SharedState, (p) => p.read(Date.now(), { counters: true })).pipe(Effect.provide(sharedStateLayer({ backend: "sqlite", lockWaitMs: 250, view: true }).pipe(Layer.provide(id)))))
      expect(local.counters).toEqual([])
    }), 20_000)
})
