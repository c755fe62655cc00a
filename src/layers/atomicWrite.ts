/** Writing a state file whole: a `.tmp` sibling, then a rename (SPEC §5.2). */
import { lstatSync, realpathSync, renameSync, unlinkSync, writeFileSync } from "node:fs"

const create = (tmp: string, body: string | Uint8Array, mode: number): void => writeFileSync(tmp, body, { mode, flag: "wx" })

/**
 * Writes `body` to `path` through `<path>.tmp`. The `.tmp` file is created exclusively: when something
 * already sits at that name (a stale file from a crash, or a link planted in a directory others can
 * write) it is removed (a link is removed, not followed) and the create is tried once more, so the
 * write never goes through a link to its target. The usual case costs no extra system call.
 */
export const writeFileAtomic = (path: string, body: string | Uint8Array, mode = 0o600): void => {
  const tmp = `${path}.tmp`
  try {
    create(tmp, body, mode)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e
    unlinkSync(tmp)
    create(tmp, body, mode)
  }
  try {
    renameSync(tmp, path)
  } catch (e) {
    // the name is taken by something a file cannot replace (a directory): leave no .tmp behind
    try {
      unlinkSync(tmp)
    } catch {
      // already gone
    }
    throw e
  }
}

/** The file a write to `path` must replace: the target of a symbolic link (a dotfiles link stays a link). */
export const writeTarget = (path: string): string => {
  try {
    return lstatSync(path).isSymbolicLink() ? realpathSync(path) : path
  } catch {
    return path
  }
}
