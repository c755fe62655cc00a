/** One pass over a kind of per-model state file (cooldowns, quota records): decoded through the file cache, the dead ones deleted only when allowed. */
import { readdirSync } from "node:fs"
import { join } from "node:path"
import { type DecodedFileCache, quietUnlink } from "../fs/fileCache.js"

/**
 * The usable records in the files of `dir` whose names match `pattern`, with their file names. A file
 * that does not decode, or whose record `dead` says is over, is skipped, and deleted when `clean` (a
 * trusted directory, SPEC §2.1). Throws only when `dir` cannot be listed.
 */
export const liveStateFiles = <A>(
  dir: string,
  pattern: RegExp,
  files: DecodedFileCache<A | undefined>,
  dead: (record: A) => boolean,
  clean: boolean
): ReadonlyArray<{ readonly name: string; readonly record: A }> => {
  const live: Array<{ readonly name: string; readonly record: A }> = []
  for (const name of readdirSync(dir)) {
    if (!pattern.test(name)) continue
    const path = join(dir, name)
    const cached = files.read(name, path)
    if (cached === undefined) continue
    const record = cached.value
    if (record === undefined || dead(record)) {
      if (clean) {
        quietUnlink(path)
        files.forget(name)
      }
      continue
    }
    live.push({ name, record })
  }
  return live
}
