/**
 * Process bookkeeping for the real-dependency harness (test/real): children are tracked and stopped
 * by pid (never by name), temp dirs are removed, and everything still alive is killed when this
 * process exits. A detached `sh` watchdog per service also kills it if this process dies without
 * running its exit hooks (SIGKILL of a vitest worker).
 */
import { spawn, type ChildProcess } from "node:child_process"
import { readdirSync, readFileSync, rmSync } from "node:fs"
import { connect } from "node:net"
import { freePort, isRunning, onProcessExit, sleep, waitExit } from "../support/children.js"

export { freePort, isRunning, sleep, waitExit }

const livePids = new Set<number>()
const liveDirs = new Set<string>()
let hooked = false

const kill = (pid: number, signal: NodeJS.Signals): void => {
  try {
    process.kill(pid, signal)
  } catch {
    // already gone
  }
}

const onExit = (): void => {
  for (const pid of livePids) kill(pid, "SIGKILL")
  livePids.clear()
  for (const dir of liveDirs) rmSync(dir, { recursive: true, force: true })
  liveDirs.clear()
}

const hook = (): void => {
  if (hooked) return
  hooked = true
  onProcessExit(onExit)
}

/** Killed with SIGKILL when this process exits, unless `untrackPid` was called first. */
export const trackPid = (pid: number | undefined): void => {
  if (pid === undefined) return
  hook()
  livePids.add(pid)
}
export const untrackPid = (pid: number | undefined): void => {
  if (pid !== undefined) livePids.delete(pid)
}

/** Removed (recursively) when this process exits, unless `untrackDir` was called first. */
export const trackDir = (dir: string): void => {
  hook()
  liveDirs.add(dir)
}
export const untrackDir = (dir: string): void => {
  liveDirs.delete(dir)
}

const pidAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Every live descendant of `pid` (through /proc; Linux only), deepest last. */
export const descendants = (pid: number): Array<number> => {
  const parentOf = new Map<number, Array<number>>()
  let entries: Array<string>
  try {
    entries = readdirSync("/proc")
  } catch {
    return []
  }
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8")
      // pid (comm) state ppid ...; comm may hold spaces and parentheses: split after the last ')'
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
      const list = parentOf.get(ppid) ?? []
      list.push(Number(name))
      parentOf.set(ppid, list)
    } catch {
      // gone meanwhile
    }
  }
  const out: Array<number> = []
  const walk = (p: number): void => {
    for (const c of parentOf.get(p) ?? []) {
      out.push(c)
      walk(c)
    }
  }
  walk(pid)
  return out
}

/**
 * Stops `child` and everything it started: SIGTERM to the descendants and the child, SIGKILL to
 * whatever is left after `graceMs`. Resolves once the child has exited (bounded).
 */
export const stopTree = async (child: ChildProcess, graceMs = 3_000): Promise<void> => {
  const pid = child.pid
  if (pid === undefined) return
  const kids = descendants(pid)
  for (const k of kids) kill(k, "SIGTERM")
  if (isRunning(child)) {
    kill(pid, "SIGTERM")
    if (!(await waitExit(child, graceMs))) {
      kill(pid, "SIGKILL")
      await waitExit(child, 3_000)
    }
  }
  const deadline = Date.now() + graceMs
  while (kids.some(pidAlive) && Date.now() < deadline) await sleep(20)
  for (const k of kids) if (pidAlive(k)) kill(k, "SIGKILL")
  untrackPid(pid)
}

/**
 * A detached `sh` loop that kills `pids` (TERM, then KILL) and removes `dirs` once this process is
 * gone. Returns a function that stops the watchdog (its whole process group, so its `sleep` goes
 * too).
 */
export const watchdog = (pids: ReadonlyArray<number>, dirs: ReadonlyArray<string> = []): (() => void) => {
  const list = pids.join(" ")
  const rm = dirs.length === 0 ? "" : ` rm -rf ${dirs.map(shQuote).join(" ")};`
  const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; kill -TERM ${list} 2>/dev/null; sleep 1; kill -KILL ${list} 2>/dev/null;${rm} exit 0`
  const dog = spawn("/bin/sh", ["-c", script], { detached: true, stdio: "ignore" })
  dog.unref()
  trackPid(dog.pid)
  return () => {
    if (dog.pid === undefined) return
    kill(-dog.pid, "SIGKILL")
    untrackPid(dog.pid)
  }
}

/** True when a TCP connection to host:port is accepted within `ms`. Never throws. */
export const tcpOpen = (host: string, port: number, ms: number): Promise<boolean> =>
  new Promise((resolve) => {
    const sock = connect({ host, port })
    const done = (ok: boolean): void => {
      sock.removeAllListeners()
      sock.on("error", () => undefined)
      sock.destroy()
      resolve(ok)
    }
    sock.setTimeout(ms, () => done(false))
    sock.once("connect", () => done(true))
    sock.once("error", () => done(false))
  })

/** Single-quotes `s` for a POSIX shell. */
export const shQuote = (s: string): string => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`)
