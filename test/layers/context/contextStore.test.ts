/** The context map's store (epic G, US-20/US-22): the same contract over memory and over the shared-state port (state.db, issue 32), then what the shared store does. */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Scope } from "effect"
import { chmodSync, mkdirSync, mkdtempSync, utimesSync, writeFileSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import type { MapFacts } from "../../../src/core/context/mapFacts.js"
import { emptyRecord, encodeRecord, type ContextRecord } from "../../../src/core/context/record.js"
import { contextStoreOver, ContextStoreShared, queuedKey, recordKey } from "../../../src/layers/context/ContextStoreShared.js"
import { contextStoreInMemory, contextStoreTables } from "../../../src/layers/context/ContextStoreMemory.js"
import { readMapFacts } from "../../../src/layers/context/mapFacts.js"
import { memoryState } from "../../../src/layers/state/MemoryState.js"
import { sharedStateLayer } from "../../../src/layers/state/sharedStateLayer.js"
import { SharedStateMemory } from "../../../src/layers/state/SharedStateMemory.js"
import { ContextStore, type ContextStoreService } from "../../../src/services/context/ContextStore.js"
import { SharedState } from "../../../src/services/state/SharedState.js"
import { StateDir } from "../../../src/services/state/StateDir.js"
import { contextRecordIn, seedSql } from "../../support/stateDb.js"

const T = Date.parse("2026-12-01T12:00:00Z")
const tmp = (prefix: string) => mkdtempSync(join(tmpdir(), prefix))
const stateDir = () => {
  const dir = tmp("ocpool-ctx-state-")
  chmodSync(dir, 0o700)
  return dir
}

/** The port of a process on `dir`'s state.db. */
const sqlitePort = (dir: string, pid = process.pid) =>
  sharedStateLayer({ backend: "sqlite", lockWaitMs: 1_000 }).pipe(Layer.provide(Layer.succeed(StateDir, { dir, trusted: true, pid, host: hostname(), startTime: null })))

const RECORD: ContextRecord = {
  ...emptyRecord("/home/u/p"),
  writtenAt: T,
  pending: ["src/a.ts", "src/b.ts"],
  lastStartedAt: T - 1000,
  inFlight: { run: "r1", kind: "bootstrap", session: null, startedAt: T - 1000, paths: ["src/z.ts"], host: "devbox", pid: 4242 }
}

const contract = (name: string, make: () => ContextStoreService) =>
  describe(`context store contract: ${name}`, () => {
    it.live("US-20 no record until one is saved; a saved record loads as it was, per root", () =>
      Effect.gen(function* () {
        const s = make()
        expect(yield* s.load("/home/u/p")).toBeUndefined()
        yield* s.save(RECORD)
        yield* s.save(emptyRecord("/home/u/q"))
        expect(yield* s.load("/home/u/p")).toEqual(RECORD)
        expect(yield* s.load("/home/u/q")).toEqual(emptyRecord("/home/u/q"))
        yield* s.save({ ...RECORD, pending: [], inFlight: null })
        expect((yield* s.load("/home/u/p"))?.pending).toEqual([])
      })
    )

    it.live("US-22 a queued refresh is seen until it is taken; taking it twice is silent", () =>
      Effect.gen(function* () {
        const s = make()
        expect(yield* s.queued("/home/u/p")).toBeUndefined()
        yield* s.queue("/home/u/p", T)
        expect(yield* s.queued("/home/u/p")).toBe(T)
        expect(yield* s.queued("/home/u/q")).toBeUndefined()
        // the plugin rewriting the record leaves the marker alone
        yield* s.save(RECORD)
        expect(yield* s.queued("/home/u/p")).toBe(T)
        yield* s.takeQueued("/home/u/p")
        yield* s.takeQueued("/home/u/p")
        expect(yield* s.queued("/home/u/p")).toBeUndefined()
        expect(yield* s.load("/home/u/p")).toEqual(RECORD)
      })
    )
  })

contract("memory", () => contextStoreInMemory())
// the port stays open for the test's life (a scope never closed)
contract("shared state (state.db)", () =>
  Effect.runSync(Effect.flatMap(Scope.make(), (scope) => Effect.map(Layer.buildWithScope(sqlitePort(stateDir()), scope), (ctx) => contextStoreOver(Context.get(ctx, SharedState)))))
)
contract("shared state (memory)", () => Effect.runSync(Effect.map(SharedState, contextStoreOver).pipe(Effect.provide(SharedStateMemory(memoryState(), 1)))))

describe("context store in memory", () => {
  it.live("US-20 the map's facts come from the table the test sets (no map by default)", () =>
    Effect.gen(function* () {
      const tables = contextStoreTables()
      const s = contextStoreInMemory(tables)
      expect(yield* s.mapFacts("/p")).toEqual({ exists: false, files: [] })
      const facts: MapFacts = { exists: true, files: [{ name: "contexts.md", bytes: 5, mtimeMs: T }] }
      tables.maps.set("/p", facts)
      expect(yield* s.mapFacts("/p")).toEqual(facts)
    })
  )
})

describe("the context store on the shared state (issue 32)", () => {
  it.live("US-20 a record one process saves, another loads; a marker one queues (the CLI), the plugin takes", () => {
    const dir = stateDir()
    return Effect.gen(function* () {
      const withStore = <A, E>(pid: number, f: (s: ContextStoreService) => Effect.Effect<A, E>) => Effect.scoped(Effect.flatMap(ContextStore, f).pipe(Effect.provide(ContextStoreShared.pipe(Layer.provide(sqlitePort(dir, pid))))))
      yield* withStore(process.pid, (s) => s.save(RECORD))
      yield* withStore(process.ppid, (s) => s.queue(RECORD.root, T))
      expect(yield* withStore(process.ppid, (s) => s.load(RECORD.root))).toEqual(RECORD)
      expect(yield* withStore(process.pid, (s) => Effect.zipLeft(s.queued(RECORD.root), s.takeQueued(RECORD.root)))).toBe(T)
      expect(yield* withStore(process.ppid, (s) => s.queued(RECORD.root))).toBeUndefined()
      expect(contextRecordIn(dir, RECORD.root)).toEqual(RECORD)
    })
  })

  it.live("US-20 an unreadable record is no record: garbage, another root's record under this key; an unreadable marker is none", () => {
    const dir = stateDir()
    seedSql(dir, "INSERT INTO context (key, body) VALUES (?, ?)", [recordKey("/a"), "{not json"])
    seedSql(dir, "INSERT INTO context (key, body) VALUES (?, ?)", [recordKey("/b"), encodeRecord(emptyRecord("/c"))])
    seedSql(dir, "INSERT INTO context (key, body) VALUES (?, ?)", [queuedKey("/a"), "[]"])
    return Effect.gen(function* () {
      const s = yield* Effect.map(SharedState, contextStoreOver)
      expect([yield* s.load("/a"), yield* s.load("/b"), yield* s.queued("/a")]).toEqual([undefined, undefined, undefined])
    }).pipe(Effect.provide(sqlitePort(dir)), Effect.scoped)
  })

  it.live("US-20 the map's facts: the five files that exist in order, manager.md flagged, other names and directories ignored", () => {
    const root = tmp("ocpool-ctx-proj-")
    const map = join(root, ".opencode", "context")
    return Effect.gen(function* () {
      const s = yield* Effect.map(SharedState, contextStoreOver)
      expect(yield* s.mapFacts(root)).toEqual({ exists: false, files: [] })
      mkdirSync(map, { recursive: true })
      expect(yield* s.mapFacts(root)).toEqual({ exists: true, files: [] })
      writeFileSync(join(map, "decisions.md"), "d".repeat(10))
      writeFileSync(join(map, "architecture.md"), "a".repeat(20))
      writeFileSync(join(map, "manager.md"), "m")
      writeFileSync(join(map, "notes.md"), "n")
      mkdirSync(join(map, "contexts.md"))
      utimesSync(join(map, "decisions.md"), new Date(T), new Date(T))
      const facts = yield* s.mapFacts(root)
      expect(facts.files.map((f) => [f.name, f.bytes, f.manager === true])).toEqual([
        ["architecture.md", 20, false],
        ["decisions.md", 10, false],
        ["manager.md", 1, true]
      ])
      expect(facts.files[1]!.mtimeMs).toBe(T)
      expect(readMapFacts(join(root, "absent"))).toEqual({ exists: false, files: [] })
    }).pipe(Effect.provide(sqlitePort(stateDir())), Effect.scoped)
  })
})
