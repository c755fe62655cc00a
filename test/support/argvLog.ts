/**
 * Stub programs that record their argv, for tests: the `/bin/sh` line that appends one run to a log
 * (the argument count, then each argument, each ended by NUL, so any byte but NUL survives), and the
 * reader of such a log.
 */
import { existsSync, readFileSync } from "node:fs"

/** The shell line that appends this run's argv to `log`. */
export const recordArgvLine = (log: string): string => `printf '%s\\0' "$#" "$@" >> '${log}'`

/** Every run recorded in `log` (none when it does not exist), each as its argv. */
export const readArgvLog = (log: string): Array<Array<string>> => {
  if (!existsSync(log)) return []
  const parts = readFileSync(log, "utf8").split("\0")
  const out: Array<Array<string>> = []
  for (let i = 0; i < parts.length - 1; ) {
    const n = Number(parts[i])
    out.push(parts.slice(i + 1, i + 1 + n))
    i += 1 + n
  }
  return out
}
