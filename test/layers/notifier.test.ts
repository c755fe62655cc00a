/**
 * The notifier layers against stub programs: small shell scripts in a temp dir that is the whole PATH
 * handed to the layer (the real PATH is never touched). Each stub appends its argv, NUL-separated, to
 * `<name>.argv`, one record per run ended by \x01.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Fiber, TestClock } from "effect"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, truncateSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { closeArgs, notifySendArgs, sshArgs } from "../../src/core/notify/channel.js"
import { notificationFor, type Notification, type NotifyKind } from "../../src/core/notify/content.js"
import { HOP_KILL_MS, NOTIFY_TIMEOUT_MS, POPUP_TTL_MS } from "../../src/core/notify/limits.js"
import { decodePayload } from "../../src/core/notify/payload.js"
import { decodePopups, encodePopups, prunePopups, rememberPopup, takePopups, POPUPS_MAX } from "../../src/core/notify/popups.js"
import { makeDesktopNotifier, NotifierDesktop } from "../../src/layers/notify/NotifierDesktop.js"
import { lazyNotifier, makeNotifier, NotifierSelect, selectNotifier, type NotifierSelectOptions } from "../../src/layers/notify/NotifierSelect.js"
import { NotifierMemory, type MemoryClose, type MemorySend } from "../../src/layers/notify/NotifierMemory.js"
import { makeNoneNotifier } from "../../src/layers/notify/NotifierNone.js"
import { makeSshNotifier } from "../../src/layers/notify/NotifierSsh.js"
import { makePopupsFile, openPopupsFile } from "../../src/layers/notify/PopupsFile.js"
import { OUTPUT_MAX_BYTES, runArgv, SETTLE_MS } from "../../src/layers/process/runner.js"
import { which } from "../../src/layers/process/tools.js"
import { Notifier } from "../../src/services/notify/Notifier.js"
import { recordSpans } from "../support/spans.js"

const SLEEP = which("sleep", process.env)!
const TOUCH = which("touch", process.env)!

const tmp = () => mkdtempSync(join(tmpdir(), "ocpool-notify-"))

/** An executable `/bin/sh` script `name` in `dir`. */
const stub = (dir: string, name: string, body: string): string => {
  const path = join(dir, name)
  writeFileSync(path, `#!/bin/sh\n${body}\n`, { mode: 0o755 })
  return path
}

/** A stub that records its argv, then runs `body`. */
const recorder = (dir: string, name: string, body = "exit 0"): string => stub(dir, name, `printf '%s\\0' "$@" >> '${dir}/${name}.argv'\nprintf '\\001' >> '${dir}/${name}.argv'\n${body}`)

/** Every recorded run of `name`: its argv. */
const runsOf = (dir: string, name: string): Array<Array<string>> => {
  const path = join(dir, `${name}.argv`)
  if (!existsSync(path)) return []
  return readFileSync(path, "utf8")
    .split("\x01")
    .slice(0, -1)
    .map((rec) => rec.split("\0").slice(0, -1))
}

/** Whether `pid` is gone: no such process, or a zombie (an init that does not reap leaves those). */
const gone = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
  } catch {
    return true
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")
  } catch {
    return true
  }
}

/**
 * Whether `pid` is gone within `ms`: SIGKILL is delivered at once but the kernel finishes the exit a
 * moment later, and on a loaded machine that moment was seen to outlast the send's return.
 */
const goneWithin = async (pid: number, ms = 2_000): Promise<boolean> => {
  const until = Date.now() + ms
  while (!gone(pid)) {
    if (Date.now() > until) return false
    await new Promise((r) => setTimeout(r, 20))
  }
  return true
}

/**
 * Waits on the wall clock (the stubs are real processes, which no TestClock reaches) until `ready()`;
 * the test's clock does not move meanwhile.
 */
const realWait = (ready: () => boolean, ms = 5_000) =>
  Effect.promise(async () => {
    const until = Date.now() + ms
    while (!ready()) {
      if (Date.now() > until) throw new Error("timed out waiting for a stub")
      await new Promise((r) => setTimeout(r, 10))
    }
  })

/** Waits until `n` sleeps are pending on the TestClock: the run's deadline, and its settle once the child exited. */
const pendingSleeps = (n: number) =>
  Effect.gen(function* () {
    for (let i = 0; i < 1_000; i++) {
      if (Chunk.size(yield* TestClock.sleeps()) >= n) return
      yield* Effect.promise(() => new Promise((r) => setTimeout(r, 5)))
    }
    return yield* Effect.die(new Error(`fewer than ${n} sleeps pending`))
  })

/** The environment handed to the layers: the stub dir is the whole PATH. */
const envOf = (dir: string, extra: Record<string, string> = {}) => ({ PATH: dir, HOME: dir, ...extra })

const note = (over: Partial<Notification> = {}): Notification => ({ ...notificationFor("done", { sessionTitle: "Fix login" }, true), ...over })

const live = (dir: string, over: Partial<NotifierSelectOptions> = {}): NotifierSelectOptions => ({
  via: "auto",
  notifyHost: undefined,
  fade: false,
  env: envOf(dir),
  platform: "linux",
  home: dir,
  hostname: "box.example.org",
  ...over
})

const send = (n: Notification, key = "ses_1") => Effect.flatMap(Notifier, (s) => s.send(n, key))

describe("runArgv: argv only, bounded in time, never failing", () => {
  it.effect("US-11 a missing program is a spawn error naming it, not a failure", () =>
    Effect.gen(function* () {
      const r = yield* runArgv(join(tmp(), "nope"), [], { timeoutMs: 1000 })
      expect(r).toMatchObject({ code: null, timedOut: false })
      expect(r.spawnError).toMatch(/nope not found$/)
    })
  )

  it.effect("US-11 exit code, stdout, stderr and stdin come back; output is capped at 64 KiB", () =>
    Effect.gen(function* () {
      const dir = tmp()
      const cat = which("cat", process.env)!
      const head = which("head", process.env)!
      stub(dir, "talk", `${cat}\necho oops >&2\n${head} -c 200000 /dev/zero\nexit 3`)
      const r = yield* runArgv(join(dir, "talk"), [], { timeoutMs: 5000, input: "hello\n" })
      expect(r.code).toBe(3)
      expect(r.timedOut).toBe(false)
      expect(r.stdout.startsWith("hello\n")).toBe(true)
      expect(Buffer.byteLength(r.stdout)).toBe(OUTPUT_MAX_BYTES)
      expect(r.stderr).toBe("oops\n")
    })
  )

  it.effect("US-11 interruption kills the process group", () =>
    Effect.gen(function* () {
      const dir = tmp()
      stub(dir, "slow", `${SLEEP} 60 &\necho $! > '${dir}/child.pid'\nwait`)
      const fiber = yield* Effect.fork(runArgv(join(dir, "slow"), [], { timeoutMs: 60_000 }))
      yield* realWait(() => existsSync(join(dir, "child.pid")) && readFileSync(join(dir, "child.pid"), "utf8").endsWith("\n"))
      yield* Fiber.interrupt(fiber)
      const pid = Number(readFileSync(join(dir, "child.pid"), "utf8"))
      expect(yield* Effect.promise(() => goneWithin(pid))).toBe(true)
    })
  )

  it.effect("US-11 something that leaves the group and holds the pipes open cannot hold up the answer", () =>
    Effect.gen(function* () {
      const dir = tmp()
      const setsid = which("setsid", process.env)!
      stub(dir, "escape", `${setsid} ${SLEEP} 60 &\necho $! > '${dir}/child.pid'\necho started\nexit 0`)
      const quick = yield* Effect.fork(runArgv(join(dir, "escape"), [], { timeoutMs: 5_000 }))
      // exited, the pipes held: the deadline and the settle are pending; SETTLE_MS later the answer is there
      yield* pendingSleeps(2)
      yield* TestClock.adjust(SETTLE_MS)
      expect(yield* Fiber.join(quick)).toMatchObject({ code: 0, timedOut: false, stdout: "started\n" })
      stub(dir, "stuck", `${setsid} ${SLEEP} 60 &\necho $! > '${dir}/stuck.pid'\ntrap '' TERM\n${SLEEP} 60`)
      const slow = yield* Effect.fork(runArgv(join(dir, "stuck"), [], { timeoutMs: 500 }))
      yield* realWait(() => existsSync(join(dir, "stuck.pid")))
      yield* TestClock.adjust(500)
      yield* TestClock.adjust(SETTLE_MS)
      expect(yield* Fiber.join(slow)).toMatchObject({ code: null, timedOut: true })
      for (const f of ["child.pid", "stuck.pid"]) {
        try {
          process.kill(Number(readFileSync(join(dir, f), "utf8")), "SIGKILL")
        } catch {
          // already gone
        }
      }
    })
  )

  it.effect("US-11 which finds only absolute, executable, regular files on the given PATH", () =>
    Effect.sync(() => {
      const dir = tmp()
      const exe = stub(dir, "tool", "exit 0")
      writeFileSync(join(dir, "plain"), "x", { mode: 0o644 })
      expect(which("tool", { PATH: `relative:${dir}` })).toBe(exe)
      expect(which("plain", { PATH: dir })).toBeUndefined()
      expect(which("tool", { PATH: "" })).toBeUndefined()
      expect(which(exe, { PATH: "" })).toBe(exe)
    })
  )
})

describe("desktop notifier (SPEC §10.5)", () => {
  it.effect("US-11 Linux: title and message are separate argv entries after --", () =>
    Effect.gen(function* () {
      const dir = tmp()
      recorder(dir, "notify-send")
      const n = note()
      const d = yield* send(n).pipe(Effect.provide(NotifierDesktop({ platform: "linux", env: envOf(dir), fade: false })))
      expect(d).toEqual({ ok: true, channel: "notify-send" })
      const [argv] = runsOf(dir, "notify-send")
      expect(argv).toEqual([...notifySendArgs(n, false)])
      expect(argv!.slice(argv!.indexOf("--") + 1)).toEqual(["opencode — Fix login", "Finished — waiting for your review"])
      expect(argv).not.toContain("--print-id")
    })
  )

  it.effect("US-11 Linux: a non-zero exit is a failure with the reason", () =>
    Effect.gen(function* () {
      const dir = tmp()
      recorder(dir, "notify-send", "echo 'GDBus.Error: could not connect: no such file' >&2\necho second line >&2\nexit 1")
      const d = yield* send(note()).pipe(Effect.provide(NotifierDesktop({ platform: "linux", env: envOf(dir), fade: false })))
      expect(d).toEqual({ ok: false, channel: "notify-send", reason: "notify-send exited 1: GDBus.Error: could not connect: no such file" })
    })
  )

  it.effect("US-11 Linux: notify-send missing from PATH is `notify-send not found`", () =>
    Effect.gen(function* () {
      const d = yield* makeDesktopNotifier({ platform: "linux", env: envOf(tmp()), fade: false }).send(note(), "ses_1")
      expect(d).toEqual({ ok: false, channel: "notify-send", reason: "notify-send not found" })
    })
  )

  it.effect("US-11 macOS: the message arrives as its own argv entry, unchanged, and nothing runs", () =>
    Effect.gen(function* () {
      const dir = tmp()
      const canary = join(dir, "canary")
      recorder(dir, "osascript")
      const message = 'He said "hi"; $(id) `id`'
      const title = `opencode — $(${TOUCH} ${canary}) \`${TOUCH} ${canary}\``
      const d = yield* send(note({ title, message })).pipe(Effect.provide(NotifierDesktop({ platform: "darwin", env: envOf(dir), fade: true })))
      expect(d).toEqual({ ok: true, channel: "osascript" })
      const [argv] = runsOf(dir, "osascript")
      expect(argv).toEqual([
        "-e",
        "on run argv",
        "-e",
        "display notification (item 2 of argv) with title (item 1 of argv) sound name (item 3 of argv)",
        "-e",
        "end run",
        title,
        message,
        "Glass"
      ])
      expect(existsSync(canary)).toBe(false)
    })
  )

  it.effect("US-11 a notifier that sleeps 60 s fails at 5 s, and what it started is killed", () =>
    Effect.gen(function* () {
      const dir = tmp()
      stub(dir, "notify-send", `trap '' TERM HUP INT\n${SLEEP} 60 &\necho $! > '${dir}/child.pid'\n${SLEEP} 60`)
      const fiber = yield* Effect.fork(makeDesktopNotifier({ platform: "linux", env: envOf(dir), fade: false }).send(note(), "ses_1"))
      yield* realWait(() => existsSync(join(dir, "child.pid")) && readFileSync(join(dir, "child.pid"), "utf8").endsWith("\n"))
      yield* TestClock.adjust(NOTIFY_TIMEOUT_MS - 1)
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust(1)
      yield* TestClock.adjust(SETTLE_MS)
      const d = yield* Fiber.join(fiber)
      expect(d).toEqual({ ok: false, channel: "notify-send", reason: "notify-send timed out after 5000 ms" })
      const pid = Number(readFileSync(join(dir, "child.pid"), "utf8"))
      expect(yield* Effect.promise(() => goneWithin(pid))).toBe(true)
    })
  )

  it.effect("US-11 a send and a close are the spans Notifier.send and Notifier.close", () =>
    Effect.gen(function* () {
      const dir = tmp()
      recorder(dir, "notify-send")
      recorder(dir, "gdbus")
      const spans = recordSpans()
      const notifier = makeDesktopNotifier({ platform: "linux", env: envOf(dir), fade: true })
      yield* Effect.zipRight(notifier.send(note(), "ses_1"), notifier.close("ses_1", [1])).pipe(Effect.withTracer(spans.tracer))
      expect(spans.names()).toEqual(["Notifier.send", "Notifier.close"])
      expect(spans.spans.every((s) => s.exit?._tag === "Success")).toBe(true)
    })
  )

  it.effect("US-29 the sound hint of each kind reaches notify-send's argv", () =>
    Effect.gen(function* () {
      const dir = tmp()
      recorder(dir, "notify-send")
      const notifier = makeDesktopNotifier({ platform: "linux", env: envOf(dir), fade: false })
      const kinds: ReadonlyArray<NotifyKind> = ["done", "question", "permission", "error"]
      for (const kind of kinds) yield* notifier.send(notificationFor(kind, {}, true), "ses_1")
      yield* notifier.send(notificationFor("done", {}, false), "ses_1")
      const hints = runsOf(dir, "notify-send").map((argv) => argv.filter((a) => a.startsWith("--hint=")))
      expect(hints).toEqual([
        ["--hint=string:sound-name:complete"],
        ["--hint=string:sound-name:message-new-instant"],
        ["--hint=string:sound-name:dialog-warning"],
        ["--hint=string:sound-name:dialog-error"],
        []
      ])
    })
  )
})

describe("channel selection (SPEC §10.5)", () => {
  it.effect("US-11 no notifier on the platform: {ok:false, channel:none} with a reason, nothing throws", () =>
    Effect.gen(function* () {
      const dir = tmp()
      const d = yield* send(note()).pipe(Effect.provide(NotifierSelect(live(dir))))
      expect(d).toEqual({ ok: false, channel: "none", reason: "no notifier on linux: notify-send is not on PATH" })
      const w = yield* makeNotifier(live(dir, { platform: "win32" })).send(note(), "ses_1")
      expect(w).toEqual({ ok: false, channel: "none", reason: "no notifier on win32" })
      expect(yield* makeNoneNotifier("off").close("ses_1", [1])).toEqual({ ok: false, channel: "none", reason: "off" })
    })
  )

  it.effect("US-11 a local session with notify-send on PATH selects notify-send", () =>
    Effect.sync(() => {
      const dir = tmp()
      recorder(dir, "notify-send")
      expect(selectNotifier(live(dir))).toEqual({ channel: "notify-send" })
      expect(selectNotifier(live(dir, { via: "none" }))).toMatchObject({ channel: "none" })
    })
  )

  it.effect("US-13 a remote session with no hop host: no ssh runs and the reason names ocpool tunnel setup", () =>
    Effect.gen(function* () {
      const dir = tmp()
      recorder(dir, "ssh")
      recorder(dir, "notify-send")
      const d = yield* makeNotifier(live(dir, { env: envOf(dir, { SSH_CONNECTION: "10.0.0.2 5000 10.0.0.1 22" }) })).send(note(), "ses_1")
      expect(d).toMatchObject({ ok: false, channel: "none" })
      expect(d.reason).toContain("ocpool tunnel setup")
      expect(runsOf(dir, "ssh")).toEqual([])
      expect(runsOf(dir, "notify-send")).toEqual([])
    })
  )

  it.effect("US-13 building the selecting notifier reads nothing: the channel is selected at the first use, then kept", () =>
    Effect.gen(function* () {
      const dir = tmp()
      const notifier = yield* Effect.provide(Notifier, NotifierSelect(live(dir, { env: envOf(dir, { SSH_TTY: "/dev/pts/3" }) })))
      // written after the layer was built, before the first use: the selection sees it
      mkdirSync(join(dir, ".ssh"))
      writeFileSync(join(dir, ".ssh", "config"), "Host ocpool-desktop\n  HostName desk.lan\n")
      recorder(dir, "ssh")
      expect(notifier.channel).toBe("ssh")
      writeFileSync(join(dir, ".ssh", "config"), "")
      expect(yield* notifier.send(note(), "ses_1")).toEqual({ ok: true, channel: "ssh" })
      expect(runsOf(dir, "ssh")[0]).toContain("ocpool-desktop")
      expect(lazyNotifier(live(tmp())).channel).toBe("none")
    })
  )

  it.effect("US-13 the alias ocpool-desktop in ~/.ssh/config is the hop host; OCPOOL_NOTIFY_HOST wins over notifyHost", () =>
    Effect.sync(() => {
      const dir = tmp()
      const remote = { SSH_TTY: "/dev/pts/3" }
      expect(selectNotifier(live(dir, { env: envOf(dir, remote) }))).toMatchObject({ channel: "none" })
      mkdirSync(join(dir, ".ssh"))
      writeFileSync(join(dir, ".ssh", "config"), "Host other\n  HostName x\n\nHost ocpool-desktop\n  HostName desk.lan\n")
      expect(selectNotifier(live(dir, { env: envOf(dir, remote) }))).toEqual({ channel: "ssh", host: "ocpool-desktop" })
      expect(selectNotifier(live(dir, { env: envOf(dir, remote), notifyHost: "opt" }))).toEqual({ channel: "ssh", host: "opt" })
      expect(selectNotifier(live(dir, { env: envOf(dir, { ...remote, OCPOOL_NOTIFY_HOST: "envhost" }), notifyHost: "opt" }))).toEqual({ channel: "ssh", host: "envhost" })
    })
  )
})

describe("ssh hop (SPEC §10.5, §10.6)", () => {
  const remoteEnv = (dir: string) => envOf(dir, { SSH_CONNECTION: "10.0.0.2 5000 10.0.0.1 22", OCPOOL_NOTIFY_HOST: "desk" })

  it.effect("US-13 ssh receives BatchMode, ConnectTimeout=5, ClearAllForwardings and exactly one argument after the host", () =>
    Effect.gen(function* () {
      const dir = tmp()
      recorder(dir, "ssh")
      const n = note({ kind: "question", message: "Question: Ship it?", sound: "question", icon: "dialog-information" })
      const d = yield* send(n, "ses_1").pipe(Effect.provide(NotifierSelect(live(dir, { env: remoteEnv(dir) }))))
      expect(d).toEqual({ ok: true, channel: "ssh" })
      const [argv] = runsOf(dir, "ssh")
      expect(argv!.slice(0, 9)).toEqual(["-T", "-o", "BatchMode=yes", "-o", "ConnectTimeout=5", "-o", "ClearAllForwardings=yes", "--", "desk"])
      expect(argv).toHaveLength(10)
      expect(decodePayload(argv![9])).toEqual({
        _tag: "Show",
        key: "box:ses_1",
        title: "opencode — Fix login",
        message: "Question: Ship it? [box]",
        urgency: "normal",
        icon: "dialog-information",
        sound: "question"
      })
    })
  )

  it.effect("US-13 the payload, once received, gives notify-send the same title, message, urgency, icon and sound", () =>
    Effect.gen(function* () {
      const dir = tmp()
      recorder(dir, "ssh")
      recorder(dir, "notify-send")
      const n = notificationFor("error", { sessionTitle: "Deploy", errorMessage: "boom\nstack" }, true)
      yield* makeSshNotifier({ host: "desk", shortHost: "box", env: envOf(dir) }).send(n, "ses_9")
      const got = decodePayload(runsOf(dir, "ssh")[0]![9])
      if (got._tag !== "Show") throw new Error(`not a show payload: ${got._tag}`)
      yield* makeDesktopNotifier({ platform: "linux", env: envOf(dir), fade: false }).send({ ...got, kind: "custom" }, got.key)
      expect(runsOf(dir, "notify-send")[0]).toEqual([...notifySendArgs({ ...n, message: `${n.message} [box]` }, false)])
    })
  )

  it.effect("US-14 the receiver's complaint (exit 75, `no notifier …`) is the failure reason; ssh's own errors too", () =>
    Effect.gen(function* () {
      const dir = tmp()
      recorder(dir, "ssh", "echo \"Warning: Permanently added 'desk' (ED25519) to the list of known hosts.\" >&2\necho 'ocpool receive: no notifier on linux: notify-send is not on PATH' >&2\nexit 75")
      const hop = makeSshNotifier({ host: "desk", shortHost: "box", env: envOf(dir) })
      expect(yield* hop.send(note(), "ses_1")).toEqual({ ok: false, channel: "ssh", reason: "ssh exited 75: ocpool receive: no notifier on linux: notify-send is not on PATH" })
      const other = tmp()
      recorder(other, "ssh", "echo 'ssh: connect to host desk port 22: Connection refused' >&2\nexit 255")
      const refused = yield* makeSshNotifier({ host: "desk", shortHost: "box", env: envOf(other) }).send(note(), "ses_1")
      expect(refused).toEqual({ ok: false, channel: "ssh", reason: "ssh exited 255: ssh: connect to host desk port 22: Connection refused" })
      expect(yield* makeSshNotifier({ host: "desk", shortHost: "box", env: envOf(tmp()) }).send(note(), "ses_1")).toEqual({ ok: false, channel: "ssh", reason: "ssh not found" })
    })
  )

  it.effect("US-14 an ssh that never exits fails at 7 s, without throwing", () =>
    Effect.gen(function* () {
      const dir = tmp()
      stub(dir, "ssh", `trap '' TERM HUP INT\n${TOUCH} '${dir}/started'\nwhile :; do ${SLEEP} 1; done`)
      const fiber = yield* Effect.fork(send(note()).pipe(Effect.provide(NotifierSelect(live(dir, { env: remoteEnv(dir) })))))
      yield* realWait(() => existsSync(join(dir, "started")))
      yield* TestClock.adjust(HOP_KILL_MS - 1)
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust(1)
      yield* TestClock.adjust(SETTLE_MS)
      expect(yield* Fiber.join(fiber)).toEqual({ ok: false, channel: "ssh", reason: `ssh timed out after ${HOP_KILL_MS} ms` })
    })
  )

  it.effect("US-14 a failing hop on a host with notify-send never calls notify-send", () =>
    Effect.gen(function* () {
      const dir = tmp()
      recorder(dir, "ssh", "echo 'ssh: Could not resolve hostname desk' >&2\nexit 255")
      recorder(dir, "notify-send")
      recorder(dir, "gdbus")
      const notifier = makeNotifier(live(dir, { env: remoteEnv(dir), fade: true }))
      expect(notifier.channel).toBe("ssh")
      const d = yield* notifier.send(note(), "ses_1")
      expect(d).toMatchObject({ ok: false, channel: "ssh" })
      yield* notifier.close("ses_1", [7])
      expect(runsOf(dir, "ssh")).toHaveLength(2)
      expect(runsOf(dir, "notify-send")).toEqual([])
      expect(runsOf(dir, "gdbus")).toEqual([])
    })
  )
})

describe("fade (SPEC §10.8)", () => {
  it.effect("US-30 with fade on, notify-send is asked for the id and the printed id comes back", () =>
    Effect.gen(function* () {
      const dir = tmp()
      recorder(dir, "notify-send", "echo 42")
      const d = yield* makeDesktopNotifier({ platform: "linux", env: envOf(dir), fade: true }).send(note(), "ses_1")
      expect(d).toEqual({ ok: true, channel: "notify-send", id: 42 })
      expect(runsOf(dir, "notify-send")[0]).toContain("--print-id")
    })
  )

  it.effect("US-30 close runs gdbus CloseNotification with each id", () =>
    Effect.gen(function* () {
      const dir = tmp()
      recorder(dir, "gdbus", "echo '()'")
      const notifier = makeDesktopNotifier({ platform: "linux", env: envOf(dir), fade: true })
      expect(yield* notifier.close("ses_1", [42, 43])).toEqual({ ok: true, channel: "notify-send" })
      const runs = runsOf(dir, "gdbus")
      expect(runs).toEqual([[...closeArgs(42)], [...closeArgs(43)]])
      expect(runs[0]).toContain("org.freedesktop.Notifications.CloseNotification")
      expect(runs[0]!.at(-1)).toBe("42")
      const missing = yield* makeDesktopNotifier({ platform: "linux", env: envOf(tmp()), fade: true }).close("ses_1", [42])
      expect(missing).toEqual({ ok: false, channel: "notify-send", reason: "closing popup 42: gdbus not found" })
    })
  )

  it.effect("US-30 on macOS fade is unsupported", () =>
    Effect.gen(function* () {
      const d = yield* makeDesktopNotifier({ platform: "darwin", env: envOf(tmp()), fade: true }).close("ses_1", [1])
      expect(d).toEqual({ ok: false, channel: "osascript", reason: "fade is unsupported on macOS" })
    })
  )

  it.effect("US-30 a remote close sends a close payload for <short host>:<root>", () =>
    Effect.gen(function* () {
      const dir = tmp()
      recorder(dir, "ssh")
      const d = yield* makeSshNotifier({ host: "desk", shortHost: "box", env: envOf(dir) }).close("ses_1", [])
      expect(d).toEqual({ ok: true, channel: "ssh" })
      const [argv] = runsOf(dir, "ssh")
      expect(argv).toEqual([...sshArgs("desk", "ocpool-notify/1\nclose\nbox:ses_1")])
      expect(decodePayload(argv![9])).toEqual({ _tag: "Close", key: "box:ses_1" })
    })
  )

  // real time here and in the next two: the file's times are the wall clock's, as `ocpool receive` writes them
  it.live("US-30 popups.json remembers several ids per key, take returns and forgets them, other keys stay", () =>
    Effect.gen(function* () {
      const dir = tmp()
      const file = makePopupsFile(dir)
      const now = Date.now()
      yield* file.remember("box:ses_A", 42, now)
      yield* file.remember("box:ses_A", 43, now + 1)
      yield* file.remember("box:ses_B", 44, now + 2)
      expect(yield* file.take("box:ses_A")).toEqual([42, 43])
      expect(yield* file.take("box:ses_A")).toEqual([])
      expect(yield* file.take("box:ses_B")).toEqual([44])
      expect(decodePopups(readFileSync(file.path, "utf8"))).toEqual([])
    })
  )

  it.live("US-30 popups.json drops entries older than 24 h on every write", () =>
    Effect.gen(function* () {
      const dir = tmp()
      const file = makePopupsFile(dir)
      const now = Date.now()
      yield* file.remember("box:old", 1, now - POPUP_TTL_MS - 1_000)
      yield* file.remember("box:kept", 2, now - POPUP_TTL_MS + 60_000)
      yield* file.remember("box:new", 3, now)
      expect(decodePopups(readFileSync(file.path, "utf8")).map((p) => p.key)).toEqual(["box:kept", "box:new"])
      expect(yield* file.take("box:old")).toEqual([])
    })
  )

  it.live("US-30 a damaged, huge or strange popups.json counts as empty and never throws", () =>
    Effect.gen(function* () {
      const dir = tmp()
      const file = makePopupsFile(dir)
      writeFileSync(file.path, "{not json")
      expect(yield* file.take("box:ses_A")).toEqual([])
      yield* file.remember("box:ses_A", 5, Date.now())
      expect(yield* file.take("box:ses_A")).toEqual([5])
      writeFileSync(file.path, "")
      truncateSync(file.path, 5_000_000)
      expect(yield* file.take("box:ses_A")).toEqual([])
      writeFileSync(file.path, JSON.stringify({ popups: [{ key: "box:a", id: "x", raisedAt: 1 }, { key: "bad key", id: 1, raisedAt: Date.now() }, { key: "box:b", id: 9, raisedAt: Date.now() }] }))
      expect(yield* file.take("box:b")).toEqual([9])
      const state = tmp()
      const opened = openPopupsFile({ OCPOOL_STATE_DIR: join(state, "nested", "state") })
      expect(opened._tag).toBe("Open")
    })
  )

  it.effect("US-30 pure popups: TTL, cap, duplicates and invalid keys", () =>
    Effect.sync(() => {
      const t = 1_000_000_000
      let p = rememberPopup([], "h:a", 1, t, t)
      p = rememberPopup(p, "h:a", 1, t + 5, t + 5)
      expect(p).toEqual([{ key: "h:a", id: 1, raisedAt: t + 5 }])
      expect(rememberPopup(p, "bad key", 2, t, t)).toEqual(p)
      expect(rememberPopup(p, "h:a", 0, t, t)).toEqual(p)
      expect(prunePopups(p, t + 5 + POPUP_TTL_MS)).toEqual([])
      expect(takePopups(p, "h:a", t + 5 + POPUP_TTL_MS - 1)).toEqual({ ids: [1], rest: [] })
      const many = Array.from({ length: POPUPS_MAX + 10 }, (_, i) => ({ key: "h:x", id: i + 1, raisedAt: t + i }))
      const kept = prunePopups(many, t + POPUPS_MAX + 10)
      expect(kept).toHaveLength(POPUPS_MAX)
      expect(kept[0]!.id).toBe(11)
      expect(decodePopups(encodePopups(kept))).toEqual(kept)
    })
  )
})

describe("memory notifier (tests of the plugin)", () => {
  it.effect("US-11 the memory notifier records sends and closes, scripted outcomes, sequential ids, latency on the test clock", () =>
    Effect.gen(function* () {
      const sends: Array<MemorySend> = []
      const closes: Array<MemoryClose> = []
      const program = Effect.gen(function* () {
        const n = yield* Notifier
        const a = yield* n.send(note(), "ses_1")
        const b = yield* n.send(note(), "ses_2")
        const c = yield* n.send(note(), "ses_3")
        const x = yield* n.close("ses_1", [7])
        return [a, b, c, x]
      }).pipe(Effect.provide(NotifierMemory(["ok", "bus down", { id: 99 }], sends, closes, { latencyMs: 1_000 })))
      const fiber = yield* Effect.fork(program)
      yield* TestClock.adjust("3 seconds")
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust("1 second")
      const r = yield* Fiber.join(fiber)
      expect(r).toEqual([
        { ok: true, channel: "notify-send", id: 1 },
        { ok: false, channel: "notify-send", reason: "bus down" },
        { ok: true, channel: "notify-send", id: 99 },
        { ok: true, channel: "notify-send" }
      ])
      expect(sends.map((s) => s.key)).toEqual(["ses_1", "ses_2", "ses_3"])
      expect(closes).toEqual([{ key: "ses_1", ids: [7] }])
    })
  )
})
