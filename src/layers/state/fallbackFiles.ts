/**
 * Active fallbacks (issue 12, US-50), the backends' fallback part: `fallback.<enc>.json` per root
 * session in the state directory, written whole (atomicWrite.ts, mode 0600), or one table in memory (a
 * memory backend's, or a process's own when the state directory is unusable). Files that are over or
 * unreadable are deleted only in a trusted directory (SPEC §2.1), as cooldown files are. Never fails: a
 * write that cannot be made is skipped (the status misses it; the switch itself is unaffected).
 */
import { Effect } from "effect"
import { join } from "node:path"
import { bySession, decodeFallback, encodeFallback, FALLBACK_FILE, fallbackFileName, isOver, type FallbackRecord } from "../../core/quota/fallbackRecord.js"
import { writeFileAtomic } from "../fs/atomicWrite.js"
import { decodedFileCache, quietUnlink } from "../fs/fileCache.js"
import type { FallbackRecords } from "./sharedStateOver.js"
import { liveStateFiles } from "./stateFiles.js"

/** Records in one table, session → record (several memory "processes" may share `table`). */
export const fallbacksInMemory = (table: Map<string, FallbackRecord> = new Map()): FallbackRecords => ({
  write: (records) => Effect.sync(() => records.forEach((r) => table.set(r.session, r))),
  remove: (session) => Effect.sync(() => void table.delete(session)),
  readAll: (now) => Effect.sync(() => bySession([...table.values()].filter((r) => !isOver(r, now))))
})

/** The records over `dir` (undefined: in this process only); `clean`: files that are over may be deleted. */
export const fallbackFilesOn = (dir: string | undefined, clean: boolean): FallbackRecords => {
  if (dir === undefined) return fallbacksInMemory()
  const files = decodedFileCache<FallbackRecord | undefined>(decodeFallback)
  return {
    write: (records) =>
      Effect.sync(() => {
        for (const r of records) {
          try {
            writeFileAtomic(join(dir, fallbackFileName(r.session)), encodeFallback(r))
          } catch {
            // skipped: the status misses it until the next switch
          }
        }
      }),
    remove: (session) => Effect.sync(() => quietUnlink(join(dir, fallbackFileName(session)))),
    readAll: (now) =>
      Effect.sync(() => {
        try {
          const live = liveStateFiles(dir, FALLBACK_FILE, files, (r) => isOver(r, now), clean)
          // a file under another session's name (copied by hand) is not that session's
          return bySession(live.filter(({ name, record }) => name === fallbackFileName(record.session)).map(({ record }) => record))
        } catch {
          return []
        }
      })
  }
}
