/** Process facts for the dead-holder rules (SPEC §5.2): liveness by signal 0, and the Linux start token. */
import { readFileSync } from "node:fs"

/** A pid a process can have: `kill(0, 0)` would signal this process group and `kill(-1, 0)` every process. */
const isProcessId = (pid: number): boolean => Number.isSafeInteger(pid) && pid > 0

/** `kill(pid, 0)`: ESRCH is dead, EPERM counts as alive; a pid no process can have is dead. */
export const pidState = (pid: number): "alive" | "dead" => {
  if (!isProcessId(pid)) return "dead"
  try {
    process.kill(pid, 0)
    return "alive"
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM" ? "alive" : "dead"
  }
}

/** Field 22 of /proc/<pid>/stat, counted after the closing `)` of the command name; null elsewhere. */
export const startTimeOf = (pid: number): string | null => {
  if (!isProcessId(pid)) return null
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    // fields[0] is field 3 (state), so field 22 is fields[19]
    return fields[19] ?? null
  } catch {
    return null
  }
}

/**
 * Start tokens cached for `ttlMs` per pid: the critical section checks every peer on every pick, and a
 * `/proc` read per peer is most of its cost. A dead pid is still seen at once (`kill(pid, 0)` is not
 * cached); only a pid reused by a new process is seen up to `ttlMs` later.
 */
export const startTimeCache = (ttlMs: number) => {
  const cache = new Map<number, { readonly at: number; readonly token: string | null }>()
  return (pid: number, now: number): string | null => {
    const hit = cache.get(pid)
    if (hit !== undefined && now - hit.at < ttlMs) return hit.token
    const token = startTimeOf(pid)
    if (cache.size > 4096) cache.clear()
    cache.set(pid, { at: now, token })
    return token
  }
}
