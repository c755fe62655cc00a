/** The context map's store (epic G, US-20/US-22): the same contract over memory and over files, then what only files do. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { MapFacts } from "../../../src/core/context/mapFacts.js"
import { emptyRecord, encodeRecord, queueFileName, recordFileName, type ContextRecord } from "../../../src/core/context/record.js"
import { STATE_FILE_MAX_BYTES } from "../../../src/core/limits.js"
import { contextStoreOn, ContextStoreFile, ContextStoreFromStateDir, readMapFacts } from "../../../src/layers/context/ContextStoreFile.js"
import { contextStoreInMemory, contextStoreTables } from "../../../src/layers/context/ContextStoreMemory.js"
import { StateDirMemory } from "../../../src/layers/state/StateDirMemory.js"
import { ContextStore, type ContextStoreService } from "../../../src/services/context/ContextStore.js"

const T = Date.parse("2026-12-01T12:00:00Z")
const tmp = (prefix: string) => mkdtempSync(join(tmpdir(), prefix))
const stateDir = () => {
  const dir = tmp("ocpool-ctx-state-")
  chmodSync(dir, 0o700)
  return dir
}

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
contract("files", () => contextStoreOn(stateDir()))

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

describe("context store on files", () => {
  it.live("US-20 the record is context.<key>.json, mode 0600, written whole (no .tmp left); the marker is context.<key>.queued", () => {
    const dir = stateDir()
    return Effect.gen(function* () {
      const s = contextStoreOn(dir)
      yield* s.save(RECORD)
      yield* s.queue(RECORD.root, T)
      expect(readdirSync(dir).sort()).toEqual([queueFileName(RECORD.root), recordFileName(RECORD.root)].sort())
      expect(readdirSync(dir)).toContain("context._2fhome_2fu_2fp.json")
      expect(statSync(join(dir, recordFileName(RECORD.root))).mode & 0o777).toBe(0o600)
      expect(statSync(join(dir, queueFileName(RECORD.root))).mode & 0o777).toBe(0o600)
      expect(JSON.parse(readFileSync(join(dir, queueFileName(RECORD.root)), "utf8"))).toEqual({ at: T })
      expect(JSON.parse(readFileSync(join(dir, recordFileName(RECORD.root)), "utf8"))).toMatchObject({ version: 1, root: "/home/u/p", pending: ["src/a.ts", "src/b.ts"] })
    })
  })

  it.live("US-20 an unreadable record is no record: garbage, another root's record under this name, a directory, a file over the state-file cap", () => {
    const dir = stateDir()
    const path = join(dir, recordFileName(RECORD.root))
    return Effect.gen(function* () {
      const s = contextStoreOn(dir)
      writeFileSync(path, "{garbage")
      expect(yield* s.load(RECORD.root)).toBeUndefined()
      writeFileSync(path, encodeRecord({ ...RECORD, root: "/elsewhere" }))
      expect(yield* s.load(RECORD.root)).toBeUndefined()
      writeFileSync(path, `${encodeRecord(RECORD)}${" ".repeat(STATE_FILE_MAX_BYTES)}`)
      expect(yield* s.load(RECORD.root)).toBeUndefined()
      writeFileSync(path, encodeRecord(RECORD))
      expect(yield* s.load(RECORD.root)).toEqual(RECORD)
      const other = join(dir, recordFileName("/d"))
      mkdirSync(other)
      expect(yield* s.load("/d")).toBeUndefined()
    })
  })

  it.live("US-22 a marker whose body is unreadable counts from its mtime; a directory in its place is no marker", () => {
    const dir = stateDir()
    return Effect.gen(function* () {
      const s = contextStoreOn(dir)
      const marker = join(dir, queueFileName("/p"))
      writeFileSync(marker, "")
      utimesSync(marker, new Date(T), new Date(T))
      expect(yield* s.queued("/p")).toBe(T)
      mkdirSync(join(dir, queueFileName("/q")))
      expect(yield* s.queued("/q")).toBeUndefined()
      yield* s.takeQueued("/q")
      expect(existsSync(join(dir, queueFileName("/q")))).toBe(true)
    })
  })

  it.live("US-22 a missing state directory is created (0700) by the first write; reads before find nothing", () => {
    const dir = join(tmp("ocpool-ctx-parent-"), "state", "deeper")
    return Effect.gen(function* () {
      const s = contextStoreOn(dir)
      expect(yield* s.load("/p")).toBeUndefined()
      expect(yield* s.queued("/p")).toBeUndefined()
      yield* s.takeQueued("/p")
      yield* s.queue("/p", T)
      expect(statSync(dir).mode & 0o777).toBe(0o700)
      expect(yield* s.queued("/p")).toBe(T)
    })
  })

  it.live("US-20 an unusable state directory never throws: reads find nothing, writes fail typed with the path and a reason", () => {
    const file = join(tmp("ocpool-ctx-file-"), "not-a-dir")
    writeFileSync(file, "x")
    return Effect.gen(function* () {
      for (const s of [contextStoreOn(file), contextStoreOn(join(file, "below")), contextStoreOn(undefined)]) {
        expect(yield* s.load("/p")).toBeUndefined()
        expect(yield* s.queued("/p")).toBeUndefined()
        yield* s.takeQueued("/p")
        const saved = yield* Effect.exit(s.save(emptyRecord("/p")))
        const queued = yield* Effect.exit(s.queue("/p", T))
        for (const exit of [saved, queued]) {
          expect(Exit.isFailure(exit)).toBe(true)
          if (Exit.isFailure(exit)) expect(JSON.stringify(exit.cause)).toMatch(/ContextStoreError/)
        }
      }
      const e = yield* Effect.flip(contextStoreOn(file).save(emptyRecord("/p")))
      expect(e).toMatchObject({ _tag: "ContextStoreError", path: file, reason: "exists and is not a directory" })
      const none = yield* Effect.flip(contextStoreOn(undefined).queue("/p", T))
      expect(none.reason).toBe("no usable state directory")
    })
  })

  it.live("US-20 the map's facts: the five files that exist in order, manager.md flagged, other names and directories ignored", () => {
    const root = tmp("ocpool-ctx-proj-")
    const map = join(root, ".opencode", "context")
    return Effect.gen(function* () {
      const s = contextStoreOn(stateDir())
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
    })
  })

  it.live("US-20 the layers: ContextStoreFile over a directory; ContextStoreFromStateDir in memory when the state directory is unusable, map facts still from disk", () => {
    const dir = stateDir()
    const root = tmp("ocpool-ctx-proj-")
    mkdirSync(join(root, ".opencode", "context"), { recursive: true })
    writeFileSync(join(root, ".opencode", "context", "workflows.md"), "w")
    return Effect.gen(function* () {
      yield* Effect.flatMap(ContextStore, (s) => s.save(RECORD)).pipe(Effect.provide(ContextStoreFile(dir)))
      expect(existsSync(join(dir, recordFileName(RECORD.root)))).toBe(true)
      const inMemory = yield* Effect.gen(function* () {
        const s = yield* ContextStore
        yield* s.save(RECORD)
        return { record: yield* s.load(RECORD.root), facts: yield* s.mapFacts(root) }
      }).pipe(Effect.provide(ContextStoreFromStateDir), Effect.provide(StateDirMemory(1)))
      expect(inMemory.record).toEqual(RECORD)
      expect(inMemory.facts.files.map((f) => f.name)).toEqual(["workflows.md"])
    })
  })
})
