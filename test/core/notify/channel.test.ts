import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import {
  closeArgs,
  DESKTOP_ALIAS,
  hopHost,
  hopWanted,
  isRemote,
  notifySendArgs,
  osascriptArgs,
  platformChannel,
  printedId,
  selectChannel,
  sshArgs,
  sshConfigHasHost,
  type ChannelFacts
} from "../../../src/core/notify/channel.js"
import { notificationFor } from "../../../src/core/notify/content.js"
import { encodeShow } from "../../../src/core/notify/payload.js"

const everything = () => true
const nothing = () => false
const facts = (over: Partial<ChannelFacts>): ChannelFacts => ({ via: "auto", remote: false, platform: "linux", host: undefined, onPath: everything, ...over })

describe("channel selection (SPEC §10.5)", () => {
  it.each<[ChannelFacts["via"], boolean, boolean]>([
    ["auto", true, true],
    ["auto", false, false],
    ["ssh", true, true],
    ["ssh", false, true],
    ["local", true, false],
    ["local", false, false],
    ["none", true, false],
    ["none", false, false]
  ])("US-13 via %s, remote %s: a hop host is wanted: %s", (via, remote, wanted) => {
    expect(hopWanted(via, remote)).toBe(wanted)
  })

  it("US-13 a hop host is wanted exactly when the selection would use the hop given one", () => {
    for (const via of ["auto", "local", "ssh", "none"] as const) {
      for (const remote of [true, false]) {
        expect(selectChannel(facts({ via, remote, host: "desk" })).channel === "ssh", `${via} remote=${remote}`).toBe(hopWanted(via, remote))
      }
    }
  })

  it("US-11 auto on a local Linux machine with notify-send on PATH uses notify-send; on macOS osascript", () => {
    expect(selectChannel(facts({}))).toEqual({ channel: "notify-send" })
    expect(selectChannel(facts({ platform: "darwin" }))).toEqual({ channel: "osascript" })
    expect(selectChannel(facts({ platform: "freebsd" }))).toEqual({ channel: "notify-send" })
  })

  it("US-11 auto with the platform's binary missing, or a platform without a notifier, is none with a reason", () => {
    const missing = selectChannel(facts({ onPath: (n) => n !== "notify-send" }))
    expect(missing.channel).toBe("none")
    if (missing.channel === "none") expect(missing.reason).toContain("no notifier on linux")
    const win = selectChannel(facts({ platform: "win32" }))
    expect(win).toEqual({ channel: "none", reason: "no notifier on win32" })
  })

  it("US-13 auto in a remote session with a hop host uses ssh to that host", () => {
    expect(selectChannel(facts({ remote: true, host: "desk" }))).toEqual({ channel: "ssh", host: "desk" })
  })

  it("US-13 auto in a remote session without a host is none, and the reason mentions `ocpool tunnel setup`", () => {
    const s = selectChannel(facts({ remote: true, host: undefined }))
    expect(s).toEqual({ channel: "none", reason: "remote session without a notify host; run ocpool tunnel setup" })
  })

  it("US-14 a remote session with a host uses ssh even when notify-send is on PATH (a failing hop never falls back)", () => {
    const asked: Array<string> = []
    const s = selectChannel(facts({ remote: true, host: "desk", onPath: (n) => (asked.push(n), true) }))
    expect(s).toEqual({ channel: "ssh", host: "desk" })
    expect(asked).toEqual([])
  })

  it("US-13 a local session with a host configured still uses the local channel under auto", () => {
    expect(selectChannel(facts({ remote: false, host: "desk" }))).toEqual({ channel: "notify-send" })
  })

  it("US-13 via local forces the platform channel, even remote with a host", () => {
    expect(selectChannel(facts({ via: "local", remote: true, host: "desk" }))).toEqual({ channel: "notify-send" })
    expect(selectChannel(facts({ via: "local", onPath: nothing })).channel).toBe("none")
  })

  it("US-13 via ssh forces the hop; without a host it is none and the reason names `ocpool tunnel setup`", () => {
    expect(selectChannel(facts({ via: "ssh", host: "desk" }))).toEqual({ channel: "ssh", host: "desk" })
    const s = selectChannel(facts({ via: "ssh" }))
    expect(s.channel).toBe("none")
    if (s.channel === "none") expect(s.reason).toContain("ocpool tunnel setup")
  })

  it("US-11 via none sends nowhere, with a reason", () => {
    const s = selectChannel(facts({ via: "none", remote: true, host: "desk" }))
    expect(s.channel).toBe("none")
    if (s.channel === "none") expect(s.reason).not.toBe("")
  })

  it("US-13 a session is remote when SSH_CONNECTION, SSH_CLIENT or SSH_TTY is non-empty", () => {
    expect(isRemote({})).toBe(false)
    expect(isRemote({ SSH_CONNECTION: "" , SSH_CLIENT: "", SSH_TTY: "" })).toBe(false)
    expect(isRemote({ SSH_CONNECTION: "10.0.0.1 5 10.0.0.2 22" })).toBe(true)
    expect(isRemote({ SSH_CLIENT: "10.0.0.1 5 22" })).toBe(true)
    expect(isRemote({ SSH_TTY: "/dev/pts/1" })).toBe(true)
  })

  it("US-11 platform channels: darwin osascript, linux and BSDs notify-send, others none", () => {
    expect(platformChannel("darwin")).toBe("osascript")
    expect(platformChannel("linux")).toBe("notify-send")
    expect(platformChannel("openbsd")).toBe("notify-send")
    expect(platformChannel("win32")).toBeUndefined()
  })
})

describe("the hop host (SPEC §10.5)", () => {
  const config = "Host github.com\n  User git\n\nHost ocpool-desktop\n  HostName desk.lan\n"

  it("US-13 OCPOOL_NOTIFY_HOST wins over the option and the ssh config", () => {
    expect(hopHost("desk", "other", config)).toBe("desk")
  })

  it("US-13 the option notifyHost comes next; blank values are skipped", () => {
    expect(hopHost(undefined, "other", config)).toBe("other")
    expect(hopHost("  ", " other ", config)).toBe("other")
  })

  it("US-13 then `ocpool-desktop` when ~/.ssh/config has a `Host ocpool-desktop` line", () => {
    expect(hopHost(undefined, undefined, config)).toBe(DESKTOP_ALIAS)
    expect(hopHost(undefined, "", "host=ocpool-desktop\n")).toBe("ocpool-desktop")
    expect(hopHost(undefined, undefined, "Host a ocpool-desktop b\r\n")).toBe("ocpool-desktop")
  })

  it("US-13 otherwise there is no host", () => {
    expect(hopHost(undefined, undefined, undefined)).toBeUndefined()
    expect(hopHost(undefined, undefined, "Host github.com\n")).toBeUndefined()
    expect(hopHost(undefined, undefined, "# Host ocpool-desktop\n")).toBeUndefined()
    expect(hopHost(undefined, undefined, "Host ocpool-desktop-2\n  HostName ocpool-desktop\n")).toBeUndefined()
    expect(sshConfigHasHost("HostName ocpool-desktop")).toBe(false)
  })
})

describe("argv (SPEC §10.5)", () => {
  it("US-13 / US-18.1 ssh gets BatchMode=yes, ConnectTimeout=5, ClearAllForwardings=yes and exactly one argument after the host: the payload as one shell-inert token word", () => {
    const payload = encodeShow("box:ses_1", notificationFor("done", { sessionTitle: "Fix $(touch M) `id`; rm -rf ~ 'q' \"dq\"" }, true))
    const argv = sshArgs("desk", payload)
    const sent = `ocpool-notify-b64/1.${Buffer.from(payload, "utf8").toString("base64url")}`
    expect(argv).toEqual(["-T", "-o", "BatchMode=yes", "-o", "ConnectTimeout=5", "-o", "ClearAllForwardings=yes", "--", "desk", sent])
    expect(argv.slice(argv.indexOf("desk") + 1)).toEqual([sent])
    // nothing a shell would act on: no space, newline, quote, $, backtick, ;, &, |, =, *, ?, [, ~ or #
    expect(sent).toMatch(/^[A-Za-z0-9._\/-]+$/)
  })

  it("US-11 notify-send: title and message are separate argv entries after `--`", () => {
    const n = notificationFor("done", { sessionTitle: "--help me" }, true)
    const argv = notifySendArgs(n, false)
    expect(argv).toEqual(["--app-name=opencode", "--urgency=normal", "--icon=emblem-default", "--hint=string:sound-name:complete", "--", "opencode — --help me", "Finished — waiting for your review"])
    expect(argv.slice(argv.indexOf("--") + 1)).toEqual([n.title, n.message])
  })

  it("US-30 notify-send with --print-id puts it before `--`", () => {
    const argv = notifySendArgs(notificationFor("error", { errorMessage: "x" }, false), true)
    expect(argv).toEqual(["--app-name=opencode", "--urgency=critical", "--icon=dialog-error", "--print-id", "--", "opencode — session", "Failed: x"])
  })

  it("US-11 osascript: the message ``He said \"hi\"; $(id) `id` `` is its own argv entry, unchanged, and the script never contains the texts", () => {
    const message = 'He said "hi"; $(id) `id` '
    const argv = osascriptArgs({ title: "opencode — T", message, urgency: "normal", icon: "emblem-default", sound: "question" })
    expect(argv).toEqual([
      "-e",
      "on run argv",
      "-e",
      "display notification (item 2 of argv) with title (item 1 of argv) sound name (item 3 of argv)",
      "-e",
      "end run",
      "opencode — T",
      message,
      "Ping"
    ])
  })

  it.prop("US-11 the osascript script lines are fixed whatever the texts; the texts are argv items 7 and 8", [fc.string(), fc.string()], ([title, message]) => {
    const argv = osascriptArgs({ title, message, urgency: "normal", icon: "emblem-default", sound: "done" })
    const script = [argv[1], argv[3], argv[5]]
    expect(script).toEqual(["on run argv", "display notification (item 2 of argv) with title (item 1 of argv) sound name (item 3 of argv)", "end run"])
    expect(argv.slice(6)).toEqual([title, message, "Glass"])
  })

  it.prop("US-11 notify-send: whatever the texts, the entries after `--` are exactly the title and the message (its `&`, `<`, `>` escaped for the body markup, its backslashes doubled: notify-send reads C escapes in the body)", [fc.string(), fc.string()], ([title, message]) => {
    const argv = notifySendArgs({ title, message, urgency: "low", icon: "system-run", sound: "none" }, true)
    expect(argv.slice(0, argv.indexOf("--"))).toEqual(["--app-name=opencode", "--urgency=low", "--icon=system-run", "--print-id"])
    expect(argv.slice(argv.indexOf("--") + 1)).toEqual([title, message.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/\\/g, "\\\\")])
  })

  it("US-18 a body with backslashes is handed to notify-send with each doubled, the summary unchanged", () => {
    const argv = notifySendArgs({ title: "a\\nb", message: "C:\\temp\\new \\101", urgency: "normal", icon: "system-run", sound: "none" }, false)
    expect(argv.slice(-2)).toEqual(["a\\nb", "C:\\\\temp\\\\new \\\\101"])
  })

  it("US-30 closeArgs calls CloseNotification with the popup id through gdbus", () => {
    expect(closeArgs(42)).toEqual([
      "call",
      "--session",
      "--dest",
      "org.freedesktop.Notifications",
      "--object-path",
      "/org/freedesktop/Notifications",
      "--method",
      "org.freedesktop.Notifications.CloseNotification",
      "42"
    ])
  })

  it("US-30 printedId reads the id notify-send --print-id printed, and nothing else", () => {
    expect(printedId("42\n")).toBe(42)
    expect(printedId("  7  ")).toBe(7)
    expect(printedId("4294967295")).toBe(4294967295)
    for (const bad of ["", "0", "-1", "4294967296", "42 43", "id 42", "1e3", "12345678901"]) expect(printedId(bad)).toBeUndefined()
  })
})
