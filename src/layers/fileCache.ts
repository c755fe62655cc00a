/**
 * Re-reads a file only when its size or mtime changed since the last read (SPEC §5.3 Speed): the
 * critical section reads every peer and cooldown file on every spawn, and most have not changed.
 */
import { readFileSync, statSync, unlinkSync, type Stats } from "node:fs"

export interface CachedFile<A> {
  readonly stat: Stats
  readonly value: A
}

export interface DecodedFileCache<A> {
  /** The decoded file, or `undefined` when it vanished or cannot be read. */
  readonly read: (name: string, path: string) => CachedFile<A> | undefined
  readonly forget: (name: string) => void
}

export const decodedFileCache = <A>(decode: (text: string) => A): DecodedFileCache<A> => {
  const cache = new Map<string, { size: number; mtimeMs: number; value: A }>()
  return {
    read: (name, path) => {
      let stat: Stats
      try {
        stat = statSync(path)
      } catch {
        return undefined
      }
      const hit = cache.get(name)
      if (hit !== undefined && hit.size === stat.size && hit.mtimeMs === stat.mtimeMs) return { stat, value: hit.value }
      let text: string
      try {
        text = readFileSync(path, "utf8")
      } catch {
        return undefined
      }
      const value = decode(text)
      cache.set(name, { size: stat.size, mtimeMs: stat.mtimeMs, value })
      return { stat, value }
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
