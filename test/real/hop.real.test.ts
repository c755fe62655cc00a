/**
 * Notifications end to end against real processes (test/real): this checkout's built CLI
 * (`node bin/ocpool.js`, run `npm run build` first), the real `notify-send` and `gdbus`, a private
 * D-Bus bus with python-dbusmock's notification daemon standing in for the desktop, and a real sshd
 * on 127.0.0.1 whose forced command is this checkout's `ocpool receive` (SPEC §10, US-11, US-13,
 * US-14, US-18, US-29, US-30, US-46).
 *
 * The sender and the receiver run on the same machine, so the hop is told apart from a local popup
 * by what only the hop does: it appends ` [<short hostname>]` to the message. The sender always has
 * the mock's bus and notify-send on PATH too, so a hop that fell back to a local popup would show up
 * on the mock (US-14.4).
 *
 * The same sshd also accepts a second key WITHOUT a forced command (alias `ocpool-hop-plain`): an
 * ordinary login, where sshd hands the remote command to the login shell. The hop sends its payload
 * as one shell-inert token word (docs/DECISIONS.md), so hostile texts sent there run nothing; the
 * shell only says it found no such program, and `ocpool doctor --probe` warns.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { createServer, type Server, type Socket } from "node:net"
import { hostname, tmpdir, userInfo } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { shown, startDbusMock, type DbusMock } from "./dbus.js"
import { freePort, shQuote } from "./procs.js"
import { startSshd, type Sshd } from "./sshd.js"

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..")
const OCPOOL = join(ROOT, "bin", "ocpool.js")
const SHORT_HOST = hostname().split(".")[0] ?? hostname()
/** A message as the daemon receives it: `&`, `<`, `>` escaped for the body markup (issue 18 item 10); the summary is plain. */
const asBody = (message: string): string => message.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")
const NOTIFY_TITLE = "opencode — ocpool notify"
/** The hop's single remote argument: `ocpool-notify-b64/1.` + base64url of the payload (made here with Node's own encoder). */
const TOKEN_PREFIX = "ocpool-notify-b64/1."
const tokenOf = (payload: string): string => `${TOKEN_PREFIX}${Buffer.from(payload, "utf8").toString("base64url")}`
/** What a login shell says about the token word, and nothing else: one line naming it. */
const SHELL_SAYS = /^(?:-?bash: (?:line 1: )?|sh: 1: )ocpool-notify-b64\/1\.[A-Za-z0-9_-]+: (?:No such file or directory|not found|command not found)\n$/
const PROBE_TITLE = "opencode — ocpool doctor --probe"
/** HOP_KILL_MS, plus the CLI's own start and exit. */
const HOP_BOUND_MS = 7_000 + 3_000

interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  readonly ms: number
}

/** Runs a program to the end (never throws on a non-zero exit) and times it. */
const runCmd = (file: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, cwd?: string): Promise<Ran> =>
  new Promise((done, reject) => {
    const t0 = performance.now()
    execFile(file, [...args], { env, cwd, timeout: 30_000, encoding: "utf8" }, (error, stdout, stderr) => {
      const ms = Math.round(performance.now() - t0)
      if (error !== null && typeof error.code !== "number") return reject(new Error(`${file} ${args.join(" ")}: ${String(error)}\n${stderr}`))
      done({ code: error === null ? 0 : (error.code as number), stdout, stderr, ms })
    })
  })

/** This checkout's CLI. */
const ocpool = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, cwd?: string): Promise<Ran> => runCmd(process.execPath, [OCPOOL, ...args], env, cwd)

/** The hop's ssh options (SPEC §10.5), as a hand-made sender would pass them. */
const HOP_OPTIONS = ["-T", "-o", "BatchMode=yes", "-o", "ConnectTimeout=5", "-o", "ClearAllForwardings=yes"]

const payload = (...lines: ReadonlyArray<string>): string => lines.join("\n")
const showPayload = (key: string, title: string, message: string, urgency: string, icon: string, sound: string): string =>
  payload("ocpool-notify/1", "show", key, title, message, urgency, icon, sound)
const closePayload = (key: string): string => payload("ocpool-notify/1", "close", key)

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? NaN : s.length % 2 === 1 ? s[(s.length - 1) / 2]! : Math.round((s[s.length / 2 - 1]! + s[s.length / 2]!) / 2)
}


describe("notifications through real notify-send, sshd, ocpool receive and a D-Bus notification daemon", () => {
  let sshd: Sshd | undefined
  let mock: DbusMock | undefined
  let work = ""
  /** The receiver's state dir (its popups.json). */
  let receiverState = ""
  /** The forced command and its env for the healthy desktop. */
  let forced = ""
  let forcedEnv: Record<string, string> = {}
  /** `ocpool notify --via ssh` start to exit (sender CLI + ssh + receiver CLI + notify-send). */
  const hopMs: Array<number> = []
  /** Bare `ssh <alias> <payload>` start to exit (ssh + receiver CLI + notify-send), show payloads only. */
  const sshMs: Array<number> = []

  const server = (): Sshd => {
    if (sshd === undefined) throw new Error("sshd did not start")
    return sshd
  }
  const bus = (): DbusMock => {
    if (mock === undefined) throw new Error("the dbus mock did not start")
    return mock
  }

  /**
   * The sender's environment: an SSH session (SSH_CONNECTION) on a machine that has notify-send and
   * the mock's bus, with `binPath` (an ssh wrapper dir) first on PATH, HOME and state in temp dirs.
   */
  const senderEnv = (binPath: string = server().binDir, extra: Record<string, string> = {}): NodeJS.ProcessEnv => {
    const env: NodeJS.ProcessEnv = { ...process.env }
    for (const k of ["OCPOOL_NOTIFY_HOST", "OCPOOL_SOUND", "OCPOOL_STATE_DIR", "SSH_CLIENT", "SSH_TTY", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"]) delete env[k]
    return {
      ...env,
      ...bus().env,
      PATH: `${binPath}:${process.env.PATH ?? "/usr/bin:/bin"}`,
      SSH_CONNECTION: "127.0.0.1 50000 127.0.0.1 22",
      HOME: join(work, "sender-home"),
      XDG_CONFIG_HOME: join(work, "sender-home", ".config"),
      XDG_DATA_HOME: join(work, "sender-home", ".local", "share"),
      XDG_STATE_HOME: join(work, "sender-home", ".local", "state"),
      OCPOOL_STATE_DIR: join(work, "sender-state"),
      ...extra
    }
  }

  /** The local (no SSH session) environment with the mock's bus. */
  const localEnv = (): NodeJS.ProcessEnv => {
    const env = senderEnv(server().binDir)
    delete env.SSH_CONNECTION
    return env
  }

  /** A dir with an `ssh` wrapper whose config is the test server's with another port. */
  const clientTo = (port: number, name: string): string => {
    const dir = join(work, name)
    mkdirSync(dir, { recursive: true })
    const config = join(dir, "ssh_config")
    const text = readFileSync(server().sshConfigPath, "utf8")
    expect(text).toMatch(/^ {2}Port \d+$/m)
    writeFileSync(config, text.replace(/^ {2}Port \d+$/m, `  Port ${port}`), { mode: 0o600 })
    writeFileSync(join(dir, "ssh"), `#!/bin/sh\nexec /usr/bin/ssh -F ${shQuote(config)} "$@"\n`, { mode: 0o755 })
    return dir
  }

  /** `ssh -T -o BatchMode=yes -- <alias> <payload>` through binDir's wrapper, as the hop runs it. */
  const sshSend = async (p: string | undefined): Promise<Ran> => {
    const r = await runCmd("ssh", [...HOP_OPTIONS, "--", server().alias, ...(p === undefined ? [] : [p])], senderEnv())
    if (p?.startsWith("ocpool-notify/1\nshow\n") === true && r.code === 0) sshMs.push(r.ms)
    return r
  }

  /** Hostile texts: quotes, command substitution, backticks, backslashes, é, an emoji (each within the caps, single spaces). */
  const hostile = (): Array<{ title: string; message: string }> => [
    {
      title: `"dq" 'sq' $(touch CANARY) \`touch CANARY\` C:\\temp\\new \\101 é 😀`,
      message: `He said "hi"; $(touch ${join(work, "CANARY-abs")}) \`touch ${join(work, "CANARY-tick")}\` && touch CANARY C:\\temp\\new \\101 \\\\srv\\share\\ é 😀 ✓`
    },
    {
      title: `'; touch CANARY; echo ' \\n\\t\\\\ ${"${HOME}"} é`,
      message: `C:\\temp\\new \\101 \\x41 \\0 trailing backslash \\`
    }
  ]
  /** Every place a canary could appear: the sender's cwd, the receiver's HOME and cwd (the passwd home), absolute ones. */
  const canaries = (): Array<string> => [
    join(work, "CANARY"),
    join(work, "CANARY-abs"),
    join(work, "CANARY-tick"),
    join(server().home ?? work, "CANARY"),
    join(userInfo().homedir, "CANARY"),
    join(ROOT, "CANARY")
  ]

  beforeAll(async () => {
    if (!existsSync(join(ROOT, "dist", "ocpool.cjs")) || !existsSync(join(ROOT, "dist", "cli.js"))) {
      throw new Error("dist/ is missing: run `npm run build` first")
    }
    work = mkdtempSync(join(tmpdir(), "ocpool-real-hop-"))
    receiverState = join(work, "receiver-state")
    mkdirSync(join(work, "sender-home"), { recursive: true, mode: 0o700 })
    mock = await startDbusMock()
    forced = `node ${shQuote(OCPOOL)} receive`
    forcedEnv = { ...mock.env, PATH: process.env.PATH ?? "/usr/bin:/bin", OCPOOL_STATE_DIR: receiverState }
    sshd = await startSshd({ forcedCommand: forced, env: forcedEnv, alias: "ocpool-hop-desktop", plainAlias: "ocpool-hop-plain" })
  }, 120_000)

  afterAll(async () => {
    const stats = (xs: ReadonlyArray<number>): string => `${xs.length} sends: min ${Math.min(...xs)} ms, median ${median(xs)} ms, max ${Math.max(...xs)} ms`
    if (hopMs.length > 0) console.log(`hop latency (ocpool notify --via ssh, start to exit) over ${stats(hopMs)}`)
    if (sshMs.length > 0) console.log(`ssh + ocpool receive + notify-send (bare ssh with a show payload) over ${stats(sshMs)}`)
    await sshd?.stop()
    await mock?.stop()
    if (work !== "") rmSync(work, { recursive: true, force: true })
  }, 60_000)

  beforeEach(async () => {
    await bus().reset()
    server().setForcedCommand(forced, forcedEnv)
    rmSync(receiverState, { recursive: true, force: true })
  })

  // ---------------------------------------------------------------- local

  it("US-11 / US-29 local: --kind done|question|permission|error --via local reach the daemon with the §10.2 title, message, urgency and icon, and sound-name complete, message-new-instant, dialog-warning, dialog-error", async () => {
    const m = bus()
    const kinds = ["done", "question", "permission", "error"] as const
    for (const kind of kinds) {
      const r = await ocpool(["notify", "--kind", kind, "--via", "local"], localEnv())
      expect({ kind, code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ kind, code: 0, stdout: "notification delivered via notify-send\n", stderr: "" })
    }
    expect((await m.notifications()).map(shown)).toEqual([
      { appName: "opencode", summary: NOTIFY_TITLE, body: "Finished — waiting for your review", icon: "emblem-default", urgency: 1, sound: "complete" },
      { appName: "opencode", summary: NOTIFY_TITLE, body: "Question waiting for your answer", icon: "dialog-information", urgency: 1, sound: "message-new-instant" },
      { appName: "opencode", summary: NOTIFY_TITLE, body: "Permission needed: a tool", icon: "dialog-warning", urgency: 1, sound: "dialog-warning" },
      { appName: "opencode", summary: NOTIFY_TITLE, body: "Failed", icon: "dialog-error", urgency: 2, sound: "dialog-error" }
    ])
  })

  it("US-29 local: --sound none (and OCPOOL_SOUND=off) leave out the sound-name hint; --urgency low is byte 0; explicit values win over the kind's; --json reports the delivery", async () => {
    const m = bus()
    const none = await ocpool(["notify", "--kind", "error", "--sound", "none", "--via", "local"], localEnv())
    expect(none.code).toBe(0)
    const off = await ocpool(["notify", "--kind", "done", "--via", "local"], { ...localEnv(), OCPOOL_SOUND: "off" })
    expect(off.code).toBe(0)
    const low = await ocpool(["notify", "Low one", "quiet", "--urgency", "low", "--icon", "system-run", "--sound", "question", "--via", "local", "--json"], localEnv())
    expect(low).toMatchObject({ code: 0, stderr: "" })
    expect(JSON.parse(low.stdout)).toEqual({ ok: true, channel: "notify-send", reason: null, id: null })
    const notes = await m.notifications()
    expect(notes.map(shown)).toEqual([
      { appName: "opencode", summary: NOTIFY_TITLE, body: "Failed", icon: "dialog-error", urgency: 2, sound: undefined },
      { appName: "opencode", summary: NOTIFY_TITLE, body: "Finished — waiting for your review", icon: "emblem-default", urgency: 1, sound: undefined },
      { appName: "opencode", summary: "Low one", body: "quiet", icon: "system-run", urgency: 0, sound: "message-new-instant" }
    ])
    expect(notes.slice(0, 2).every((n) => !("sound-name" in n.hints))).toBe(true)
  })

  it("US-11 / US-18.1 local: titles and messages with quotes, $(touch CANARY), backticks, backslashes (C:\\temp\\new \\101), é and an emoji arrive byte for byte (positional and --title/--message); nothing runs", async () => {
    const m = bus()
    for (const c of canaries()) expect(existsSync(c), c).toBe(false)
    const cases = hostile()
    for (const c of cases) {
      const a = await ocpool(["notify", c.title, c.message, "--via", "local"], localEnv(), work)
      expect({ code: a.code, stderr: a.stderr }).toEqual({ code: 0, stderr: "" })
      const b = await ocpool(["notify", "--title", c.title, "--message", c.message, "--via", "local"], localEnv(), work)
      expect({ code: b.code, stderr: b.stderr }).toEqual({ code: 0, stderr: "" })
    }
    expect((await m.notifications()).map((n) => [n.summary, n.body])).toEqual(cases.flatMap((c) => [[c.title, asBody(c.message)], [c.title, asBody(c.message)]]))
    for (const c of canaries()) expect(existsSync(c), c).toBe(false)
  })

  // ---------------------------------------------------------------- the hop

  it("US-13 / US-18.1 hop: `ocpool notify T M --via ssh --host <alias>` crosses a real sshd into `ocpool receive`: exit 0, the title byte for byte, the message byte for byte plus ` [<short host>]`, hostile texts never run on either side", async () => {
    const m = bus()
    const s = server()
    for (const c of canaries()) expect(existsSync(c), c).toBe(false)
    const cases = [{ title: "Build finished", message: "all 312 tests passed" }, ...hostile()]
    for (const c of cases) {
      const r = await ocpool(["notify", c.title, c.message, "--via", "ssh", "--host", s.alias], senderEnv(), work)
      expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 0, stdout: "notification delivered via ssh\n", stderr: "" })
      hopMs.push(r.ms)
    }
    const notes = await m.notifications()
    expect(notes.map((n) => [n.summary, n.body])).toEqual(cases.map((c) => [c.title, `${asBody(c.message)} [${SHORT_HOST}]`]))
    // a one-off has no kind: normal, utilities-terminal, no sound; the receiver raised it with --print-id but remembers nothing (no key)
    expect(notes.map(shown).every((n) => n.appName === "opencode" && n.urgency === 1 && n.icon === "utilities-terminal" && n.sound === undefined)).toBe(true)
    expect(existsSync(join(receiverState, "popups.json"))).toBe(false)
    for (const c of canaries()) expect(existsSync(c), c).toBe(false)
    expect(s.log()).toContain("forced-command")
  })

  it("US-13.2 / US-29 hop: --kind error, question and permission keep urgency, icon and sound hint across the hop; --via auto in an SSH session with OCPOOL_NOTIFY_HOST takes the hop", async () => {
    const m = bus()
    const s = server()
    const error = await ocpool(["notify", "--kind", "error", "--via", "ssh", "--host", s.alias], senderEnv())
    const question = await ocpool(["notify", "--kind", "question", "--message", "Should the migration be reversible?", "--via", "ssh", "--host", s.alias], senderEnv())
    const auto = await ocpool(["notify", "--kind", "permission"], senderEnv(s.binDir, { OCPOOL_NOTIFY_HOST: s.alias }))
    for (const r of [error, question, auto]) {
      expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 0, stdout: "notification delivered via ssh\n", stderr: "" })
      hopMs.push(r.ms)
    }
    expect((await m.notifications()).map(shown)).toEqual([
      { appName: "opencode", summary: NOTIFY_TITLE, body: `Failed [${SHORT_HOST}]`, icon: "dialog-error", urgency: 2, sound: "dialog-error" },
      { appName: "opencode", summary: NOTIFY_TITLE, body: `Should the migration be reversible? [${SHORT_HOST}]`, icon: "dialog-information", urgency: 1, sound: "message-new-instant" },
      { appName: "opencode", summary: NOTIFY_TITLE, body: `Permission needed: a tool [${SHORT_HOST}]`, icon: "dialog-warning", urgency: 1, sound: "dialog-warning" }
    ])
  })

  it("US-18.3 hop: a hand-built payload with urgency `low --icon=dialog-error`, icon `../x`, sound `beep` shows with urgency normal, icon utilities-terminal and no sound hint; ssh exits 0 with nothing on stdout", async () => {
    const m = bus()
    const r = await sshSend(showPayload("", "Crafted", "whitelists hold", "low --icon=dialog-error", "../x", "beep"))
    expect(r).toMatchObject({ code: 0, stdout: "", stderr: "" })
    const notes = await m.notifications()
    expect(notes.map(shown)).toEqual([{ appName: "opencode", summary: "Crafted", body: "whitelists hold", icon: "utilities-terminal", urgency: 1, sound: undefined }])
    expect("sound-name" in notes[0]!.hints).toBe(false)
  })

  it("US-18.4 / US-18.6 / US-29.4 hop: lines after the 8th are ignored; TAB and BEL in the title arrive as spaces; sounds `../../x.wav`, `$(rm -rf ~)`, `chime` are none; trimmed, upper-case whitelist values pass lower-cased", async () => {
    const m = bus()
    const ten = payload("ocpool-notify/1", "show", "", "Ten\tlines\u0007here", "body", " CRITICAL ", "Dialog-Warning", "Error ", "ninth line", "tenth line")
    expect(await sshSend(ten)).toMatchObject({ code: 0, stdout: "", stderr: "" })
    for (const sound of ["../../x.wav", "$(rm -rf ~)", "chime"]) {
      expect(await sshSend(showPayload("", `sound ${sound}`, "m", "normal", "dialog-information", sound))).toMatchObject({ code: 0, stdout: "", stderr: "" })
    }
    expect((await m.notifications()).map(shown)).toEqual([
      { appName: "opencode", summary: "Ten lines here", body: "body", icon: "dialog-warning", urgency: 2, sound: "dialog-error" },
      ...["../../x.wav", "$(rm -rf ~)", "chime"].map((sound) => ({ appName: "opencode", summary: `sound ${sound}`, body: "m", icon: "dialog-information", urgency: 1, sound: undefined }))
    ])
  })

  it("US-18.5 hop: the payload `hello world` shows as `opencode-pool: unrecognised message` / `hello world`, the receiver says it was not understood, ssh exits 0", async () => {
    const m = bus()
    const r = await sshSend("hello world")
    expect(r.code).toBe(0)
    expect(r.stdout).toBe("")
    expect(r.stderr).toBe("ocpool receive: payload not understood (11 bytes); shown as text\n")
    expect((await m.notifications()).map(shown)).toEqual([
      { appName: "opencode", summary: "opencode-pool: unrecognised message", body: "hello world", icon: "utilities-terminal", urgency: 1, sound: undefined }
    ])
  })

  it("US-18.2 hop: ssh without a command (SSH_ORIGINAL_COMMAND unset) and a blank payload show nothing and exit 0", async () => {
    const m = bus()
    const unset = await sshSend(undefined)
    expect(unset).toMatchObject({ code: 0, stdout: "" })
    expect(unset.stderr).toMatch(/^ocpool receive: no payload/)
    const blank = await sshSend("   ")
    expect(blank).toMatchObject({ code: 0, stdout: "" })
    expect(await m.calls()).toEqual([])
  })

  // ---------------------------------------------------------------- fade

  it("US-30.6 / US-30.3 fade over the hop: a show with key host1:ses_A is remembered under the id the daemon gave; a close for another key closes nothing; a close for host1:ses_A closes exactly that id once", async () => {
    const m = bus()
    // learn the daemon's id counter: its next popup gets the following id
    const probe = await runCmd("notify-send", ["--print-id", "--", "id probe", "x"], { ...process.env, ...m.env })
    expect(probe.code).toBe(0)
    const next = Number(probe.stdout.trim()) + 1
    await m.reset()

    const showA = await sshSend(showPayload("host1:ses_A", "Question in A", "answer me", "normal", "dialog-information", "question"))
    expect(showA).toMatchObject({ code: 0, stdout: "", stderr: "" })
    const showB = await sshSend(showPayload("host1:ses_B", "Done in B", "review me", "normal", "emblem-default", "done"))
    expect(showB).toMatchObject({ code: 0, stdout: "", stderr: "" })
    expect((await m.notifications()).map((n) => n.summary)).toEqual(["Question in A", "Done in B"])
    const remembered = JSON.parse(readFileSync(join(receiverState, "popups.json"), "utf8")) as { popups: Array<{ key: string; id: number }> }
    expect(remembered.popups.map((p) => [p.key, p.id])).toEqual([
      ["host1:ses_A", next],
      ["host1:ses_B", next + 1]
    ])

    // another key: nothing closed, still exit 0
    expect(await sshSend(closePayload("host1:ses_C"))).toMatchObject({ code: 0, stdout: "", stderr: "" })
    expect(await m.closes()).toEqual([])

    // A's key: A's popup, and only it
    const closeA = await sshSend(closePayload("host1:ses_A"))
    expect(closeA).toMatchObject({ code: 0, stdout: "", stderr: "" })
    expect(await m.closes()).toEqual([next])
    const left = JSON.parse(readFileSync(join(receiverState, "popups.json"), "utf8")) as { popups: Array<{ key: string; id: number }> }
    expect(left.popups.map((p) => [p.key, p.id])).toEqual([["host1:ses_B", next + 1]])

    // A again: already taken, nothing more closed
    expect(await sshSend(closePayload("host1:ses_A"))).toMatchObject({ code: 0, stdout: "" })
    expect(await m.closes()).toEqual([next])
    expect(await m.notifications()).toHaveLength(2)
  })

  // ---------------------------------------------------------------- failures

  it("US-14.3 / US-18.7 hop failure: a desktop without notify-send makes `ocpool notify --via ssh` exit 75 with `ocpool: notification not delivered via ssh: <reason naming notify-send>`; nothing is shown anywhere", async () => {
    const m = bus()
    const s = server()
    const bare = join(work, "bare-path")
    mkdirSync(bare, { recursive: true })
    rmSync(join(bare, "node"), { force: true })
    symlinkSync(process.execPath, join(bare, "node"))
    s.setForcedCommand(forced, { ...forcedEnv, PATH: bare })
    const r = await ocpool(["notify", "Nobody home", "no notify-send there", "--via", "ssh", "--host", s.alias], senderEnv())
    expect(r.code).toBe(75)
    expect(r.stdout).toBe("")
    expect(r.stderr).toMatch(/^ocpool: notification not delivered via ssh: .*notify-send.*\n$/)
    expect(r.stderr).toBe("ocpool: notification not delivered via ssh: ssh exited 75: ocpool receive: no notifier on linux: notify-send is not on PATH\n")
    expect(await m.calls()).toEqual([])
  })

  it("US-14.3 / US-14.4 hop failure: sshd stopped, a wrong port, and a port that never answers make `ocpool notify --via ssh` exit 75 within 7 s (+ slack), and notify-send on the sending host is never used", async () => {
    const m = bus()
    const s = server()
    // a second real sshd, stopped: its port refuses
    const other = await startSshd({ forcedCommand: forced, env: forcedEnv, alias: s.alias })
    const stoppedPort = other.port
    await other.stop()
    const stoppedBin = clientTo(stoppedPort, "client-stopped")
    const wrongBin = clientTo(await freePort(), "client-wrong-port")
    // a listener that accepts and never speaks: ssh waits for the banner until ConnectTimeout / HOP_KILL_MS
    const sockets = new Set<Socket>()
    const silent: Server = createServer((sock) => {
      sockets.add(sock)
      sock.on("error", () => undefined)
      sock.on("close", () => sockets.delete(sock))
    })
    await new Promise<void>((ok) => silent.listen(0, "127.0.0.1", ok))
    const silentPort = (silent.address() as { port: number }).port
    const silentBin = clientTo(silentPort, "client-silent")
    try {
      const cases: Array<[string, string]> = [
        ["sshd stopped", stoppedBin],
        ["wrong port", wrongBin],
        ["silent port", silentBin]
      ]
      for (const [what, bin] of cases) {
        const r = await ocpool(["notify", `hop down: ${what}`, "never shown", "--via", "ssh", "--host", s.alias], senderEnv(bin))
        expect({ what, code: r.code, stdout: r.stdout }).toEqual({ what, code: 75, stdout: "" })
        expect(r.stderr).toMatch(/^ocpool: notification not delivered via ssh: ssh (exited 255|timed out after 7000 ms)/)
        expect(r.ms, `${what}: ${r.ms} ms`).toBeLessThan(HOP_BOUND_MS)
        console.log(`hop down (${what}): exit ${r.code} after ${r.ms} ms: ${r.stderr.trim()}`)
      }
      // notify-send works on this host (same env, --via local), yet the failed hops showed nothing
      expect(await m.calls()).toEqual([])
      const local = await ocpool(["notify", "local works", "here", "--via", "local"], senderEnv(silentBin))
      expect(local.code).toBe(0)
      expect((await m.notifications()).map((n) => n.summary)).toEqual(["local works"])
    } finally {
      for (const sock of sockets) sock.destroy()
      await new Promise<void>((ok) => silent.close(() => ok()))
    }
  })

  // ---------------------------------------------------------------- doctor

  it("US-46 doctor --probe over the hop: in an SSH session with OCPOOL_NOTIFY_HOST=<alias>, the probe check is ok and the test notification shows; with the hop down it is fail and doctor exits 1", async () => {
    const m = bus()
    const s = server()
    const up = await ocpool(["doctor", "--probe", "--json"], senderEnv(s.binDir, { OCPOOL_NOTIFY_HOST: s.alias }))
    const upReport = JSON.parse(up.stdout) as { checks: Array<{ id: string; status: string; detail: string }>; ok: boolean }
    const check = (report: typeof upReport, id: string) => report.checks.find((c) => c.id === id)
    expect(check(upReport, "probe")).toEqual({ id: "probe", status: "ok", detail: "test notification delivered via ssh" })
    expect(check(upReport, "notifier")?.detail).toBe(`ssh to ${s.alias} (this is an SSH session)`)
    expect(check(upReport, "ssh-hop")?.detail).toBe(`host ${s.alias} (from OCPOOL_NOTIFY_HOST)`)
    // the inert probe reached ocpool receive as the forced command, and showed nothing
    expect(check(upReport, "hop-command")).toEqual({ id: "hop-command", status: "ok", detail: `${s.alias} answers with its forced command: ocpool receive read the probe` })
    expect(up.code).toBe(upReport.checks.some((c) => c.status === "fail") ? 1 : 0)
    expect((await m.notifications()).map(shown)).toEqual([
      { appName: "opencode", summary: PROBE_TITLE, body: `Test notification from ${SHORT_HOST} [${SHORT_HOST}]`, icon: "utilities-terminal", urgency: 1, sound: undefined }
    ])

    await m.reset()
    const down = await ocpool(["doctor", "--probe", "--json"], senderEnv(clientTo(await freePort(), "client-doctor-down"), { OCPOOL_NOTIFY_HOST: s.alias }))
    const downReport = JSON.parse(down.stdout) as typeof upReport
    expect(down.code).toBe(1)
    expect(downReport.ok).toBe(false)
    expect(check(downReport, "probe")?.status).toBe("fail")
    expect(check(downReport, "probe")?.detail).toMatch(/^test notification not delivered via ssh: ssh exited 255/)
    expect(check(downReport, "hop-command")).toMatchObject({ status: "warn", detail: expect.stringMatching(new RegExp(`^${s.alias} could not be probed: ssh exited 255`)) })
    expect(await m.calls()).toEqual([])
  })

  // ---------------------------------------------------------------- a host without the forced command

  it("US-18.1 / US-14.3 hop to a host WITHOUT the forced command (its login shell gets the remote command): hostile titles sent with `ocpool notify --via ssh --host <alias>` never run; the shell's whole answer is one `…: No such file or directory` line about the token; exit 127 is reported as not delivered, naming the forced-command key", async () => {
    const m = bus()
    const s = server()
    const plain = s.plainAlias!
    for (const c of canaries()) expect(existsSync(c), c).toBe(false)
    const canary = join(work, "CANARY-plain")
    const cases = [
      { title: `Which branch? $(touch ${canary})`, message: `\`touch ${canary}\`` },
      { title: `; touch ${canary}; touch CANARY`, message: `'; touch ${canary}; echo '` },
      { title: `first line\ntouch ${canary}\n$(touch CANARY)`, message: `line\n\`touch CANARY\`\ntouch ${canary}` },
      ...hostile()
    ]
    for (const c of cases) {
      const r = await ocpool(["notify", c.title, c.message, "--via", "ssh", "--host", plain], senderEnv(), work)
      // first: nothing ran (the eight lines of a plain payload would each have run in that shell)
      expect(existsSync(canary), `${c.title}: ${r.stderr}`).toBe(false)
      expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 75, stdout: "" })
      expect(r.stderr).toMatch(
        /^ocpool: notification not delivered via ssh: ssh exited 127: a login shell answered, not ocpool receive: the hop host must use the forced-command key written by ocpool tunnel setup \((?:-?bash: (?:line 1: )?|sh: 1: )ocpool-notify-b64\/1\.…: (?:No such file or directory|not found|command not found)\)\n$/
      )
      // the shell itself, given the same word by hand: one line about the token, nothing else, exit 127
      const bare = await runCmd("ssh", [...HOP_OPTIONS, "--", plain, tokenOf(["ocpool-notify/1", "show", "", c.title.replace(/\s+/g, " "), c.message.replace(/\s+/g, " "), "normal", "utilities-terminal", "none"].join("\n"))], senderEnv())
      expect({ code: bare.code, stdout: bare.stdout }).toEqual({ code: 127, stdout: "" })
      expect(bare.stderr).toMatch(SHELL_SAYS)
    }
    // nothing ran, nothing was shown (the shell has no notify-send to call, and the sender never fell back)
    expect(existsSync(canary)).toBe(false)
    for (const c of canaries()) expect(existsSync(c), c).toBe(false)
    expect(await m.calls()).toEqual([])
  })

  it("US-18.1 control: the same sshd's login shell DOES run the plain §10.6 payload sent by hand (the hole the token closes), so the test above can see an injection", async () => {
    const s = server()
    const canary = join(work, "CANARY-control")
    const r = await runCmd("ssh", [...HOP_OPTIONS, "--", s.plainAlias!, showPayload("", `Which branch? $(touch ${canary})`, "m", "normal", "utilities-terminal", "none")], senderEnv())
    try {
      expect(r.code).not.toBe(0)
      expect(existsSync(canary)).toBe(true)
    } finally {
      rmSync(canary, { force: true })
    }
  })

  it("US-46 doctor --probe against the host without the forced command: hop-command is a warning saying the hop host must use the forced-command key written by ocpool tunnel setup; the probe fails with exit 127; nothing is shown", async () => {
    const m = bus()
    const s = server()
    const r = await ocpool(["doctor", "--probe", "--json"], senderEnv(s.binDir, { OCPOOL_NOTIFY_HOST: s.plainAlias! }))
    const report = JSON.parse(r.stdout) as { checks: Array<{ id: string; status: string; detail: string }>; ok: boolean }
    const check = (id: string) => report.checks.find((c) => c.id === id)
    expect(check("hop-command")?.status).toBe("warn")
    expect(check("hop-command")?.detail).toMatch(
      new RegExp(`^${s.plainAlias!} ran the probe in a login shell, not the forced command ocpool receive \\(.*ocpool-notify-b64/1\\.…: .*\\): the hop host must use the forced-command key written by ocpool tunnel setup; otherwise notification text reaches a shell there$`)
    )
    expect(check("probe")?.status).toBe("fail")
    expect(check("probe")?.detail).toMatch(/^test notification not delivered via ssh: ssh exited 127: a login shell answered, not ocpool receive: the hop host must use the forced-command key written by ocpool tunnel setup/)
    expect(r.code).toBe(1)
    expect(await m.calls()).toEqual([])
    // in text form the warning is one line
    const text = await ocpool(["doctor", "--probe"], senderEnv(s.binDir, { OCPOOL_NOTIFY_HOST: s.plainAlias! }))
    expect(text.stdout.split("\n").filter((l) => l.includes("hop-command"))).toEqual([expect.stringMatching(/^warn hop-command +ocpool-hop-plain ran the probe in a login shell/)])
  })

  it("US-18.1 / US-18 hop with the forced command: hostile titles with newlines, $( ), backticks and `; touch` arrive on the daemon exactly as cleaned (newlines as spaces), through a token; the token of a 4,096-byte payload crosses a real sshd and shows; a 20 KiB token is refused undecoded and shown as text", async () => {
    const m = bus()
    const s = server()
    const canary = join(work, "CANARY-forced")
    const cases = [
      { title: `Which branch?\n$(touch ${canary})\n\`touch CANARY\``, message: `; touch ${canary}\r\nsecond 'line' "q" é 😀` },
      { title: `\ttabs\tand   runs ; touch CANARY`, message: `$(touch ${canary})` }
    ]
    for (const c of cases) {
      const r = await ocpool(["notify", c.title, c.message, "--via", "ssh", "--host", s.alias], senderEnv(), work)
      expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 0, stdout: "notification delivered via ssh\n", stderr: "" })
    }
    const clean = (t: string) => t.replace(/\s+/g, " ").trim()
    expect((await m.notifications()).map((n) => [n.summary, n.body])).toEqual(cases.map((c) => [clean(c.title), `${clean(c.message)} [${SHORT_HOST}]`]))
    expect(existsSync(canary)).toBe(false)
    for (const c of canaries()) expect(existsSync(c), c).toBe(false)

    await m.reset()
    // the largest payload the receiver reads, as one 5,482-character word
    const max = showPayload("", "Max size", "m".repeat(4096 - 59), "critical", "dialog-error", "error")
    expect(Buffer.byteLength(max)).toBe(4096)
    expect(tokenOf(max)).toHaveLength(5482)
    const big = await runCmd("ssh", [...HOP_OPTIONS, "--", s.alias, tokenOf(max)], senderEnv())
    expect(big).toMatchObject({ code: 0, stdout: "", stderr: "" })
    // a token over the 16 KiB cap: not decoded, shown as text (its start), exit 0
    const huge = tokenOf(showPayload("", "Too long", "y".repeat(15_000), "normal", "utilities-terminal", "none"))
    expect(huge.length).toBeGreaterThan(16_384)
    const refused = await runCmd("ssh", [...HOP_OPTIONS, "--", s.alias, huge], senderEnv())
    expect(refused).toMatchObject({ code: 0, stdout: "", stderr: `ocpool receive: payload not understood (${huge.length} bytes); shown as text\n` })
    const shownNow = (await m.notifications()).map(shown)
    expect(shownNow.map((n) => [n.summary, n.urgency, n.icon, n.sound])).toEqual([
      ["Max size", 2, "dialog-error", "dialog-error"],
      ["opencode-pool: unrecognised message", 1, "utilities-terminal", undefined]
    ])
    expect(Array.from(shownNow[0]!.body)).toHaveLength(400)
    expect(shownNow[1]!.body).toBe(`${huge.slice(0, 399)}…`)
  })
})
