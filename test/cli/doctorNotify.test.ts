/**
 * `ocpool doctor`'s notification checks (SPEC §12.2; US-46): `notifier` (the channel the plugin would
 * select), `ssh-hop` (the hop host and where it comes from), `fade` (gdbus; unsupported on macOS) and
 * `--probe` (a test notification through that channel). The built CLI runs in a child process with a
 * temporary HOME and stub programs as the only ones on PATH.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, writeFileSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { fadeCheck, notifierDetail, sshHopCheck } from "../../src/cli/doctor/command.js"
import { sessionBusMissing } from "../../src/cli/receive.js"
import { hopHost, isRemote, selectChannel } from "../../src/core/notify/channel.js"
import { calls, cli, ensureBuilt, stub } from "./builtCli.js"

/** doctor's notifier check for a platform and a PATH: the plugin's channel choice, named as doctor names it. */
const notifierCheck = (platform: string, find: (bin: string) => string | undefined, env: NodeJS.ProcessEnv = {}, sshConfig?: string) => {
  const remote = isRemote(env)
  const host = remote ? hopHost(env.OCPOOL_NOTIFY_HOST, undefined, sshConfig) : undefined
  return notifierDetail(selectChannel({ via: "auto", remote, platform, host, onPath: (b) => find(b) !== undefined }))
}

ensureBuilt("notify --help")

const tmp = () => mkdtempSync(join(tmpdir(), "ocpool-doctor-notify-"))
const short = hostname().split(".")[0]!


interface Report {
  readonly checks: Array<{ id: string; status: string; detail: string }>
  readonly ok: boolean
}

/** `ocpool doctor --json` with HOME, PATH and the state dir in a temporary directory. */
const doctor = (bin: string, args: ReadonlyArray<string> = [], env: Record<string, string> = {}) => {
  const home = env.HOME ?? tmp()
  const r = spawnSync(process.execPath, [cli, "doctor", "--json", ...args], {
    encoding: "utf8",
    timeout: 30_000,
    cwd: home,
    env: { PATH: bin, HOME: home, OCPOOL_STATE_DIR: join(home, "state"), ...env }
  })
  const report = JSON.parse(r.stdout) as Report
  const check = (id: string) => report.checks.find((c) => c.id === id)
  return { code: r.status, report, check, stderr: r.stderr }
}

const sshConfigHome = () => {
  const home = tmp()
  mkdirSync(join(home, ".ssh"), { mode: 0o700 })
  writeFileSync(join(home, ".ssh", "config"), "# >>> opencode-pool ocpool-desktop >>>\nHost ocpool-desktop\n  HostName desk.lan\n# <<< opencode-pool ocpool-desktop <<<\n")
  return home
}

const REMOTE = { SSH_CONNECTION: "10.0.0.2 50000 10.0.0.1 22" }

const TOKEN = /^ocpool-notify-b64\/1\.[A-Za-z0-9_-]+$/
/** The payload inside a hop token, decoded with Node's own base64url (independent of the code under test). */
const untoken = (word: string): string => {
  expect(word).toMatch(TOKEN)
  return Buffer.from(word.slice("ocpool-notify-b64/1.".length), "base64url").toString("utf8")
}

/**
 * An `ssh` on PATH that plays the desktop's sshd: its last argument (the remote command) goes to
 * - `receiver`: the built `ocpool receive` as the forced command (SSH_ORIGINAL_COMMAND), with a notify-send stub;
 * - `shell`: a real `/bin/sh -c` in a scratch home, as sshd runs a key without a forced command;
 * - `old`: a receiver from before the hop token, which shows any token as an unrecognised message.
 * Each run's argv is logged like `stub`'s. Returns the desktop's dir (its notify-send log, its home).
 */
const sshTo = (bin: string, desktop: "receiver" | "shell" | "old") => {
  const desk = tmp()
  stub(desk, "notify-send")
  const run =
    desktop === "receiver"
      ? `const r = cp.spawnSync(process.execPath, [${JSON.stringify(cli)}, "receive"], { stdio: "inherit", cwd: ${JSON.stringify(desk)}, env: { PATH: ${JSON.stringify(desk)}, HOME: ${JSON.stringify(desk)}, OCPOOL_STATE_DIR: ${JSON.stringify(join(desk, "state"))}, SSH_ORIGINAL_COMMAND: cmd } }); process.exit(r.status ?? 255)`
      : desktop === "shell"
        ? `const r = cp.spawnSync("/bin/sh", ["-c", cmd], { stdio: "inherit", cwd: ${JSON.stringify(desk)}, env: { PATH: "/usr/bin:/bin", HOME: ${JSON.stringify(desk)} } }); process.exit(r.status ?? 255)`
        : `process.stderr.write("ocpool receive: payload not understood (" + Buffer.byteLength(cmd) + " bytes); shown as text\\n"); process.exit(0)`
  writeFileSync(
    join(bin, "ssh"),
    `#!${process.execPath}
const cp = require("child_process")
const args = process.argv.slice(2)
require("fs").appendFileSync(${JSON.stringify(join(bin, "ssh.log"))}, JSON.stringify(args) + "\\n")
const cmd = args[args.length - 1]
${run}
`,
    { mode: 0o755 }
  )
  return desk
}

describe("ocpool doctor: notifications (SPEC §12.2)", { timeout: 60_000 }, () => {
  it("US-46.3 the notifier check names notify-send when it is on PATH, and says no channel exists otherwise", () => {
    const bin = tmp()
    stub(bin, "notify-send")
    expect(doctor(bin, [], { DBUS_SESSION_BUS_ADDRESS: "unix:path=/tmp/ocpool-test-bus" }).check("notifier")).toEqual({ id: "notifier", status: "ok", detail: "notify-send" })
    expect(doctor(bin, [], { DISPLAY: ":0" }).check("notifier")).toEqual({ id: "notifier", status: "ok", detail: "notify-send" })
    expect(doctor(tmp()).check("notifier")).toEqual({ id: "notifier", status: "warn", detail: "no notifier on linux: notify-send is not on PATH; no notification channel exists" })
    expect(calls(bin, "notify-send")).toEqual([])
  })

  it("US-46.3 in an SSH session the notifier is the hop to its host, or none with the reason naming ocpool tunnel setup", () => {
    const bin = tmp()
    stub(bin, "notify-send")
    expect(doctor(bin, [], { ...REMOTE, OCPOOL_NOTIFY_HOST: "desk" }).check("notifier")).toMatchObject({ status: "ok", detail: "ssh to desk (this is an SSH session)" })
    expect(doctor(bin, [], { ...REMOTE, HOME: sshConfigHome() }).check("notifier")).toMatchObject({ status: "ok", detail: "ssh to ocpool-desktop (this is an SSH session)" })
    const none = doctor(bin, [], REMOTE).check("notifier")
    expect(none?.status).toBe("warn")
    expect(none?.detail).toContain("ocpool tunnel setup")
  })

  it("US-46 the ssh-hop check names the host and where it comes from; an SSH session without one is a warning", () => {
    const bin = tmp()
    expect(doctor(bin, [], { OCPOOL_NOTIFY_HOST: "desk" }).check("ssh-hop")).toEqual({
      id: "ssh-hop",
      status: "ok",
      detail: "host desk (from OCPOOL_NOTIFY_HOST); used only when opencode runs in an SSH session"
    })
    expect(doctor(bin, [], { ...REMOTE, HOME: sshConfigHome() }).check("ssh-hop")).toEqual({ id: "ssh-hop", status: "ok", detail: "host ocpool-desktop (from ~/.ssh/config)" })
    expect(doctor(bin).check("ssh-hop")).toEqual({ id: "ssh-hop", status: "ok", detail: "not configured (only needed when opencode runs in an SSH session)" })
    const remote = doctor(bin, [], REMOTE)
    expect(remote.check("ssh-hop")?.status).toBe("warn")
    expect(remote.check("ssh-hop")?.detail).toMatch(/^not configured, and this is an SSH session: .*ocpool tunnel setup/)
    // a warning is not a failure
    expect(remote.report.checks.filter((c) => c.status === "fail")).toEqual([])
  })

  it("US-46 the fade check: gdbus on PATH is ok, without it a warning; macOS says fade is unsupported", () => {
    const bin = tmp()
    stub(bin, "gdbus")
    expect(doctor(bin).check("fade")).toEqual({ id: "fade", status: "ok", detail: `gdbus (${join(bin, "gdbus")})` })
    expect(doctor(tmp()).check("fade")).toEqual({ id: "fade", status: "warn", detail: "gdbus is not on PATH: popups stay until dismissed" })
    expect(calls(bin, "gdbus")).toEqual([])
    expect(fadeCheck({ env: { PATH: bin }, platform: "darwin", home: undefined })).toEqual({ id: "fade", status: "warn", detail: "fade is unsupported on macOS" })
  })

  it("US-46.3 notify-send without a D-Bus session bus (no address, no /run/user/UID/bus, no display) is a warning naming it, not ok (issue 33)", () => {
    const bin = tmp()
    stub(bin, "notify-send")
    const busSocket = existsSync(`/run/user/${process.getuid?.() ?? 0}/bus`)
    const check = doctor(bin).check("notifier")
    if (busSocket) expect(check?.status).toBe("ok")
    // the hint is the command that runs from here: this PATH has neither ocpool nor node
    else expect(check).toEqual({ id: "notifier", status: "warn", detail: `notify-send, but no D-Bus session bus here (DBUS_SESSION_BUS_ADDRESS unset, no /run/user/${process.getuid?.() ?? 0}/bus, no $DISPLAY): nothing would show (${process.execPath} ${realpathSync(cli)} doctor --probe tries)` })
    expect(sessionBusMissing({}, "linux", 4242, () => false)).toBe("no D-Bus session bus here (DBUS_SESSION_BUS_ADDRESS unset, no /run/user/4242/bus, no $DISPLAY)")
    expect(sessionBusMissing({}, "linux", 4242, (p) => p === "/run/user/4242/bus")).toBeUndefined()
    expect(sessionBusMissing({ WAYLAND_DISPLAY: "wayland-0" }, "linux", 4242, () => false)).toBeUndefined()
    expect(sessionBusMissing({}, "darwin", 4242, () => false)).toBeUndefined()
  })

  it("US-46.3 on each platform: Linux names notify-send, macOS names osascript, a platform with neither says no channel exists", () => {
    const find = (present: ReadonlyArray<string>) => (bin: string) => (present.includes(bin) ? `/usr/bin/${bin}` : undefined)
    expect(notifierCheck("linux", find(["notify-send"]))).toEqual({ id: "notifier", status: "ok", detail: "notify-send" })
    expect(notifierCheck("darwin", find(["osascript"]))).toEqual({ id: "notifier", status: "ok", detail: "osascript" })
    expect(notifierCheck("win32", find([]))).toEqual({ id: "notifier", status: "warn", detail: "no notifier on win32: no notification channel exists" })
    expect(notifierCheck("darwin", find(["notify-send"]), REMOTE, "Host ocpool-desktop\n")).toMatchObject({ status: "ok", detail: "ssh to ocpool-desktop (this is an SSH session)" })
    expect(sshHopCheck({ env: { ...REMOTE, OCPOOL_NOTIFY_HOST: " " }, platform: "linux", home: undefined }).status).toBe("warn")
  })

  it("US-46 --probe sends the test notification through the selected channel and reports it; without --probe nothing is sent", () => {
    const bin = tmp()
    stub(bin, "notify-send")
    const quiet = doctor(bin)
    expect(quiet.check("probe")).toBeUndefined()
    expect(calls(bin, "notify-send")).toEqual([])
    const r = doctor(bin, ["--probe"])
    expect(r.check("probe")).toEqual({ id: "probe", status: "ok", detail: "test notification delivered via notify-send" })
    expect(r.code).toBe(0)
    expect(calls(bin, "notify-send")).toEqual([["--app-name=opencode", "--urgency=normal", "--icon=utilities-terminal", "--", "opencode — ocpool doctor --probe", `Test notification from ${short}`]])
  })

  it("US-46 --probe over a failing hop fails the probe check with the reason, and doctor exits 1", () => {
    const bin = tmp()
    stub(bin, "ssh", 255, "ssh: Could not resolve hostname desk: Name or service not known\n")
    stub(bin, "notify-send")
    const r = doctor(bin, ["--probe"], { ...REMOTE, OCPOOL_NOTIFY_HOST: "desk" })
    expect(r.check("probe")).toEqual({ id: "probe", status: "fail", detail: "test notification not delivered via ssh: ssh exited 255: ssh: Could not resolve hostname desk: Name or service not known" })
    expect(r.code).toBe(1)
    expect(r.report.ok).toBe(false)
    // the hop carried the probe (one token word after the host); nothing was raised on this (remote) machine
    const sent = calls(bin, "ssh")
    for (const argv of sent) {
      expect(argv.slice(7, 9)).toEqual(["--", "desk"])
      expect(argv).toHaveLength(10)
    }
    const payloads = sent.map((argv) => untoken(argv[9]!).split("\n"))
    expect(payloads.find((lines) => lines[1] === "show")!.slice(3)).toEqual(["opencode — ocpool doctor --probe", `Test notification from ${short} [${short}]`, "normal", "utilities-terminal", "none"])
    expect(calls(bin, "notify-send")).toEqual([])
    // the hop-command probe could not reach the host either: a warning, the failure is the probe check's
    expect(r.check("hop-command")).toEqual({ id: "hop-command", status: "warn", detail: "desk could not be probed: ssh exited 255: ssh: Could not resolve hostname desk: Name or service not known" })
  })

  it("US-46 --probe with no channel at all fails the probe check with the reason", () => {
    const r = doctor(tmp(), ["--probe"])
    expect(r.check("probe")).toEqual({ id: "probe", status: "fail", detail: "test notification not delivered via none: no notifier on linux: notify-send is not on PATH" })
    expect(r.code).toBe(1)
  })

  it("US-46 --probe with a hop host also sends it an inert probe, one token word whose payload is `ocpool-notify/1` + `probe`: ocpool receive answering as the forced command makes hop-command ok, and the probe shows nothing", () => {
    const bin = tmp()
    const desk = sshTo(bin, "receiver")
    const r = doctor(bin, ["--probe"], { ...REMOTE, OCPOOL_NOTIFY_HOST: "desk" })
    expect(r.check("hop-command")).toEqual({ id: "hop-command", status: "ok", detail: "desk answers with its forced command: ocpool receive read the probe" })
    expect(r.check("probe")).toEqual({ id: "probe", status: "ok", detail: "test notification delivered via ssh" })
    const sent = calls(bin, "ssh")
    expect(sent).toHaveLength(2)
    for (const argv of sent) expect(argv.slice(0, 9)).toEqual(["-T", "-o", "BatchMode=yes", "-o", "ConnectTimeout=5", "-o", "ClearAllForwardings=yes", "--", "desk"])
    expect(sent.map((argv) => untoken(argv[9]!).split("\n").slice(0, 2)).sort()).toEqual([
      ["ocpool-notify/1", "probe"],
      ["ocpool-notify/1", "show"]
    ])
    // only the test notification was shown on the desktop
    expect(calls(desk, "notify-send").map((argv) => argv.at(-2))).toEqual(["opencode — ocpool doctor --probe"])
    // without --probe nothing is sent and there is no hop-command check
    const quiet = doctor(bin, [], { ...REMOTE, OCPOOL_NOTIFY_HOST: "desk" })
    expect(quiet.check("hop-command")).toBeUndefined()
    expect(calls(bin, "ssh")).toHaveLength(2)
  })

  it("US-46 --probe against a host that hands the remote command to a login shell (no forced command): hop-command warns that the host must use the forced-command key written by ocpool tunnel setup, the probe fails with exit 127, nothing runs", () => {
    const bin = tmp()
    const desk = sshTo(bin, "shell")
    const r = doctor(bin, ["--probe"], { ...REMOTE, OCPOOL_NOTIFY_HOST: "desk" })
    const hop = r.check("hop-command")
    expect(hop?.status).toBe("warn")
    expect(hop?.detail).toMatch(/^desk ran the probe in a login shell, not the forced command ocpool receive \(.*ocpool-notify-b64\/1\.…: not found\): the hop host must use the forced-command key written by ocpool tunnel setup; otherwise notification text reaches a shell there$/)
    expect(r.check("probe")?.status).toBe("fail")
    expect(r.check("probe")?.detail).toMatch(/^test notification not delivered via ssh: ssh exited 127: a login shell answered, not ocpool receive: the hop host must use the forced-command key written by ocpool tunnel setup \(.*ocpool-notify-b64\/1\.…: not found\)$/)
    expect(r.code).toBe(1)
    // the shell got one inert word each time: nothing it could run, nothing created in its home
    for (const argv of calls(bin, "ssh")) expect(argv[9]).toMatch(TOKEN)
    expect(readdirSync(desk).sort()).toEqual(["notify-send"])
  })

  it("US-46 --probe against an ocpool receive from before the hop token: hop-command warns to update opencode-pool on the desktop", () => {
    const bin = tmp()
    sshTo(bin, "old")
    const r = doctor(bin, ["--probe"], { ...REMOTE, OCPOOL_NOTIFY_HOST: "desk" })
    expect(r.check("hop-command")).toEqual({
      id: "hop-command",
      status: "warn",
      detail: "desk answers with an ocpool receive older than the hop token: it would show every notification as an unrecognised message; update opencode-pool on the desktop"
    })
  })
})
