/**
 * Child processes started by the e2e harness: tracked by pid, stopped by pid (TERM, then KILL after
 * a grace period), and killed on process exit as a last resort. Nothing is ever stopped by name.
 */
import type { ChildProcess } from "node:child_process"
import { freePort, isRunning, onProcessExit, sleep, waitExit } from "../support/children.js"

export { freePort, isRunning, sleep }

const live = new Map<number, ChildProcess>()
let hooksInstalled = false

const killAllNow = (): void => {
  for (const pid of live.keys()) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // already gone
    }
  }
  live.clear()
}

const installHooks = (): void => {
  if (hooksInstalled) return
  hooksInstalled = true
  onProcessExit(killAllNow)
}

/** Remembers a child so that it is killed when this process exits, whatever happens. */
export const track = (child: ChildProcess): void => {
  installHooks()
  const pid = child.pid
  if (pid === undefined) return
  live.set(pid, child)
  child.once("exit", () => live.delete(pid))
}

/** SIGTERM by pid, SIGKILL after `graceMs` (default 5 s); resolves once the process is gone (bounded). */
export const stopChild = async (child: ChildProcess, graceMs = 5_000): Promise<void> => {
  const pid = child.pid
  if (pid === undefined) return
  if (isRunning(child)) {
    try {
      process.kill(pid, "SIGTERM")
    } catch {
      // already gone
    }
    if (!(await waitExit(child, graceMs))) {
      try {
        process.kill(pid, "SIGKILL")
      } catch {
        // already gone
      }
      await waitExit(child, 5_000)
    }
  }
  live.delete(pid)
}

/** GET with a hard per-request timeout; true on a 2xx. Never throws. */
export const httpOk = async (url: string, timeoutMs: number): Promise<boolean> => {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) })
    await res.arrayBuffer().catch(() => undefined)
    return res.ok
  } catch {
    return false
  }
}
