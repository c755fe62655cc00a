/**
 * Cooldown records (SPEC §5.4), the backends' cooldowns part: one `cooldown.<enc>.json` per model in
 * the state directory, or one table in memory (a memory backend's, or a process's own when the state
 * directory is unusable, SPEC §2.1). A record past its decay window is over: not read, and its file
 * deleted in a trusted directory only. Synchronous file calls: they run inside the pool lock.
 */
import { Effect } from "effect"
import { join } from "node:path"
import type { Cooldown } from "../../core/cooldown.js"
import { COOLDOWN_FILE, cooldownFileName, decodeCooldown, encodeCooldown, isCooldownExpired } from "../../core/cooldownFile.js"
import { writeFileAtomic } from "../fs/atomicWrite.js"
import { decodedFileCache, quietUnlink } from "../fs/fileCache.js"
import { RecordsError, type CooldownRecords } from "./sharedStateOver.js"
import { liveStateFiles } from "./stateFiles.js"

/** Records in one table (several memory "processes" may share `table`); expired ones are dropped as they are read. */
export const cooldownsInMemory = (table: Map<string, Cooldown> = new Map()): CooldownRecords => ({
  readAll: (now) =>
    Effect.sync(() => {
      for (const [model, c] of table) if (isCooldownExpired(c, now)) table.delete(model)
      return [...table.values()]
    }),
  write: (records) => Effect.sync(() => records.forEach((r) => table.set(r.model, r))),
  remove: (model) => Effect.sync(() => void table.delete(model))
})

/** The records over `dir` (undefined: in this process only); `clean`: expired and unparseable files may be deleted. */
export const cooldownFilesOn = (dir: string | undefined, clean: boolean): CooldownRecords => {
  if (dir === undefined) return cooldownsInMemory()
  const files = decodedFileCache<Cooldown | undefined>(decodeCooldown)
  const attempt = <A>(what: string, f: () => A) => Effect.try({ try: f, catch: (e) => new RecordsError({ reason: `${what}: ${String(e)}` }) })
  return {
    readAll: (now) => attempt("reading cooldowns", () => liveStateFiles(dir, COOLDOWN_FILE, files, (c) => isCooldownExpired(c, now), clean).map(({ record }) => record)),
    write: (records) => attempt("writing cooldowns", () => records.forEach((r) => writeFileAtomic(join(dir, cooldownFileName(r.model)), encodeCooldown(r)))),
    remove: (model) => attempt("removing a cooldown", () => quietUnlink(join(dir, cooldownFileName(model))))
  }
}
