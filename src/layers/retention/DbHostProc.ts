/**
 * File facts for `--vacuum` (SPEC §11.5): sizes, free space (statfs), and who else has the database
 * open, through `/proc/<pid>/fd` on Linux and `lsof -t` elsewhere (run by the process runner).
 */
import { Effect, Layer } from "effect"
import { existsSync, readdirSync, readlinkSync, realpathSync, statfsSync, statSync } from "node:fs"
import { dirname } from "node:path"
import { DbHost } from "../../services/retention/DbHost.js"
import { runArgv } from "../process/runner.js"
import { traced } from "../hotPath.js"

const sizeOf = (path: string): number => {
  try {
    return statSync(path).size
  } catch {
    return 0
  }
}

/** Bytes of the database file plus its `-wal`, 0 for a file that is gone. */
export const dbBytes = (db: string): number => sizeOf(db) + sizeOf(`${db}-wal`)

const targets = (db: string): ReadonlyArray<string> => {
  const real = realpathSync(db)
  return [real, `${real}-wal`]
}

/** Pids other than this one with a descriptor on the database or its `-wal`; undefined without /proc. */
export const openByProc = (db: string, self: number = process.pid): ReadonlyArray<number> | undefined => {
  if (!existsSync("/proc/self/fd")) return undefined
  const wanted = new Set(targets(db))
  const pids: Array<number> = []
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === self) continue
    let fds: Array<string>
    try {
      fds = readdirSync(`/proc/${entry}/fd`)
    } catch {
      continue // another user's process, or gone: it cannot hold a 0600 file of ours
    }
    for (const fd of fds) {
      try {
        if (wanted.has(readlinkSync(`/proc/${entry}/fd/${fd}`))) {
          pids.push(Number(entry))
          break
        }
      } catch {
        // the descriptor closed meanwhile
      }
    }
  }
  return pids
}

/** How long `lsof` may take before the answer is "cannot tell". */
export const LSOF_TIMEOUT_MS = 10_000
/** The most of `lsof`'s answer read (as `execFileSync`'s default buffer was): more is "cannot tell". */
const LSOF_MAX_BYTES = 1 << 20

/** Pids other than this one that `lsof -t` finds on the database or its `-wal`; undefined when it cannot check. */
export const openByLsof = (db: string, self: number = process.pid): Effect.Effect<ReadonlyArray<number> | undefined> =>
  Effect.suspend(() => {
    let files: ReadonlyArray<string>
    try {
      files = targets(db).filter((p) => existsSync(p))
    } catch {
      return Effect.succeed(undefined)
    }
    // lsof exits 1 when no process has the files open; anything else (a timeout, more than it may say) means it could not check
    return Effect.map(runArgv("lsof", ["-t", ...files], { timeoutMs: LSOF_TIMEOUT_MS, stderr: "ignore", maxBytes: LSOF_MAX_BYTES }), (r) =>
      r.truncated === true ? undefined
      : r.code === 0 ? r.stdout.split("\n").filter((l) => /^\d+$/.test(l.trim())).map(Number).filter((p) => p !== self)
      : r.code === 1 ? []
      : undefined
    )
  })

export const DbHostProc = Layer.succeed(
  DbHost,
  DbHost.of({
    bytes: traced("DbHost.bytes")((db: string) => Effect.sync(() => dbBytes(db))),
    freeBytes: traced("DbHost.freeBytes")((db: string) =>
      Effect.sync(() => {
        try {
          const s = statfsSync(dirname(db))
          return s.bavail * s.bsize
        } catch {
          return undefined
        }
      })
    ),
    openBy: traced("DbHost.openBy")((db: string) =>
      Effect.suspend(() => {
        try {
          const seen = process.platform === "linux" ? openByProc(db) : undefined
          return seen !== undefined ? Effect.succeed(seen) : openByLsof(db)
        } catch {
          return Effect.succeed(undefined)
        }
      })
    )
  })
)
