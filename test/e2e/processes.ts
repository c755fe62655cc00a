/**
 * Child processes started by the e2e harness: tracked by pid, stopped by pid (TERM, then KILL after
 * a grace period), and killed on process exit as a last resort. Nothing is ever stopped by name.
 */
import type { ChildProcess } from "node:child_process"
import { createServer } from "node:net"

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
  process.on("exit", killAllNow)
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(signal, () => {
      killAllNow()
      process.exit(128 + (signal === "SIGINT" ? 2 : signal === "SIGTERM" ? 15 : 1))
    })
  }
}

/** Remembers a child so that it is killed when this process exits, whatever happens. */
export const track = (child: ChildProcess): void => {
  installHooks()
  const pid = child.pid
  if (pid === undefined) return
  live.set(pid, child)
  child.once("exit", () => live.delete(pid))
}

export const isRunning = (child: ChildProcess): boolean => child.exitCode === null && child.signalCode === null

const waitExit = (child: ChildProcess, ms: number): Promise<boolean> =>
  new Promise((resolve) => {
    if (!isRunning(child)) return resolve(true)
    const timer = setTimeout(() => {
      child.off("exit", onExit)
      resolve(false)
    }, ms)
    const onExit = () => {
      clearTimeout(timer)
      resolve(true)
    }
    child.once("exit", onExit)
  })

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

/** A currently free TCP port on 127.0.0.1. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once("error", reject)
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address()
      const port = typeof addr === "object" && addr !== null ? addr.port : 0
      srv.close(() => (port > 0 ? resolve(port) : reject(new Error("no free port"))))
    })
  })

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

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
