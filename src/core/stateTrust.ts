/**
 * When a state directory may be cleaned (SPEC §2.1, §5.2): deleting other processes' dead claim files,
 * expired cooldowns and orphan `*.tmp` files is done only in a directory that is plainly this user's
 * state directory. Anywhere else the files are read, never deleted, and one warning says why.
 */

/** The state database's name in the state directory (issue 32). */
export const STATE_DB = "state.db"

/**
 * Every name a state directory holds (SPEC §2.1; issue 32): the database `state.db` with its WAL,
 * shared-memory and journal files, the files of the features that keep their own (context markers,
 * the desktop's `popups.json`), and what earlier versions left (state files, their `.tmp`, the
 * temporaries `pool.lock` was linked from, and the files imported into the database, `*.imported`).
 */
export const STATE_ENTRY =
  /^(?:state\.db(?:-wal|-shm|-journal)?|(?:(?:claims\.\d+(?:-\d+)?\.json|cooldown\.[A-Za-z0-9._-]+\.json|quota\.[A-Za-z0-9._-]+\.json|fallback\.[A-Za-z0-9._-]+\.json|context\.[A-Za-z0-9._-]+\.(?:json|queued)|pool\.lock|popups\.json|permits\.json)(?:\.tmp|\.imported)?|pool\.lock\.\d+-[0-9a-f]{1,32}\.tmp))$/

export interface StateDirFacts {
  /** `lstat` saw a symbolic link (the path itself, not its target). */
  readonly isSymlink: boolean
  readonly isDirectory: boolean
  readonly uid: number
  /** This process's uid, or `undefined` where there is none (Windows). */
  readonly ownUid: number | undefined
  /** Permission bits, `mode & 0o777`. */
  readonly mode: number
  /** The first entry that is not a state file, if any. */
  readonly stranger: string | undefined
}

export type StateDirTrust = { readonly trusted: true } | { readonly trusted: false; readonly reason: string }

const shown = (name: string): string => JSON.stringify(name.length > 60 ? `${name.slice(0, 60)}…` : name)

export const judgeStateDir = (f: StateDirFacts): StateDirTrust => {
  if (f.isSymlink) return { trusted: false, reason: "it is a symbolic link" }
  if (!f.isDirectory) return { trusted: false, reason: "not a directory" }
  if (f.ownUid !== undefined && f.uid !== f.ownUid) return { trusted: false, reason: `owned by uid ${f.uid}, not this user (${f.ownUid})` }
  if ((f.mode & 0o077) !== 0) return { trusted: false, reason: `mode ${f.mode.toString(8)}, not 700` }
  if (f.stranger !== undefined) return { trusted: false, reason: `it holds ${shown(f.stranger)}, which is not a state file` }
  return { trusted: true }
}
