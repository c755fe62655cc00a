/**
 * Creating a directory and its missing parents, one level at a time. Node's own recursive `mkdir`
 * never returns for a path under `/proc` (each level reports ENOENT and it starts over), which would
 * freeze the opencode process at boot; this walks up to the nearest existing ancestor, then creates
 * each missing level once, so it ends after at most one `stat` and one `mkdir` per path component.
 */
import { mkdirSync, statSync } from "node:fs"
import { dirname, resolve } from "node:path"

export interface DirProblem {
  /** The path that failed: the directory itself or the ancestor that stopped it. */
  readonly path: string
  /** The system error code (ENOENT, ENOTDIR, EACCES, …). */
  readonly code: string
}

const codeOf = (e: unknown): string => {
  const code = (e as { code?: unknown } | null)?.code
  return typeof code === "string" ? code : "EUNKNOWN"
}

/** A short human reason for a directory error code. */
export const dirReason = (code: string): string => {
  switch (code) {
    case "ENOENT":
      return "cannot be created (no such file or directory)"
    case "ENOTDIR":
      return "not a directory"
    case "EEXIST":
      return "exists and is not a directory"
    case "EACCES":
    case "EPERM":
      return "permission denied"
    case "EROFS":
      return "read-only file system"
    case "ELOOP":
      return "too many symbolic links"
    case "ENAMETOOLONG":
      return "path too long"
    case "ENOSPC":
      return "no space left on device"
    default:
      return code
  }
}

/** Creates `dir` (and missing parents) with `mode`; returns the problem when it cannot. Never throws, never loops. */
export const makeDir = (dir: string, mode = 0o700): DirProblem | undefined => {
  const missing: Array<string> = []
  let p = resolve(dir)
  for (;;) {
    try {
      if (!statSync(p).isDirectory()) return { path: p, code: missing.length === 0 ? "EEXIST" : "ENOTDIR" }
      break
    } catch (e) {
      const code = codeOf(e)
      if (code !== "ENOENT" && code !== "ENOTDIR") return { path: p, code } // ENOTDIR: keep walking up to the file in the way
      missing.push(p)
      const parent = dirname(p)
      if (parent === p) return { path: p, code } // the root itself is missing: nothing to build on
      p = parent
    }
  }
  for (let i = missing.length - 1; i >= 0; i--) {
    const level = missing[i]!
    try {
      mkdirSync(level, { mode })
    } catch (e) {
      const code = codeOf(e)
      if (code === "EEXIST") {
        try {
          if (statSync(level).isDirectory()) continue // another process made it first
        } catch {
          // a dangling link or a vanished entry: report the EEXIST
        }
      }
      return { path: level, code }
    }
  }
  return undefined
}
