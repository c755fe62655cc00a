/**
 * What the e2e harness (test/e2e/processes.ts) and the real-dependency harness (test/real/procs.ts)
 * share about child processes: the last-resort exit hook, whether a child still runs, waiting for its
 * exit (bounded), a pause and a free port.
 */
import type { ChildProcess } from "node:child_process"
import { createServer } from "node:net"

/** Runs `cleanup` when this process exits, and on SIGINT, SIGTERM or SIGHUP before exiting 128 + the signal's number. */
export const onProcessExit = (cleanup: () => void): void => {
  process.on("exit", cleanup)
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(signal, () => {
      cleanup()
      process.exit(128 + (signal === "SIGINT" ? 2 : signal === "SIGTERM" ? 15 : 1))
    })
  }
}

export const isRunning = (child: ChildProcess): boolean => child.exitCode === null && child.signalCode === null

/** Resolves true once `child` has exited, false after `ms`. */
export const waitExit = (child: ChildProcess, ms: number): Promise<boolean> =>
  new Promise((resolve) => {
    if (!isRunning(child)) return resolve(true)
    const timer = setTimeout(() => {
      child.off("exit", done)
      resolve(false)
    }, ms)
    const done = (): void => {
      clearTimeout(timer)
      resolve(true)
    }
    child.once("exit", done)
  })

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/** A currently free TCP port on 127.0.0.1 (the caller must cope with losing a race for it). */
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
