/**
 * The context map's records as files in the state directory (epic G, US-20): `context.<key>.json`
 * (the record, written whole through atomicWrite.ts, mode 0600) and `context.<key>.queued` (the CLI's
 * refresh request, `{"at":<ms>}`), `<key>` the project root encoded (core/context/record.ts). Every call
 * is synchronous, as the state files' are: it runs inside opencode's hooks. Reads are capped at the
 * state-file limit and never fail; writes fail typed, never throw. The map's facts are `stat`s of
 * `<root>/.opencode/context/*`.
 */
import { Effect, Layer } from "effect"
import { statSync, unlinkSync } from "node:fs"
import { join } from "node:path"
import { MANAGER_FILE, MAP_DIR, MAP_FILES } from "../../core/context/map.js"
import type { MapFacts, MapFileFacts } from "../../core/context/mapFacts.js"
import { decodeQueued, decodeRecord, encodeQueued, encodeRecord, queueFileName, recordFileName, type ContextRecord } from "../../core/context/record.js"
import { STATE_FILE_MAX_BYTES } from "../../core/limits.js"
import { ContextStore, ContextStoreError, type ContextStoreService } from "../../services/context/ContextStore.js"
import { StateDir } from "../../services/state/StateDir.js"
import { writeFileAtomic } from "../fs/atomicWrite.js"
import { dirReason, makeDir } from "../fs/dirs.js"
import { readTextFile } from "../fs/safeRead.js"
import { contextStoreInMemory } from "./ContextStoreMemory.js"

const codeOf = (e: unknown): string => (e as NodeJS.ErrnoException | undefined)?.code ?? String(e)

/** A regular file's size and mtime (links followed), or undefined. */
const fileStat = (path: string): { readonly bytes: number; readonly mtimeMs: number } | undefined => {
  try {
    const st = statSync(path)
    return st.isFile() ? { bytes: st.size, mtimeMs: st.mtimeMs } : undefined
  } catch {
    return undefined
  }
}

/** The map's files in `<root>/.opencode/context/` as they are now. Never throws. */
export const readMapFacts = (root: string): MapFacts => {
  const dir = join(root, MAP_DIR)
  let exists = false
  try {
    exists = statSync(dir).isDirectory()
  } catch {
    exists = false
  }
  if (!exists) return { exists, files: [] }
  const files: Array<MapFileFacts> = []
  for (const name of MAP_FILES) {
    const st = fileStat(join(dir, name))
    if (st !== undefined) files.push({ name, ...st })
  }
  const manager = fileStat(join(dir, MANAGER_FILE))
  if (manager !== undefined) files.push({ name: MANAGER_FILE, ...manager, manager: true })
  return { exists, files }
}

/** Writes `body` to `name` in `dir`, creating the directory (0700) when it is missing. */
const writeIn = (dir: string, name: string, body: string): Effect.Effect<void, ContextStoreError> =>
  Effect.suspend(() => {
    const problem = makeDir(dir, 0o700)
    if (problem !== undefined) return Effect.fail(new ContextStoreError({ path: problem.path, reason: dirReason(problem.code) }))
    const path = join(dir, name)
    return Effect.try({ try: () => writeFileAtomic(path, body, 0o600), catch: (e) => new ContextStoreError({ path, reason: dirReason(codeOf(e)) }) })
  })

/** The service over the state directory `dir`; without one, reads find nothing and writes fail typed. */
export const contextStoreOn = (dir: string | undefined): ContextStoreService => {
  const noDir = new ContextStoreError({ path: "state dir", reason: "no usable state directory" })
  const load = (root: string): ContextRecord | undefined => {
    if (dir === undefined) return undefined
    const read = readTextFile(join(dir, recordFileName(root)), STATE_FILE_MAX_BYTES)
    if (read._tag !== "Text") return undefined
    const record = decodeRecord(read.text)
    // a record under this root's name that names another root (a cut key's clash, a copied file) is not this one's
    return record !== undefined && record.root === root ? record : undefined
  }
  const queued = (root: string): number | undefined => {
    if (dir === undefined) return undefined
    const path = join(dir, queueFileName(root))
    const read = readTextFile(path, STATE_FILE_MAX_BYTES)
    if (read._tag === "Missing") return undefined
    if (read._tag === "Text") return decodeQueued(read.text) ?? read.stat.mtimeMs
    // there but unreadable (too large, no permission): a regular file still asks for a refresh
    return fileStat(path)?.mtimeMs
  }
  return ContextStore.of({
    load: Effect.fn("ContextStore.load")((root: string) => Effect.sync(() => load(root))),
    save: Effect.fn("ContextStore.save")((record: ContextRecord) => (dir === undefined ? Effect.fail(noDir) : writeIn(dir, recordFileName(record.root), encodeRecord(record)))),
    queued: Effect.fn("ContextStore.queued")((root: string) => Effect.sync(() => queued(root))),
    takeQueued: Effect.fn("ContextStore.takeQueued")((root: string) =>
      Effect.sync(() => {
        if (dir === undefined) return
        try {
          unlinkSync(join(dir, queueFileName(root)))
        } catch {
          // absent, or not removable: nothing more to do
        }
      })
    ),
    queue: Effect.fn("ContextStore.queue")((root: string, at: number) => (dir === undefined ? Effect.fail(noDir) : writeIn(dir, queueFileName(root), encodeQueued(at)))),
    mapFacts: Effect.fn("ContextStore.mapFacts")((root: string) => Effect.sync(() => readMapFacts(root)))
  })
}

/** The live layer over a state directory (`undefined`: none usable). */
export const ContextStoreFile = (stateDir: string | undefined) => Layer.succeed(ContextStore, contextStoreOn(stateDir))

/**
 * The plugin's layer: over the StateDir service's directory, or, when it has none (the plugin then
 * keeps its state in memory), over this process's memory with the map's facts still read from disk.
 */
export const ContextStoreFromStateDir = Layer.effect(
  ContextStore,
  Effect.map(StateDir, (s) => (s.dir === undefined ? contextStoreInMemory(undefined, readMapFacts) : contextStoreOn(s.dir)))
)
