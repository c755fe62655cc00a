/**
 * A user's config edited in place, written back (`ocpool init`, `init --mcp`): at a symlink's target,
 * refused when read-only, its directory made first, with the file's own mode (`newFileMode` for a new one).
 */
import type { Stats } from "node:fs"
import { Effect } from "effect"
import { dirname } from "node:path"
import { isReadOnly, writeFileWithMode, writeTarget } from "../../layers/fs/atomicWrite.js"
import { dirReason, makeDir } from "../../layers/fs/dirs.js"
import { PathUnusable } from "../errors.js"

export interface WriteBack {
  /** The mode a directory made on the way gets. */
  readonly dirMode: number
  /** The mode of a file that did not exist. */
  readonly newFileMode: number
  /** Whether the directory made is the symlink target's (else the path's own). */
  readonly targetDir: boolean
}

/** Writes `bytes` to `path`; `stat` is the file's as read (`undefined` when it did not exist). */
export const writeBack = (path: string, stat: Stats | undefined, bytes: Uint8Array, w: WriteBack): Effect.Effect<void, PathUnusable> =>
  Effect.suspend(() => {
    const file = writeTarget(path)
    if (stat !== undefined && isReadOnly(file, stat)) return Effect.fail(new PathUnusable({ path, reason: `read-only (mode ${(stat.mode & 0o777).toString(8).padStart(3, "0")}); not changed` }))
    const problem = makeDir(dirname(w.targetDir ? file : path), w.dirMode)
    if (problem !== undefined) return Effect.fail(new PathUnusable({ path: problem.path, reason: dirReason(problem.code) }))
    const mode = stat !== undefined ? stat.mode & 0o777 : w.newFileMode
    return Effect.try({
      try: () => writeFileWithMode(file, bytes, mode),
      catch: (e) => new PathUnusable({ path: file, reason: dirReason((e as NodeJS.ErrnoException).code ?? String(e)) })
    })
  })
