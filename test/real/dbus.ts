/**
 * A private D-Bus session bus with python-dbusmock's `notification_daemon` template on it: a
 * stand-in desktop notification server that records every call. Point a child at it with
 * `env: { ...process.env, ...mock.env }`; `notify-send` then talks to the mock and nothing else.
 *
 * The bus has its own minimal config (no service dirs, so nothing is ever auto-activated) and
 * listens on a socket in a temp dir. python-dbusmock is imported by the system /usr/bin/python3
 * (Debian's python3-dbusmock), not by whatever `python3` is first on PATH.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process"
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { isRunning, sleep, stopTree, trackDir, trackPid, untrackDir, watchdog } from "./procs.js"

const run = promisify(execFile)

export const NOTIFICATIONS_NAME = "org.freedesktop.Notifications"
export const NOTIFICATIONS_PATH = "/org/freedesktop/Notifications"

const PYTHON = "/usr/bin/python3"
const CALLS_SCRIPT = new URL("./mock-calls.py", import.meta.url).pathname

/** One call recorded by the mock, D-Bus values as plain JSON (strings, numbers, booleans, lists, objects). */
export interface MockCall {
  /** Unix time in seconds, as dbusmock records it. */
  readonly time: number
  readonly method: string
  readonly args: ReadonlyArray<unknown>
}

/** The hints of a Notify call; D-Bus bytes (urgency) come back as numbers. */
export interface NotifyHints {
  readonly urgency?: number
  readonly "sound-name"?: string
  readonly [hint: string]: unknown
}

/** `Notify(app_name s, replaces_id u, app_icon s, summary s, body s, actions as, hints a{sv}, expire_timeout i)`. */
export interface Notify {
  readonly time: number
  readonly appName: string
  readonly replacesId: number
  readonly icon: string
  readonly summary: string
  readonly body: string
  readonly actions: ReadonlyArray<string>
  readonly hints: NotifyHints
  readonly expireTimeout: number
}

/** What a notification looks like on the desktop (the fields a person sees and hears), for comparing whole lists. */
export const shown = (n: Notify) => ({
  appName: n.appName,
  summary: n.summary,
  body: n.body,
  icon: n.icon,
  urgency: n.hints.urgency,
  sound: n.hints["sound-name"]
})

export interface DbusMock {
  /** The bus address (`unix:path=...,guid=...`). */
  readonly address: string
  /** What a child needs to reach this bus instead of any other. */
  readonly env: { readonly DBUS_SESSION_BUS_ADDRESS: string }
  /** The temp dir (socket, config, logs); removed by stop(). */
  readonly dir: string
  /** Every call the mock recorded since start or the last reset(), oldest first. */
  calls(): Promise<Array<MockCall>>
  /** The Notify calls, parsed. */
  notifications(): Promise<Array<Notify>>
  /** The ids passed to CloseNotification. */
  closes(): Promise<Array<number>>
  /** Forgets the recorded calls (dbusmock ClearCalls; the id counter keeps going). */
  reset(): Promise<void>
  /** dbus-daemon's and dbusmock's output so far. */
  log(): string
  /** Stops dbusmock and the bus, removes `dir`. Idempotent. */
  stop(): Promise<void>
}

export interface DbusMockOptions {
  /** Readiness timeout (default 20 s). */
  readonly startTimeoutMs?: number
}

const busConfig = (socket: string): string => `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=${socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`

/** The environment for the system python: no pyenv / virtualenv variables that could redirect its imports. */
const pythonEnv = (address: string): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) if (!/^(PYTHON|PYENV|VIRTUAL_ENV|DBUS_)/.test(k)) env[k] = v
  env.DBUS_SESSION_BUS_ADDRESS = address
  env.PYTHONNOUSERSITE = "1"
  env.PYTHONIOENCODING = "utf-8"
  return env
}

const str = (v: unknown): string => (typeof v === "string" ? v : String(v))
const num = (v: unknown): number => (typeof v === "number" ? v : Number(v))

export const parseNotify = (call: MockCall): Notify => {
  const [appName, replacesId, icon, summary, body, actions, hints, expireTimeout] = call.args
  return {
    time: call.time,
    appName: str(appName),
    replacesId: num(replacesId),
    icon: str(icon),
    summary: str(summary),
    body: str(body),
    actions: Array.isArray(actions) ? actions.map(str) : [],
    hints: typeof hints === "object" && hints !== null && !Array.isArray(hints) ? (hints as NotifyHints) : {},
    expireTimeout: num(expireTimeout)
  }
}

/** Reads the first line of `child`'s stdout (the address dbus-daemon prints once it listens). */
const firstLine = (child: ChildProcess, ms: number): Promise<string> =>
  new Promise((resolve, reject) => {
    let buf = ""
    const timer = setTimeout(() => finish(new Error(`no address from dbus-daemon within ${ms} ms`)), ms)
    const onData = (d: Buffer): void => {
      buf += d.toString("utf8")
      const nl = buf.indexOf("\n")
      if (nl >= 0) finish(buf.slice(0, nl).trim())
    }
    const onExit = (): void => finish(new Error(`dbus-daemon exited (${child.exitCode ?? child.signalCode}) before printing its address`))
    const onError = (e: Error): void => finish(e)
    const finish = (r: string | Error): void => {
      clearTimeout(timer)
      child.stdout?.off("data", onData)
      child.off("exit", onExit)
      child.off("error", onError)
      // keep draining so the daemon never blocks on a full pipe
      child.stdout?.resume()
      if (typeof r === "string") resolve(r)
      else reject(r)
    }
    child.stdout?.on("data", onData)
    child.once("exit", onExit)
    child.once("error", onError)
  })

/** True when `name` has an owner on the bus at `address` (gdbus, NameHasOwner). */
export const nameHasOwner = async (address: string, name: string): Promise<boolean> => {
  try {
    const { stdout } = await run(
      "gdbus",
      ["call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus", "--method", "org.freedesktop.DBus.NameHasOwner", name],
      { env: { ...process.env, DBUS_SESSION_BUS_ADDRESS: address }, timeout: 5_000 }
    )
    return stdout.trim() === "(true,)"
  } catch {
    return false
  }
}

export const startDbusMock = async (opts: DbusMockOptions = {}): Promise<DbusMock> => {
  if (!existsSync(PYTHON)) throw new Error(`${PYTHON} not found (python3-dbusmock needs the system python; scripts/ci-real-deps.sh)`)
  const deadline = Date.now() + (opts.startTimeoutMs ?? 20_000)
  const dir = mkdtempSync(join(tmpdir(), "ocpool-dbus-"))
  trackDir(dir)
  const socket = join(dir, "bus")
  const configPath = join(dir, "bus.conf")
  const busLog = join(dir, "dbus-daemon.log")
  const mockLog = join(dir, "dbusmock.log")
  writeFileSync(configPath, busConfig(socket))

  let daemon: ChildProcess | undefined
  let mock: ChildProcess | undefined
  let stopDog: (() => void) | undefined
  let stopped = false
  const readLogs = (): string =>
    [busLog, mockLog]
      .map((p) => {
        try {
          return `--- ${p}\n${readFileSync(p, "utf8")}`
        } catch {
          return ""
        }
      })
      .join("\n")
  const stop = async (): Promise<void> => {
    if (stopped) return
    stopped = true
    stopDog?.()
    if (mock !== undefined) await stopTree(mock)
    if (daemon !== undefined) await stopTree(daemon)
    rmSync(dir, { recursive: true, force: true })
    untrackDir(dir)
  }

  try {
    const busErr = openSync(busLog, "a")
    daemon = spawn("dbus-daemon", [`--config-file=${configPath}`, "--nofork", "--nopidfile", "--print-address=1"], {
      stdio: ["ignore", "pipe", busErr]
    })
    closeSync(busErr)
    trackPid(daemon.pid)
    const address = await firstLine(daemon, Math.max(1_000, deadline - Date.now()))
    if (!address.startsWith("unix:")) throw new Error(`unexpected bus address ${JSON.stringify(address)}`)

    const out = openSync(mockLog, "a")
    mock = spawn(PYTHON, ["-m", "dbusmock", "--template", "notification_daemon"], { stdio: ["ignore", out, out], env: pythonEnv(address) })
    closeSync(out)
    trackPid(mock.pid)
    const spawnError = new Promise<Error>((resolve) => mock!.once("error", resolve))
    stopDog = watchdog([mock.pid, daemon.pid].filter((p): p is number => p !== undefined), [dir])

    for (;;) {
      if (await nameHasOwner(address, NOTIFICATIONS_NAME)) break
      if (!isRunning(mock) || !isRunning(daemon) || Date.now() > deadline) {
        throw new Error(`${NOTIFICATIONS_NAME} never appeared on the private bus:\n${readLogs()}`)
      }
      const err = await Promise.race([spawnError, sleep(50).then(() => undefined)])
      if (err !== undefined) throw err
    }

    const mockCalls = async (clear: boolean): Promise<Array<MockCall>> => {
      const { stdout } = await run(PYTHON, [CALLS_SCRIPT, address, NOTIFICATIONS_NAME, NOTIFICATIONS_PATH, ...(clear ? ["clear"] : [])], {
        env: pythonEnv(address),
        timeout: 10_000,
        maxBuffer: 64 * 1024 * 1024
      })
      return JSON.parse(stdout) as Array<MockCall>
    }
    const calls = (): Promise<Array<MockCall>> => mockCalls(false)

    return {
      address,
      env: { DBUS_SESSION_BUS_ADDRESS: address },
      dir,
      calls,
      notifications: async () => (await calls()).filter((c) => c.method === "Notify").map(parseNotify),
      closes: async () => (await calls()).filter((c) => c.method === "CloseNotification").map((c) => num(c.args[0])),
      reset: async () => {
        await mockCalls(true)
      },
      log: readLogs,
      stop
    }
  } catch (e) {
    await stop()
    throw e
  }
}
