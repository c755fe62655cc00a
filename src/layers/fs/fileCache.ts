/**
 * Re-reads a file only when its size or mtime changed since the last read (SPEC §5.3 Speed): the
 * critical section reads every peer and cooldown file on every spawn, and most have not changed.
 * Files are read through safeRead: only regular files, at most STATE_FILE_MAX_BYTES.
 */
import { statSync, unlinkSync, type Stats } from "node:fs"
import { STATE_FILE_MAX_BYTES } from "../../core/limits.js"
import { readTextFile } from "./safeRead.js"

export interface CachedFile<A> {
  readonly stat: Stats
  readonly value: A
}

export interface DecodedFileCache<A> {
  /**
   * The decoded file, or `undefined` when it vanished, cannot be read or is not a regular file. A file
   * over the size cap decodes as an empty one would: its content is unusable.
   */
  readonly read: (name: string, path: string) => CachedFile<A> | undefined
  readonly forget: (name: string) => void
}

export const decodedFileCache = <A>(decode: (text: string) => A, maxBytes: number = STATE_FILE_MAX_BYTES): DecodedFileCache<A> => {
  const cache = new Map<string, { size: number; mtimeMs: number; value: A }>()
  return {
    read: (name, path) => {
      let stat: Stats
      try {
        stat = statSync(path)
      } catch {
        return undefined
      }
      if (!stat.isFile()) return undefined
      const hit = cache.get(name)
      if (hit !== undefined && hit.size === stat.size && hit.mtimeMs === stat.mtimeMs) return { stat, value: hit.value }
      const read = readTextFile(path, maxBytes)
      if (read._tag === "Missing" || (read._tag === "Refused" && read.tooLarge !== true)) return undefined
      const value = decode(read._tag === "Text" ? read.text : "")
      const st = read._tag === "Text" ? read.stat : stat
      cache.set(name, { size: st.size, mtimeMs: st.mtimeMs, value })
      return { stat: st, value }
    },
    forget: (name) => void cache.delete(name)
  }
}

/** Deletes a file if it is still there; another process may have deleted it first. */
export const quietUnlink = (path: string): void => {
  try {
    unlinkSync(path)
  } catch {
    // already gone
  }
}
