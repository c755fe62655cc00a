/**
 * Quota records as files in the state directory (issue 12, US-48): `quota.<enc>.json`, written whole
 * (atomicWrite.ts, mode 0600), every record the commit carries (the write throttle is decided before,
 * core/quota/write.ts). Stale and unparseable files are deleted only in a trusted directory (SPEC §2.1),
 * as cooldown files are; elsewhere they are skipped. Without a usable state directory the records live
 * in this process only. The backends' quota part (sharedStateOver.ts), named by nothing outside them.
 */
import { Effect } from "effect"
import { join } from "node:path"
import type { QuotaRecord } from "../../core/quota/record.js"
import { decodeQuota, encodeQuota, isStale, QUOTA_FILE, quotaFileName } from "../../core/quota/record.js"
import { writeFileAtomic } from "../fs/atomicWrite.js"
import { decodedFileCache } from "../fs/fileCache.js"
import type { QuotaRecords } from "./sharedStateOver.js"
import { liveStateFiles } from "./stateFiles.js"

export const byModel = (records: Iterable<QuotaRecord>): ReadonlyArray<QuotaRecord> =>
  [...records].sort((a, b) => (a.model < b.model ? -1 : a.model > b.model ? 1 : 0))

/** Records in one table (a backend in memory; several "processes" may share `table`). */
export const quotaInMemory = (table: Map<string, QuotaRecord> = new Map()): QuotaRecords => ({
  write: (records) => Effect.sync(() => records.forEach((r) => table.set(r.model, r))),
  readAll: (now) => Effect.sync(() => byModel([...table.values()].filter((r) => !isStale(r, now))))
})

/** The records over `dir` (undefined: in this process only); `clean`: stale and unreadable files may be deleted. */
export const quotaFilesOn = (dir: string | undefined, clean: boolean): QuotaRecords => {
  if (dir === undefined) return quotaInMemory()
  const files = decodedFileCache<QuotaRecord | undefined>(decodeQuota)

  const write = (records: ReadonlyArray<QuotaRecord>) =>
    Effect.sync(() => {
      for (const r of records) {
        try {
          writeFileAtomic(join(dir, quotaFileName(r.model)), encodeQuota(r))
        } catch {
          // skipped: the status misses it until the next record for the model
        }
      }
    })

  const readAll = (now: number) =>
    Effect.sync((): ReadonlyArray<QuotaRecord> => {
      let live: ReturnType<typeof liveStateFiles<QuotaRecord>>
      try {
        live = liveStateFiles(dir, QUOTA_FILE, files, (r) => isStale(r, now), clean)
      } catch {
        return []
      }
      const table = new Map<string, QuotaRecord>()
      // a file under another model's name (copied by hand) never hides the model's own
      for (const { name, record } of live) if (name === quotaFileName(record.model)) table.set(record.model, record)
      return byModel(table.values())
    })

  return { write, readAll }
}
