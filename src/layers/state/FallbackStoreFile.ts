/**
 * Active fallbacks as files in the state directory (issue 12, US-50): `fallback.<enc>.json`, written
 * whole (atomicWrite.ts, mode 0600). Files that are over or unreadable are deleted only in a trusted
 * directory (SPEC §2.1), as the cooldown store does. Without a usable state directory the records live
 * in this process only.
 */
import { Effect, Layer } from "effect"
import { join } from "node:path"
import { bySession, decodeFallback, encodeFallback, FALLBACK_FILE, fallbackFileName, isOver, type FallbackRecord } from "../../core/quota/fallbackRecord.js"
import { FallbackStore, type FallbackStoreService } from "../../services/state/FallbackStore.js"
import { StateDir } from "../../services/state/StateDir.js"
import { writeFileAtomic } from "../fs/atomicWrite.js"
import { decodedFileCache, quietUnlink } from "../fs/fileCache.js"
import { liveStateFiles } from "./stateFiles.js"

/** The store over `dir` (undefined: in this process only); `clean`: files that are over may be deleted. */
export const fallbackStoreOn = (dir: string | undefined, clean: boolean): FallbackStoreService => {
  /** The records themselves without a directory; with one, the files are the records. */
  const own = new Map<string, FallbackRecord>()
  const files = decodedFileCache<FallbackRecord | undefined>(decodeFallback)
  return {
    record: (r) =>
      Effect.sync(() => {
        if (dir === undefined) return void own.set(r.session, r)
        try {
          writeFileAtomic(join(dir, fallbackFileName(r.session)), encodeFallback(r))
        } catch {
          // the status misses it; the switch itself is unaffected
        }
      }),
    remove: (session) =>
      Effect.sync(() => {
        if (dir === undefined) own.delete(session)
        else quietUnlink(join(dir, fallbackFileName(session)))
      }),
    readAll: (now) =>
      Effect.sync(() => {
        if (dir === undefined) return bySession([...own.values()].filter((r) => !isOver(r, now)))
        try {
          const live = liveStateFiles(dir, FALLBACK_FILE, files, (r) => isOver(r, now), clean)
          return bySession(live.filter(({ name, record }) => name === fallbackFileName(record.session)).map(({ record }) => record))
        } catch {
          return []
        }
      })
  }
}

export const FallbackStoreFile = Layer.effect(
  FallbackStore,
  Effect.map(StateDir, ({ dir, trusted }) => fallbackStoreOn(dir, trusted === true))
)
