/**
 * Archive and run logs under the data directory (SPEC §2.1): `$XDG_DATA_HOME/opencode-pool/` with
 * `archive/retired-sessions.jsonl` and `runs/<log>.jsonl`. Directories 0700, files 0600; every append is
 * fsynced before it returns.
 */
import { Effect, Layer } from "effect"
import { closeSync, fstatSync, fsyncSync, mkdirSync, openSync, readSync, writeSync } from "node:fs"
import { dirname, join } from "node:path"
import { RetentionLog, RetentionLogError, type RunLog } from "../services/RetentionLog.js"
import { xdgDir } from "./xdg.js"

export const defaultDataDir = (env: NodeJS.ProcessEnv = process.env): string => join(xdgDir("XDG_DATA_HOME", env), "opencode-pool")

const appendSynced = (path: string, lines: ReadonlyArray<string>) =>
  Effect.try({
    try: () => {
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
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

export const RetentionLogFile = (dataDir: string = defaultDataDir()) => {
  const archivePath = join(dataDir, "archive", "retired-sessions.jsonl")
  const runPath = (log: RunLog) => join(dataDir, "runs", `${log}.jsonl`)
  return Layer.succeed(
    RetentionLog,
    RetentionLog.of({
      archivePath,
      runPath,
      archive: (lines) => (lines.length === 0 ? Effect.void : appendSynced(archivePath, lines)),
      run: (log, line) => appendSynced(runPath(log), [line])
    })
  )
}
