/**
 * Archive and run logs under the data directory (SPEC §2.1): `$XDG_DATA_HOME/opencode-pool/` with
 * `archive/retired-sessions.jsonl` and `runs/<log>.jsonl`. Directories 0700, files 0600; every append is
 * fsynced before it returns.
 */
import { Effect, Layer } from "effect"
import { closeSync, fstatSync, fsyncSync, openSync, readSync, writeSync } from "node:fs"
import { dirname, join } from "node:path"
import { RetentionLog, RetentionLogError, type RunLog } from "../../services/retention/RetentionLog.js"
import { dirReason, makeDir } from "../fs/dirs.js"
import { noHomeReason, xdgDir } from "../fs/xdg.js"
import { traced } from "../hotPath.js"

/** This package's data directory under `$XDG_DATA_HOME` (or its default). */
export const dataDirUnder = (dataHome: string): string => join(dataHome, "opencode-pool")

/** `$XDG_DATA_HOME/opencode-pool`, or `undefined` when there is no home directory to default under. */
export const defaultDataDir = (env: NodeJS.ProcessEnv = process.env): string | undefined => {
  const base = xdgDir("XDG_DATA_HOME", env)
  return base === undefined ? undefined : dataDirUnder(base)
}

const appendSynced = (path: string, lines: ReadonlyArray<string>) =>
  Effect.suspend(() => {
    // created level by level: Node's recursive mkdir never returns under /proc
    const problem = makeDir(dirname(path), 0o700)
    return problem === undefined ? append(path, lines) : Effect.fail(new RetentionLogError({ path, reason: `${problem.path}: ${dirReason(problem.code)}` }))
  })

const append = (path: string, lines: ReadonlyArray<string>) =>
  Effect.try({
    try: () => {
      const fd = openSync(path, "a+", 0o600)
      try {
        // A crash mid-append can leave a line without its newline; start on a fresh line after it.
        const size = fstatSync(fd).size
        const last = Buffer.alloc(1)
        const torn = size > 0 && readSync(fd, last, 0, 1, size - 1) === 1 && last[0] !== 0x0a
        writeSync(fd, `${torn ? "\n" : ""}${lines.map((l) => `${l}\n`).join("")}`)
        fsyncSync(fd)
      } finally {
        closeSync(fd)
      }
    },
    catch: (e) => new RetentionLogError({ path, reason: (e as NodeJS.ErrnoException).code ?? String(e) })
  })

export const RetentionLogFile = (dataDir: string | undefined = defaultDataDir()) => {
  if (dataDir === undefined) {
    const fail = (path: string) => Effect.fail(new RetentionLogError({ path, reason: noHomeReason("XDG_DATA_HOME") }))
    const archivePath = join("$XDG_DATA_HOME", "opencode-pool", "archive", "retired-sessions.jsonl")
    const runPath = (log: RunLog) => join("$XDG_DATA_HOME", "opencode-pool", "runs", `${log}.jsonl`)
    return Layer.succeed(
      RetentionLog,
      RetentionLog.of({
        archivePath,
        runPath,
        archive: traced("RetentionLog.archive")((lines: ReadonlyArray<string>) => (lines.length === 0 ? Effect.void : fail(archivePath))),
        run: traced("RetentionLog.run")((log: RunLog, _line: string) => fail(runPath(log)))
      })
    )
  }
  const archivePath = join(dataDir, "archive", "retired-sessions.jsonl")
  const runPath = (log: RunLog) => join(dataDir, "runs", `${log}.jsonl`)
  return Layer.succeed(
    RetentionLog,
    RetentionLog.of({
      archivePath,
      runPath,
      archive: traced("RetentionLog.archive")((lines: ReadonlyArray<string>) => (lines.length === 0 ? Effect.void : appendSynced(archivePath, lines))),
      run: traced("RetentionLog.run")((log: RunLog, line: string) => appendSynced(runPath(log), [line]))
    })
  )
}
