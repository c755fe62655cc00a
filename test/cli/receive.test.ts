/**
 * `ocpool receive` (SPEC §10.6, §10.8; US-18, US-13.2, US-30.6), run as the built CLI in a child
 * process. `notify-send` and `gdbus` are stubs, the only programs on PATH, that record their argv as JSON; the
 * environment is built from scratch (no SSH_* or DBUS_* of the test runner leaks in).
 */
import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { notifySendArgs } from "../../src/core/notify/channel.js"
import { encodeClose, encodeShow, UNRECOGNISED_TITLE } from "../../src/core/notify/payload.js"
import { receiverEnv } from "../../src/cli/receive.js"
import { cli, ensureBuilt, root } from "./builtCli.js"

ensureBuilt("receive --help")

const tmp = () => mkdtempSync(join(tmpdir(), "ocpool-receive-"))

/** A program on PATH that appends its argv (and DBUS_SESSION_BUS_ADDRESS) to `log`, prints `stdout`, exits `code`. */
const recorder = (dir: string, name: string, log: string, stdout = "", code = 0) =>
  writeFileSync(
    join(dir, name),
    `#!${process.execPath}
require("fs").appendFileSync(${JSON.stringify(log)}, JSON.stringify({ argv: process.argv.slice(2), dbus: process.env.DBUS_SESSION_BUS_ADDRESS ?? null }) + "\\n")
if (process.argv.includes("--print-id") || ${JSON.stringify(name)} !== "notify-send") process.stdout.write(${JSON.stringify(stdout)})
process.exit(${code})
`,
    { mode: 0o755 }
  )

interface Call {
  readonly argv: Array<string>
  readonly dbus: string | null
}

/** A desktop: stubs for notify-send (prints id 42 with --print-id) and gdbus, a state dir, a working directory. */
const desktop = (opts: { notifySend?: boolean; notifyExit?: number } = {}) => {
  const bin = tmp()
  const base = tmp()
  const notifyLog = join(base, "notify-send.log")
  const gdbusLog = join(base, "gdbus.log")
  if (opts.notifySend !== false) recorder(bin, "notify-send", notifyLog, "42\n", opts.notifyExit ?? 0)
  recorder(bin, "gdbus", gdbusLog, "()\n")
  const read = (log: string): Array<Call> => (existsSync(log) ? readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Call) : [])
  return { bin, base, state: join(base, "state"), shown: () => read(notifyLog), closed: () => read(gdbusLog) }
}

type Desktop = ReturnType<typeof desktop>

const receive = (d: Desktop, payload: string | undefined, args: ReadonlyArray<string> = [], extraEnv: Record<string, string> = {}) => {
  const env: Record<string, string> = { PATH: d.bin, HOME: d.base, OCPOOL_STATE_DIR: d.state, XDG_RUNTIME_DIR: d.base, ...extraEnv }
  if (payload !== undefined) env.SSH_ORIGINAL_COMMAND = payload
  const r = spawnSync(process.execPath, [cli, "receive", ...args], { encoding: "utf8", timeout: 30_000, cwd: d.base, env })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

const show = (fields: Partial<{ title: string; message: string; urgency: string; icon: string; sound: string }>, key = "") =>
  encodeShow(key, { title: "T", message: "M", urgency: "normal", icon: "utilities-terminal", sound: "none", ...fields } as Parameters<typeof encodeShow>[1])

/** A payload with the raw lines given (no cleaning by the encoder). */
const raw = (...lines: ReadonlyArray<string>) => lines.join("\n")

/** The hop token of a payload (or of raw bytes), built with Node's own base64url: independent of the code under test. */
const TOKEN_PREFIX = "ocpool-notify-b64/1."
const token = (payload: string | Buffer) => `${TOKEN_PREFIX}${(typeof payload === "string" ? Buffer.from(payload, "utf8") : payload).toString("base64url")}`
/** What `ocpool receive` writes on stderr for a probe, and only for one. */
const PROBE_ANSWER_LINE = "ocpool receive: probe answered; nothing shown\n"

describe("ocpool receive (SPEC §10.6)", { timeout: 60_000 }, () => {
  it("US-18.1 a title and a message full of shell syntax arrive byte-identical as argv entries after --, and nothing runs", () => {
    const d = desktop()
    const title = "Title $(touch M)"
    const message = "Body; touch M && `touch M`"
    const r = receive(d, raw("ocpool-notify/1", "show", "", title, message, "normal", "dialog-information", "question"))
    expect(r.code).toBe(0)
    expect(r.stdout).toBe("")
    expect(r.stderr).toBe("")
    expect(d.shown().map((c) => c.argv)).toEqual([
      // the body's `&` escaped for the daemon's markup (issue 18 item 10), the summary as sent
      ["--app-name=opencode", "--urgency=normal", "--icon=dialog-information", "--hint=string:sound-name:message-new-instant", "--", title, message.replaceAll("&", "&amp;")]
    ])
    expect(existsSync(join(d.base, "M"))).toBe(false)
    expect(existsSync(join(root, "M"))).toBe(false)
  })

  it("US-18.2 positional arguments and an empty or unset SSH_ORIGINAL_COMMAND: nothing shown, a note on stderr, exit 0", () => {
    const d = desktop()
    for (const payload of ["", "  \n\t ", undefined]) {
      const r = receive(d, payload, ["--title", "x", "ocpool-notify/1", "--help", "-h"])
      expect(r.code).toBe(0)
      expect(r.stdout).toBe("")
      expect(r.stderr).toBe("ocpool receive: no payload (SSH_ORIGINAL_COMMAND is unset or blank); nothing shown\n")
    }
    // arguments are never the payload, and never a usage error
    const withArgs = receive(d, show({ title: "from the payload" }), ["--bogus", "show", "other"])
    expect(withArgs.code).toBe(0)
    expect(d.shown().map((c) => c.argv.slice(-2))).toEqual([["from the payload", "M"]])
  })

  it("US-18.2 only 'receive --help' alone shows the help; with a payload as well, or any other argument, it receives", () => {
    const d = desktop()
    const help = receive(d, undefined, ["--help"])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain("SSH_ORIGINAL_COMMAND")
    expect(receive(d, show({ title: "shown" }), ["--help", "x"]).code).toBe(0)
    expect(d.shown().map((c) => c.argv.at(-2))).toEqual(["shown"])
  })

  it("US-18.3 an urgency with a flag in it, an icon path and an unknown sound become normal, utilities-terminal and no sound hint", () => {
    const d = desktop()
    const r = receive(d, raw("ocpool-notify/1", "show", "", "T", "M", "low --icon=dialog-error", "../x", "beep"))
    expect(r.code).toBe(0)
    expect(d.shown().map((c) => c.argv)).toEqual([["--app-name=opencode", "--urgency=normal", "--icon=utilities-terminal", "--", "T", "M"]])
  })

  it("US-18.3 values are trimmed and read without case: ' CRITICAL ', 'Dialog-Error', 'ERROR'", () => {
    const d = desktop()
    expect(receive(d, raw("ocpool-notify/1", " SHOW ", "", "T", "M", " CRITICAL ", "Dialog-Error", "ERROR")).code).toBe(0)
    expect(d.shown()[0]!.argv).toEqual(["--app-name=opencode", "--urgency=critical", "--icon=dialog-error", "--hint=string:sound-name:dialog-error", "--", "T", "M"])
  })

  it("US-18.4 a payload of 10 lines: lines 9 and 10 are ignored", () => {
    const d = desktop()
    const r = receive(d, raw("ocpool-notify/1", "show", "", "T", "M", "low", "system-run", "done", "--urgency=critical", "$(touch M)"))
    expect(r.code).toBe(0)
    expect(d.shown().map((c) => c.argv)).toEqual([["--app-name=opencode", "--urgency=low", "--icon=system-run", "--hint=string:sound-name:complete", "--", "T", "M"]])
    expect(existsSync(join(d.base, "M"))).toBe(false)
  })

  it("US-18.5 'hello world' is shown as text under the unrecognised title, stderr says it was not understood, exit 0", () => {
    const d = desktop()
    const r = receive(d, "hello world")
    expect(r.code).toBe(0)
    expect(r.stdout).toBe("")
    expect(r.stderr).toBe("ocpool receive: payload not understood (11 bytes); shown as text\n")
    expect(d.shown().map((c) => c.argv)).toEqual([["--app-name=opencode", "--urgency=normal", "--icon=utilities-terminal", "--", UNRECOGNISED_TITLE, "hello world"]])
  })

  it("US-18.5 a bad op or a wrong header is unrecognised too; the raw text is cleaned and capped", () => {
    const d = desktop()
    expect(receive(d, raw("ocpool-notify/1", "run", "", "T")).code).toBe(0)
    expect(receive(d, raw("ocpool-notify/2", "show", "", "T")).code).toBe(0)
    expect(receive(d, "x".repeat(5000)).stderr).toBe("ocpool receive: payload not understood (5000 bytes); shown as text\n")
    const shown = d.shown().map((c) => c.argv.slice(-2))
    expect(shown[0]).toEqual([UNRECOGNISED_TITLE, "ocpool-notify/1 run T"])
    expect(shown[1]).toEqual([UNRECOGNISED_TITLE, "ocpool-notify/2 show T"])
    expect(Array.from(shown[2]![1]!)).toHaveLength(400)
  })

  it("US-18.6 TAB and BEL in a title arrive as spaces; an empty title is 'opencode'", () => {
    const d = desktop()
    expect(receive(d, raw("ocpool-notify/1", "show", "", "a\tb\u0007c", "x\u001b[31my")).code).toBe(0)
    expect(receive(d, raw("ocpool-notify/1", "show", "", " \t ", "m")).code).toBe(0)
    expect(d.shown().map((c) => c.argv.slice(-2))).toEqual([
      ["a b c", "x [31my"],
      ["opencode", "m"]
    ])
  })

  it("US-18.7 a desktop without notify-send: exit 75 and stderr names the missing channel; nothing on stdout", () => {
    const d = desktop({ notifySend: false })
    const r = receive(d, show({ title: "T" }), [], { PATH: d.bin })
    expect(r.code).toBe(75)
    expect(r.stdout).toBe("")
    expect(r.stderr).toMatch(/^ocpool receive: no notifier on linux: notify-send is not on PATH\n$/)
  })

  it("US-18.7 a notify-send that fails: exit 75 with its reason on stderr", () => {
    const d = desktop({ notifyExit: 1 })
    const r = receive(d, show({ title: "T" }))
    expect(r.code).toBe(75)
    expect(r.stderr).toMatch(/^ocpool receive: notification not delivered via notify-send: notify-send exited 1/)
  })

  it("US-30.6 a show with a key raises with --print-id and remembers the id; a close payload for that key closes it through gdbus", () => {
    const d = desktop()
    const key = "laptop:ses_abc"
    expect(receive(d, show({ title: "Done" }, key)).code).toBe(0)
    expect(d.shown()[0]!.argv).toContain("--print-id")
    const popups = JSON.parse(readFileSync(join(d.state, "popups.json"), "utf8")) as { popups: Array<{ key: string; id: number }> }
    expect(popups.popups.map((p) => [p.key, p.id])).toEqual([[key, 42]])
    // another key's close closes nothing
    expect(receive(d, encodeClose("laptop:other")).code).toBe(0)
    expect(d.closed()).toEqual([])
    const r = receive(d, encodeClose(key))
    expect(r.code).toBe(0)
    expect(r.stdout).toBe("")
    expect(d.closed().map((c) => c.argv)).toEqual([
      ["call", "--session", "--dest", "org.freedesktop.Notifications", "--object-path", "/org/freedesktop/Notifications", "--method", "org.freedesktop.Notifications.CloseNotification", "42"]
    ])
    // taken: a second close finds nothing to close
    expect(receive(d, encodeClose(key)).code).toBe(0)
    expect(d.closed()).toHaveLength(1)
  })

  it("US-30 a show without a key raises no --print-id and remembers nothing", () => {
    const d = desktop()
    expect(receive(d, show({ title: "T" })).code).toBe(0)
    expect(d.shown()[0]!.argv).not.toContain("--print-id")
    expect(existsSync(join(d.state, "popups.json"))).toBe(false)
  })

  it("US-13.2 an ssh session's bus: DBUS_SESSION_BUS_ADDRESS is set to /run/user/<uid>/bus only when it is unset and that socket exists", () => {
    const env = { PATH: "/bin" }
    expect(receiverEnv(env, "linux", 1000, (p) => p === "/run/user/1000/bus")).toEqual({ PATH: "/bin", DBUS_SESSION_BUS_ADDRESS: "unix:path=/run/user/1000/bus" })
    expect(receiverEnv(env, "linux", 1000, () => false)).toEqual(env)
    expect(receiverEnv({ ...env, DBUS_SESSION_BUS_ADDRESS: "unix:path=/x" }, "linux", 1000, () => true).DBUS_SESSION_BUS_ADDRESS).toBe("unix:path=/x")
    expect(receiverEnv(env, "darwin", 501, () => true)).toEqual(env)
    // the payload itself is not handed on to the notifier's programs
    expect(receiverEnv({ ...env, SSH_ORIGINAL_COMMAND: "ocpool-notify/1" }, "darwin", 501, () => true)).toEqual(env)
    // the child gets the caller's own address untouched
    const d = desktop()
    expect(receive(d, show({}), [], { DBUS_SESSION_BUS_ADDRESS: "unix:path=/tmp/my-bus" }).code).toBe(0)
    expect(d.shown()[0]!.dbus).toBe("unix:path=/tmp/my-bus")
  })

  it("US-13.2 ocpool notify over the hop → ocpool receive → notify-send: the same title, message (plus the host), urgency, icon and sound", () => {
    const d = desktop()
    const remote = tmp()
    const sshLog = join(remote, "ssh.log")
    // the ssh stub plays the desktop's sshd: its last argument becomes SSH_ORIGINAL_COMMAND of the forced command
    writeFileSync(
      join(remote, "ssh"),
      `#!${process.execPath}
const args = process.argv.slice(2)
require("fs").appendFileSync(${JSON.stringify(sshLog)}, JSON.stringify(args) + "\\n")
const r = require("child_process").spawnSync(process.execPath, [${JSON.stringify(cli)}, "receive"], {
  stdio: "inherit",
  env: { PATH: ${JSON.stringify(d.bin)}, HOME: ${JSON.stringify(d.base)}, OCPOOL_STATE_DIR: ${JSON.stringify(d.state)}, SSH_ORIGINAL_COMMAND: args[args.length - 1] }
})
process.exit(r.status ?? 255)
`,
      { mode: 0o755 }
    )
    const title = "Title $(touch M)"
    const message = "Body; touch M && `touch M`"
    const r = spawnSync(process.execPath, [cli, "notify", title, message, "--urgency", "critical", "--icon", "dialog-warning", "--sound", "permission", "--host", "desk"], {
      encoding: "utf8",
      timeout: 30_000,
      cwd: remote,
      env: { PATH: remote, HOME: remote, SSH_CONNECTION: "10.0.0.2 50000 10.0.0.1 22" }
    })
    expect(r.stderr).toBe("")
    expect(r.status).toBe(0)
    const ssh = readFileSync(sshLog, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Array<string>)
    expect(ssh).toHaveLength(1)
    expect(ssh[0]!.slice(0, ssh[0]!.indexOf("desk") + 1)).toEqual(["-T", "-o", "BatchMode=yes", "-o", "ConnectTimeout=5", "-o", "ClearAllForwardings=yes", "--", "desk"])
    expect(ssh[0]!.slice(ssh[0]!.indexOf("desk") + 1)).toHaveLength(1)
    // the remote command is one shell-inert word: the token of the eight-line payload
    const sent = ssh[0]!.at(-1)!
    expect(sent).toMatch(/^ocpool-notify-b64\/1\.[A-Za-z0-9_-]+$/)
    expect(Buffer.from(sent.slice(TOKEN_PREFIX.length), "base64url").toString("utf8").split("\n")).toEqual([
      "ocpool-notify/1",
      "show",
      "",
      title,
      `${message} [${hostname().split(".")[0]}]`,
      "critical",
      "dialog-warning",
      "permission"
    ])
    const argv = d.shown()[0]!.argv
    const short = hostname().split(".")[0]
    expect(argv.filter((a) => a !== "--print-id")).toEqual(["--app-name=opencode", "--urgency=critical", "--icon=dialog-warning", "--hint=string:sound-name:dialog-warning", "--", title, `${message.replaceAll("&", "&amp;")} [${short}]`])
    expect(existsSync(join(remote, "M"))).toBe(false)
    expect(existsSync(join(d.base, "M"))).toBe(false)
  })
})

describe("ocpool receive: the hop token (docs/DECISIONS.md; SPEC §10.6 departed from on the wire)", { timeout: 60_000 }, () => {
  it("US-18.1 a token whose title and message hold $(…), backticks, ;, &&, quotes, é and an emoji is decoded and shown byte-identical (surrounding whitespace trimmed); nothing runs", () => {
    const d = desktop()
    const title = "Which branch? $(touch M) `touch M` 'sq' \"dq\""
    const message = "; touch M && touch M | touch M > M ${IFS} é 😀 C:\\temp\\new"
    const p = raw("ocpool-notify/1", "show", "", title, message, "critical", "dialog-warning", "permission")
    for (const sent of [token(p), `\n  ${token(p)} \t\n`]) {
      const r = receive(d, sent)
      expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 0, stdout: "", stderr: "" })
    }
    // notify-send's own escaping of the body (notifySendArgs) is not the token's business: the fields arrive as sent
    const argv = [...notifySendArgs({ title, message, urgency: "critical", icon: "dialog-warning", sound: "permission" }, false)]
    expect(argv.slice(0, 6)).toEqual(["--app-name=opencode", "--urgency=critical", "--icon=dialog-warning", "--hint=string:sound-name:dialog-warning", "--", title])
    expect(d.shown().map((c) => c.argv)).toEqual([argv, argv])
    expect(existsSync(join(d.base, "M"))).toBe(false)
    expect(existsSync(join(root, "M"))).toBe(false)
  })

  it("US-18.3 / US-18.4 inside a token the whitelists, trimming and line rules hold as for the plain payload: the same argv for both forms", () => {
    const d = desktop()
    const payloads = [
      raw("ocpool-notify/1", "show", "", "T", "M", "low --icon=dialog-error", "../x", "beep"),
      raw("ocpool-notify/1", " SHOW ", "", "T", "M", " CRITICAL ", "Dialog-Error", "ERROR"),
      raw("ocpool-notify/1", "show", "", "a\tb\u0007c", "x\u001b[31my", "low", "system-run", "done", "--urgency=critical", "$(touch M)")
    ]
    for (const p of payloads) {
      expect(receive(d, p).code).toBe(0)
      expect(receive(d, token(p)).code).toBe(0)
    }
    const shown = d.shown().map((c) => c.argv)
    expect(shown).toHaveLength(6)
    for (let i = 0; i < 6; i += 2) expect(shown[i + 1]).toEqual(shown[i])
    expect(shown[4]).toEqual(["--app-name=opencode", "--urgency=low", "--icon=system-run", "--hint=string:sound-name:complete", "--", "a b c", "x [31my"])
  })

  it("US-30.6 show and close tokens: a show with a key is remembered, the close token for that key closes it through gdbus", () => {
    const d = desktop()
    const key = "laptop:ses_abc"
    expect(receive(d, token(show({ title: "Done" }, key)))).toMatchObject({ code: 0, stdout: "", stderr: "" })
    expect(d.shown()[0]!.argv).toContain("--print-id")
    expect(receive(d, token(encodeClose(key)))).toMatchObject({ code: 0, stdout: "", stderr: "" })
    expect(d.closed().map((c) => c.argv.at(-1))).toEqual(["42"])
  })

  it("US-18.5 a malformed token is shown as text under the unrecognised title, never decoded into fields: a bad character, a space or a newline inside, a bad length, stray tail bits, bytes that are not UTF-8, a token inside a token", () => {
    const d = desktop()
    const cases = [
      `${TOKEN_PREFIX}b2Nw$(touch M)`,
      `${TOKEN_PREFIX}b2Nw b2Nw`,
      `${TOKEN_PREFIX}b2Nw\nshow`,
      `${TOKEN_PREFIX}b2Nwc`,
      `${TOKEN_PREFIX}b2Nwb3`,
      `${TOKEN_PREFIX}b2Nw=`,
      `${TOKEN_PREFIX}b2Nw+/`,
      token(Buffer.concat([Buffer.from("ocpool-notify/1\nshow\n\nT"), Buffer.from([0xff, 0xfe]), Buffer.from("\nM")])),
      token(Buffer.from([0xed, 0xa0, 0x80]))
    ]
    for (const c of cases) {
      const r = receive(d, c)
      expect({ c, code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ c, code: 0, stdout: "", stderr: `ocpool receive: payload not understood (${Buffer.byteLength(c)} bytes); shown as text\n` })
    }
    expect(d.shown().map((c) => c.argv.slice(-2))).toEqual(cases.map((c) => [UNRECOGNISED_TITLE, c.replace(/\s+/g, " ")]))
    // a token that decodes to another token is not decoded twice
    const nested = token(token(show({ title: "inner" })))
    expect(receive(d, nested).stderr).toMatch(/^ocpool receive: payload not understood \(\d+ bytes\); shown as text\n$/)
    expect(d.shown().at(-1)!.argv.slice(-2)).toEqual([UNRECOGNISED_TITLE, token(show({ title: "inner" }))])
    expect(existsSync(join(d.base, "M"))).toBe(false)
  })

  it("US-18 length limits: a token is decoded, then its payload is cut at 4096 bytes exactly like the plain payload; a token over 16 KiB is refused undecoded and shown as text", () => {
    const d = desktop()
    // 6,000 bytes of message: the plain payload and its token (8,000+ characters) give the same popup
    const long = raw("ocpool-notify/1", "show", "", "T", "é".repeat(3000), "critical", "dialog-error", "error")
    expect(receive(d, long).code).toBe(0)
    expect(receive(d, token(long))).toMatchObject({ code: 0, stdout: "", stderr: "" })
    const [plain, viaToken] = d.shown().map((c) => c.argv)
    expect(viaToken).toEqual(plain)
    expect(Array.from(viaToken!.at(-1)!)).toHaveLength(400)
    // the token of the largest payload the receiver reads (4,096 bytes) is 5,482 characters
    const max = raw("ocpool-notify/1", "show", "", "T", "m".repeat(4096 - 44), "low", "system-run", "done")
    expect(Buffer.byteLength(max)).toBe(4096)
    expect(token(max)).toHaveLength(5482)
    expect(receive(d, token(max))).toMatchObject({ code: 0, stderr: "" })
    expect(d.shown().at(-1)!.argv.slice(0, 4)).toEqual(["--app-name=opencode", "--urgency=low", "--icon=system-run", "--hint=string:sound-name:complete"])
    // 16,384 characters: still decoded; one more: refused before decoding
    const body = (n: number) => raw("ocpool-notify/1", "show", "", `fits ${n}`, "x".repeat(n))
    const at = (chars: number) => {
      for (let n = Math.floor(((chars - TOKEN_PREFIX.length) * 3) / 4) - 40; ; n++) if (token(body(n)).length >= chars) return token(body(n))
    }
    const edge = at(16_384)
    expect(edge).toHaveLength(16_384)
    expect(receive(d, edge)).toMatchObject({ code: 0, stderr: "" })
    expect(d.shown().at(-1)!.argv.at(-2)).toMatch(/^fits \d+$/)
    const over = `${edge}AAAA`
    expect(receive(d, over).stderr).toBe(`ocpool receive: payload not understood (${over.length} bytes); shown as text\n`)
    expect(d.shown().at(-1)!.argv.slice(-2)).toEqual([UNRECOGNISED_TITLE, `${over.slice(0, 399)}…`])
  })

  it("US-46 a probe payload (plain or as a token) shows nothing, answers with the fixed line on stderr and exits 0; no other payload prints that line", () => {
    const d = desktop()
    for (const p of ["ocpool-notify/1\nprobe", token("ocpool-notify/1\nprobe"), token(" ocpool-notify/1 \n PROBE \nextra")]) {
      const r = receive(d, p)
      expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 0, stdout: "", stderr: PROBE_ANSWER_LINE })
    }
    expect(d.shown()).toEqual([])
    expect(d.closed()).toEqual([])
    for (const p of [token(show({})), token(encodeClose("k:1")), "hello", token("probe"), `${TOKEN_PREFIX}probe`]) expect(receive(d, p).stderr).not.toContain("probe answered")
  })
})
