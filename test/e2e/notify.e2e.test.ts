/**
 * Desktop notifications from opencode-pool inside the real opencode 1.18.33 (offline, fake provider),
 * read back from a stand-in desktop: a private D-Bus bus with python-dbusmock's notification daemon
 * (test/real/dbus.ts), reached by the real `notify-send` and `gdbus` the plugin runs, and (US-13) by the
 * real `ssh` hop through a real sshd whose forced command is this checkout's `ocpool receive`
 * (test/real/sshd.ts). Every Notify and CloseNotification call the desktop got is counted exactly.
 * Run alone: `npm run build && npx vitest run --config vitest.e2e.config.ts test/e2e/notify.e2e.test.ts`.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "@effect/vitest"
import { execFileSync, spawn, type ChildProcess } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { shown, startDbusMock, type DbusMock, type Notify } from "../real/dbus.js"
import { shQuote } from "../real/procs.js"
import { startSshd, type Sshd } from "../real/sshd.js"
import { ensureOpencode, fakeConfig, sleep, startFakeLlm, startOpencode, type FakeLlm, type HarnessEvent, type OpencodeHandle } from "./harness.js"
import { track } from "./processes.js"
import type { PermissionRequest, QuestionRequest } from "./server.js"

const root = new URL("../../", import.meta.url).pathname
const PLUGIN = join(root, "dist/opencode-plugin.js")
const OCPOOL = join(root, "bin/ocpool.js")
const POOL = { slots: [{ model: "fakeB/pool-b", weight: 1 }] }
/** The first turn of a fresh server is slow (tool registry, provider SDK): give it room. */
const TURN_MS = 60_000
/** How long the desktop must stay unchanged before a count is final (a send is one notify-send, ~50 ms). */
const QUIET_MS = 1_500
/** How long a pending ask is left alone to show that no `done` comes while it waits. */
const HOLD_MS = 1_500
/** SPEC §1 FADE_MIN_MS: a popup is never closed sooner than this after it was raised. */
const FADE_MIN_MS = 5_000
/**
 * The plugin's raisedAt is its clock when it handled the ask; the reference here is when the ask reached
 * the harness's SSE stream, which may be this much later.
 */
const SKEW_MS = 300
/** A close over the hop is one more ssh connection and `ocpool receive` start after the 5 s. */
const HOP_MS = 5_000
/** The short host name the hop appends to every message (SPEC §10.2). */
const SHORT_HOST = hostname().split(".")[0] ?? hostname()

const DONE = "Finished — waiting for your review"
/** Urgency hint bytes (freedesktop): low 0, normal 1, critical 2. */
const NORMAL = 1
const CRITICAL = 2

let binary = ""
let fake: FakeLlm | undefined
let mock: DbusMock | undefined
let sshd: Sshd | undefined
let local: OpencodeHandle | undefined
let remote: OpencodeHandle | undefined
let receiverState = ""
/** Notify calls the mock answered before the last reset: its ids count up from 1 and survive a reset. */
let idBase = 0

const need = <A>(a: A | undefined, what: string): A => {
  if (a === undefined) throw new Error(`${what} did not start`)
  return a
}
const desk = (): DbusMock => need(mock, "the D-Bus mock")

/** No ssh session in the parent's env may leak into a server that is meant to be local. */
const NOT_REMOTE = { SSH_CONNECTION: undefined, SSH_CLIENT: undefined, SSH_TTY: undefined }

/** The popup id the mock gave the `k`-th Notify (0-based) since the last reset. */
const idOf = (k: number): number => idBase + k + 1

const resetDesk = async (): Promise<void> => {
  idBase += (await desk().notifications()).length
  await desk().reset()
  busCalls.length = 0
}

/** Waits until the desktop holds at least `n` notifications; returns them all. */
const arrived = async (n: number, timeoutMs = 20_000): Promise<Array<Notify>> => {
  const deadline = Date.now() + timeoutMs
  let notes = await desk().notifications()
  while (notes.length < n) {
    if (Date.now() > deadline) throw new Error(`expected ${n} notification(s) within ${timeoutMs} ms, got ${notes.length}: ${JSON.stringify(notes)}`)
    await sleep(100)
    notes = await desk().notifications()
  }
  return notes
}

/** Waits until the desktop holds at least `n` notifications, then until nothing changed for QUIET_MS; returns them all. */
const settle = async (n: number, timeoutMs = 20_000): Promise<Array<Notify>> => {
  let notes = await arrived(n, timeoutMs)
  for (;;) {
    await sleep(QUIET_MS)
    const again = await desk().notifications()
    if (again.length === notes.length) return again
    notes = again
  }
}

/** A Notify or CloseNotification call as `dbus-monitor` saw it on the mock's bus, with the bus's own timestamp. */
interface BusCall {
  /** Epoch ms (dbus-monitor's `time=`, microseconds on the bus). */
  readonly at: number
  readonly member: "Notify" | "CloseNotification"
  /** CloseNotification's id. */
  id?: number
}

/** What `dbus-monitor` saw since the last reset (timing only; the mock's record is the count). */
const busCalls: Array<BusCall> = []
let monitor: ChildProcess | undefined

/** Watches the Notifications interface on the mock's bus; resolves once the monitor is attached. */
const startBusWatch = (address: string): Promise<void> =>
  new Promise((resolve, reject) => {
    const child = spawn("dbus-monitor", ["--address", address, "type='method_call',interface='org.freedesktop.Notifications'"], { stdio: ["ignore", "pipe", "pipe"] })
    track(child)
    monitor = child
    let buf = ""
    let attached = false
    const timer = setTimeout(() => reject(new Error("dbus-monitor did not attach within 10 s")), 10_000)
    child.once("error", reject)
    child.stdout.on("data", (d: Buffer) => {
      if (!attached) {
        attached = true
        clearTimeout(timer)
        resolve()
      }
      buf += d.toString("utf8")
      let nl: number
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl)
        buf = buf.slice(nl + 1)
        const call = /^method call time=(\d+\.\d+) .* member=(Notify|CloseNotification)$/.exec(line)
        if (call !== null) {
          busCalls.push({ at: Math.round(Number(call[1]) * 1000), member: call[2] as BusCall["member"] })
          continue
        }
        const last = busCalls.at(-1)
        const arg = /^\s+u?int32 (\d+)$/.exec(line)
        if (arg !== null && last?.member === "CloseNotification" && last.id === undefined) last.id = Number(arg[1])
      }
    })
  })

/** The bus calls since the last reset as `Notify +ms, CloseNotification(id) +ms` after `from`. */
const busTimes = (from: number): string => busCalls.map((c) => `${c.member}${c.id === undefined ? "" : `(${c.id})`} +${c.at - from}`).join(", ")

interface CloseSeen {
  /** The ids of the CloseNotification calls the mock recorded. */
  readonly ids: ReadonlyArray<number>
  /** When the first CloseNotification was on the bus, in ms after `from`. */
  readonly afterMs: number
}

/** Waits for the first CloseNotification on the bus; its time is relative to `from`. */
const closeSeen = async (from: number, timeoutMs: number): Promise<CloseSeen> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const first = busCalls.find((c) => c.member === "CloseNotification")
    if (first !== undefined) {
      await sleep(200)
      return { ids: await desk().closes(), afterMs: first.at - from }
    }
    if (Date.now() > deadline) throw new Error(`no CloseNotification within ${timeoutMs} ms`)
    await sleep(50)
  }
}

/** The desktop's Notify and CloseNotification calls since the last reset, in order. */
const desktopOrder = async (): Promise<Array<string>> =>
  (await desk().calls()).map((c) => c.method).filter((m) => m === "Notify" || m === "CloseNotification")


const expected = (summary: string, body: string, icon: string, urgency: number, sound: string) => ({ appName: "opencode", summary, body, icon, urgency, sound })

/** The session's title as opencode has it now (the title generator may have renamed it). */
const titleOf = async (oc: OpencodeHandle, sessionId: string): Promise<string> => {
  const r = await oc.request<{ title?: string }>("GET", `/session/${encodeURIComponent(sessionId)}`)
  if (r.status !== 200 || typeof r.body?.title !== "string") throw new Error(`GET /session/${sessionId} -> ${r.status} ${JSON.stringify(r.body)}`)
  return r.body.title
}

/** The plugin's notification lines in opencode's log (`notified …`, `notification failed …`, `closed …`). */
const notifyLog = (oc: OpencodeHandle): Array<string> =>
  oc
    .readLog()
    .split("\n")
    .flatMap((l) => {
      const m = /message="((?:notified|notification|closed the popup|closing the popup|no done|no notification)[^"]*)"/.exec(l)
      return m === null ? [] : [m[1]!]
    })

const isIdle = (sessionId: string) => (e: HarnessEvent) =>
  e.properties["sessionID"] === sessionId && (e.type === "session.idle" || (e.type === "session.status" && e.properties["status"]?.type === "idle"))

const timings: Array<string> = []

beforeAll(async () => {
  const t0 = Date.now()
  execFileSync(process.execPath, [join(root, "scripts/build.mjs")], { cwd: root })
  if (!existsSync(PLUGIN) || !existsSync(OCPOOL)) throw new Error("build did not produce the plugin and the CLI")
  const built = Date.now()
  ;[binary, fake, mock] = await Promise.all([ensureOpencode(), startFakeLlm(), startDbusMock()])
  await startBusWatch(mock.address)
  receiverState = mkdtempSync(join(tmpdir(), "ocpool-e2e-receiver-"))
  sshd = await startSshd({
    forcedCommand: `${shQuote(process.execPath)} ${shQuote(OCPOOL)} receive`,
    env: { DBUS_SESSION_BUS_ADDRESS: mock.address, PATH: process.env.PATH ?? "/usr/bin:/bin", OCPOOL_STATE_DIR: receiverState }
  })
  const base = fakeConfig({ fakeUrl: fake.url })
  const configJson = fakeConfig({ fakeUrl: fake.url, extra: { permission: { ...(base["permission"] as Record<string, unknown>), bash: "ask" } } })
  const pluginPaths = [[PLUGIN, { models: POOL }]] as const
  const deps = Date.now()
  ;[local, remote] = await Promise.all([
    // the local desktop: notify-send and gdbus on PATH, the mock's bus
    startOpencode({ binary, configJson, pluginPaths, env: { ...NOT_REMOTE, ...mock.env, OCPOOL_LOG_LEVEL: "debug" } }),
    // a remote machine: an ssh session, a hop host, the sshd's `ssh` wrapper first on PATH, and no bus
    // of its own (a local popup could not reach the mock)
    startOpencode({
      binary,
      configJson,
      pluginPaths,
      env: {
        ...NOT_REMOTE,
        SSH_CONNECTION: "127.0.0.1 1 127.0.0.1 22",
        OCPOOL_NOTIFY_HOST: sshd.alias,
        PATH: `${sshd.binDir}:${process.env.PATH ?? "/usr/bin:/bin"}`,
        DBUS_SESSION_BUS_ADDRESS: undefined,
        OCPOOL_LOG_LEVEL: "debug"
      }
    })
  ])
  timings.push(`setup ${Date.now() - t0} ms (build ${built - t0}, mock+sshd ${deps - built}, two servers ${Date.now() - deps})`)
}, 240_000)

afterAll(async () => {
  console.info(`[e2e notify] ${timings.join("; ")}`)
  if (process.env.E2E_DEBUG === "1") {
    for (const oc of [local, remote]) if (oc !== undefined) console.info(`--- ${oc.logPath}\n${notifyLog(oc).join("\n")}`)
  }
  await local?.stop()
  await remote?.stop()
  await sshd?.stop()
  monitor?.kill()
  await mock?.stop()
  await fake?.stop()
  if (receiverState !== "") rmSync(receiverState, { recursive: true, force: true })
}, 60_000)

beforeEach(async () => {
  await resetDesk()
})

/** Runs a scenario and records how long it took. */
const timed = (name: string, body: () => Promise<void>) => async () => {
  const t0 = Date.now()
  try {
    await body()
  } finally {
    timings.push(`${name} ${Date.now() - t0} ms`)
  }
}

describe("notifications from the plugin in the real opencode 1.18.33, read back from a D-Bus notification daemon", () => {
  it(
    "US-11 a root session that finishes raises exactly one done popup: opencode — <its title as opencode has it>, Finished — waiting for your review, urgency normal, icon emblem-default, sound-name complete",
    timed("done", async () => {
      const oc = need(local, "opencode")
      const session = await oc.createSession()
      const mark = await oc.prompt(session.id, "finish this")
      await oc.waitIdle(session.id, mark, TURN_MS)
      const title = await titleOf(oc, session.id)

      const notes = await settle(1)
      expect(notes.map(shown)).toEqual([expected(`opencode — ${title}`, DONE, "emblem-default", NORMAL, "complete")])
      expect(notes[0]!.actions).toEqual([])
      // the title was read when the session idled: opencode's title generator had renamed it by then
      expect(await titleOf(oc, session.id)).toBe(title)
      // nothing answered, nothing typed: the popup stays
      expect(await desk().closes()).toEqual([])
      timings.push(`done: title ${JSON.stringify(title)}`)
    })
  )

  it(
    "US-11 a root session that fails ([[fake:limit-400]]) raises exactly one critical Failed popup with the error's first line, and the idle after the error raises no done",
    timed("error", async () => {
      const oc = need(local, "opencode")
      const session = await oc.createSession({ title: "US-11 failing turn" })
      const mark = await oc.prompt(session.id, "fail [[fake:limit-400]]")
      const error = await oc.waitForType("session.error", TURN_MS, { since: mark, sessionId: session.id })
      expect(error.properties["error"]).toMatchObject({ name: "APIError", data: { message: "limit reached" } })
      await oc.waitForEvent(isIdle(session.id), TURN_MS, error.i)

      const notes = await settle(1)
      expect(notes.map(shown)).toEqual([expected("opencode — US-11 failing turn", "Failed: limit reached", "dialog-error", CRITICAL, "dialog-error")])
      expect(await desk().closes()).toEqual([])
    })
  )

  it(
    "US-12 a permission ask raises one Permission needed: bash (echo probe-bash) popup and no done while it waits; after reply once the turn ends with a done, and (US-30) the permission popup is closed by id no sooner than 5 s after it was raised",
    timed("permission", async () => {
      const oc = need(local, "opencode")
      const session = await oc.createSession({ title: "US-12 permission" })
      const mark = await oc.prompt(session.id, "run it [[fake:bash]]")
      const asked = await oc.waitForType("permission.asked", TURN_MS, { since: mark, sessionId: session.id })
      const ask = asked.properties as PermissionRequest

      const first = await arrived(1)
      expect(first.map(shown)).toEqual([expected("opencode — US-12 permission", "Permission needed: bash (echo probe-bash)", "dialog-warning", NORMAL, "dialog-warning")])
      // pending: the session stays busy and no done comes (the idle rule sees the pending ask)
      await sleep(HOLD_MS)
      expect((await oc.status())[session.id]).toEqual({ type: "busy" })
      expect((await desk().notifications()).map(shown)).toEqual(first.map(shown))

      const beforeReply = oc.mark()
      const repliedAt = Date.now()
      expect(await oc.replyPermission(ask.id, "once")).toMatchObject({ status: 200, body: true })
      await oc.waitForEvent(isIdle(session.id), TURN_MS, beforeReply)
      const close = await closeSeen(asked.at, FADE_MIN_MS + 10_000)

      const notes = await settle(2)
      expect(notes.map(shown)).toEqual([
        expected("opencode — US-12 permission", "Permission needed: bash (echo probe-bash)", "dialog-warning", NORMAL, "dialog-warning"),
        expected("opencode — US-12 permission", DONE, "emblem-default", NORMAL, "complete")
      ])
      // the answered ask's popup, and only it: the done came after the answer and stays
      expect(await desktopOrder()).toEqual(["Notify", "Notify", "CloseNotification"])
      expect(close.ids).toEqual([idOf(0)])
      expect(await desk().closes()).toEqual([idOf(0)])
      // the reply came ~2 s after the ask, the done before the 5 s mark; the close waited for raisedAt + 5 s
      expect(repliedAt - asked.at).toBeLessThan(FADE_MIN_MS - 1_500)
      expect(close.afterMs).toBeGreaterThanOrEqual(FADE_MIN_MS - SKEW_MS)
      expect(close.afterMs).toBeLessThan(FADE_MIN_MS + 2_000)
      timings.push(`permission: ${busTimes(asked.at)}, replied +${repliedAt - asked.at}`)
    })
  )

  it(
    "US-12 a question raises one Question: Should the migration be reversible? popup; replying closes that popup (US-30) by its id after 5 s, and the turn's done stays",
    timed("question", async () => {
      const oc = need(local, "opencode")
      const session = await oc.createSession({ title: "US-12 question" })
      const mark = await oc.prompt(session.id, "ask [[fake:question:Should the migration be reversible?]]")
      const asked = await oc.waitForType("question.asked", TURN_MS, { since: mark, sessionId: session.id })
      const q = asked.properties as QuestionRequest

      // answered as soon as it shows, so the turn's done is up well before the close is due
      const first = await arrived(1)
      expect(first.map(shown)).toEqual([
        expected("opencode — US-12 question", "Question: Should the migration be reversible?", "dialog-information", NORMAL, "message-new-instant")
      ])

      const beforeReply = oc.mark()
      const repliedAt = Date.now()
      expect(await oc.replyQuestion(q.id, [["A"]])).toMatchObject({ status: 200, body: true })
      await oc.waitForEvent(isIdle(session.id), TURN_MS, beforeReply)
      await arrived(2)
      const close = await closeSeen(asked.at, FADE_MIN_MS + 10_000)

      const notes = await settle(2)
      expect(notes.map(shown)).toEqual([
        expected("opencode — US-12 question", "Question: Should the migration be reversible?", "dialog-information", NORMAL, "message-new-instant"),
        expected("opencode — US-12 question", DONE, "emblem-default", NORMAL, "complete")
      ])
      expect(close.ids).toEqual([idOf(0)])
      expect(await desk().closes()).toEqual([idOf(0)])
      expect(close.afterMs).toBeGreaterThanOrEqual(FADE_MIN_MS - SKEW_MS)
      expect(close.afterMs).toBeLessThan(FADE_MIN_MS + 2_000)
      // the done was up before the close, and the close left it alone
      expect(await desktopOrder()).toEqual(["Notify", "Notify", "CloseNotification"])
      timings.push(`question: ${busTimes(asked.at)}, replied +${repliedAt - asked.at}`)
    })
  )

  it(
    "US-11 US-43 a child session that finishes raises no popup of its own: the whole turn with a subagent gives exactly one notification, the root's done",
    timed("child", async () => {
      const oc = need(local, "opencode")
      const session = await oc.createSession({ title: "US-11 with a child" })
      const mark = await oc.prompt(session.id, "delegate [[task:explore:look around]]")
      const created = await oc.waitForEvent((e) => e.type === "session.created" && e.properties["info"]?.parentID === session.id, TURN_MS, mark)
      const child = String(created.properties["info"].id)
      const childIdle = await oc.waitForEvent(isIdle(child), TURN_MS, created.i)
      await oc.waitIdle(session.id, mark, TURN_MS)
      expect(childIdle.i).toBeGreaterThan(mark)
      expect(await oc.children(session.id)).toEqual([expect.objectContaining({ id: child, parentID: session.id })])

      const notes = await settle(1)
      expect(notes.map(shown)).toEqual([expected("opencode — US-11 with a child", DONE, "emblem-default", NORMAL, "complete")])
    })
  )

  it(
    "US-13 a remote opencode (SSH_CONNECTION, OCPOOL_NOTIFY_HOST) sends its question over the real ssh hop to `ocpool receive` on the desktop: title byte for byte, message plus [<short host>]; replying closes that popup (US-30) with a close payload over the hop, and the turn's done, held behind that close, stays",
    timed("remote", async () => {
      const oc = need(remote, "the remote opencode")
      const s = need(sshd, "sshd")
      const session = await oc.createSession({ title: "US-13 remote — ünïcödé \"q\" $(id)" })
      const mark = await oc.prompt(session.id, "ask [[fake:question:Should the migration be reversible?]]")
      const asked = await oc.waitForType("question.asked", TURN_MS, { since: mark, sessionId: session.id })
      const q = asked.properties as QuestionRequest
      const title = await titleOf(oc, session.id)
      expect(title).toBe("US-13 remote — ünïcödé \"q\" $(id)")

      // answered as soon as it shows, so the turn's done is raised while the close still waits out its 5 s
      const first = await arrived(1)
      expect(first.map(shown)).toEqual([
        expected(`opencode — ${title}`, `Question: Should the migration be reversible? [${SHORT_HOST}]`, "dialog-information", NORMAL, "message-new-instant")
      ])
      // it went through the forced command: sshd ran it, and the receiver remembered the popup for fade
      expect(s.log()).toContain("forced-command")
      const popups = JSON.parse(readFileSync(join(receiverState, "popups.json"), "utf8")) as unknown
      expect(JSON.stringify(popups)).toContain(`${SHORT_HOST}:${session.id}`)

      const beforeReply = oc.mark()
      const repliedAt = Date.now()
      expect(await oc.replyQuestion(q.id, [["A"]])).toMatchObject({ status: 200, body: true })
      await oc.waitForEvent(isIdle(session.id), TURN_MS, beforeReply)
      await arrived(2)
      const close = await closeSeen(asked.at, FADE_MIN_MS + 15_000)

      const notes = await settle(2)
      expect(notes.map(shown)).toEqual([
        expected(`opencode — ${title}`, `Question: Should the migration be reversible? [${SHORT_HOST}]`, "dialog-information", NORMAL, "message-new-instant"),
        expected(`opencode — ${title}`, `${DONE} [${SHORT_HOST}]`, "emblem-default", NORMAL, "complete")
      ])
      // the close names only the key, so the done raised for that root meanwhile waited for it: it stays
      expect(await desktopOrder()).toEqual(["Notify", "CloseNotification", "Notify"])
      expect(close.ids).toEqual([idOf(0)])
      expect(await desk().closes()).toEqual([idOf(0)])
      expect(close.afterMs).toBeGreaterThanOrEqual(FADE_MIN_MS - SKEW_MS)
      expect(close.afterMs).toBeLessThan(FADE_MIN_MS + HOP_MS)
      expect(notifyLog(oc).filter((l) => l.startsWith("notification failed"))).toEqual([])
      timings.push(`remote: ${busTimes(asked.at)}, replied +${repliedAt - asked.at}`)
    })
  )
})
