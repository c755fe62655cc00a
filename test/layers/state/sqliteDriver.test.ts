import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { openStateDb } from "../../../src/layers/state/SharedStateSqlite.js"
import { sqliteTx } from "../../../src/layers/state/sqliteDriver.js"

const fresh = () => {
  const db = openStateDb(join(mkdtempSync(join(tmpdir(), "ocpool-tx-")), "state.db"))
  db.exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)")
  return db
}

describe("transactions on state.db (issue 32)", () => {
  it.live("US-40 a transaction whose fiber is interrupted half-way runs to its end and commits; the connection takes the next one", () =>
    Effect.gen(function* () {
      const db = fresh()
      const tx = yield* sqliteTx(db)
      const body = Effect.gen(function* () {
        db.run("INSERT INTO t (k, v) VALUES (1, 'first')")
        yield* Effect.sleep("30 millis")
        db.run("INSERT INTO t (k, v) VALUES (2, 'second')")
      })
      const fiber = yield* Effect.fork(tx.immediate(1_000, body))
      yield* Effect.sleep("5 millis")
      yield* Fiber.interrupt(fiber)
      expect(db.inTransaction()).toBe(false)
      expect(tx.mode()).toBe("none")
      const next = yield* tx.immediate(1_000, Effect.sync(() => db.run("INSERT INTO t (k, v) VALUES (3, 'third')")))
      expect(next).toEqual({ value: 1 })
      expect(db.all<{ k: number }>("SELECT k FROM t ORDER BY k").map((r) => r.k)).toEqual([1, 2, 3])
      db.close()
    })
  )

  it.live("US-40 a body that fails is rolled back, a read snapshot never writes, and both leave the mode none", () =>
    Effect.gen(function* () {
      const db = fresh()
      const tx = yield* sqliteTx(db)
      const failed = yield* Effect.flip(tx.immediate(1_000, Effect.zipRight(Effect.sync(() => db.run("INSERT INTO t (k, v) VALUES (1, 'x')")), Effect.fail("no" as const))))
      expect(failed).toBe("no")
      expect(db.all("SELECT k FROM t")).toEqual([])
      const seen = yield* tx.snapshot(Effect.sync(() => [tx.mode(), db.all<{ n: number }>("SELECT count(*) AS n FROM t")[0]!.n] as const))
      expect(seen).toEqual(["read", 0])
      expect([tx.mode(), db.inTransaction()]).toEqual(["none", false])
      expect(tx.commits()).toBe(0)
      db.close()
    })
  )
})
