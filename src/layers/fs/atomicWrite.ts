/** Writing a state file whole: a `.tmp` sibling, then a rename (SPEC §5.2). */
import { accessSync, chmodSync, constants, lstatSync, realpathSync, renameSync, statSync, unlinkSync, writeFileSync, type Stats } from "node:fs"

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

/**
 * `writeFileAtomic`, then the mode made exact: the create honours the umask, the file keeps its own
 * mode (or the one given for a new file). For files the user owns and edits (opencode's config,
 * `~/.ssh/config`).
 */
export const writeFileWithMode = (path: string, body: string | Uint8Array, mode: number): void => {
  writeFileAtomic(path, body, mode)
  if ((statSync(path).mode & 0o777) !== mode) chmodSync(path, mode)
}

/**
 * Whether `target` (with its `stat`) is a file the user should not have replaced: no write bit at all,
 * its owner's write bit off (root included, whom the permission bits do not stop), or one this user
 * may not write. A rename over it would succeed anyway, which is not what a read-only file asks for.
 */
export const isReadOnly = (target: string, st: Stats): boolean => {
  if ((st.mode & 0o222) === 0 || (process.getuid?.() === st.uid && (st.mode & 0o200) === 0)) return true
  try {
    accessSync(target, constants.W_OK)
    return false
  } catch {
    return true
  }
}
