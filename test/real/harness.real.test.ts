/**
 * Self-test of the real-dependency harness (test/real): a real sshd with a forced command, and a
 * private D-Bus session bus with python-dbusmock's notification daemon, driven by the real `ssh`,
 * `notify-send` and `gdbus`. Run with `npm run test:real` (Debian packages: scripts/ci-real-deps.sh).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { startDbusMock, type DbusMock } from "./dbus.js"
import { startSshd, type Sshd } from "./sshd.js"

interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs a command to the end; never throws on a non-zero exit. */
const runCmd = (file: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = process.env): Promise<Ran> =>
  new Promise((resolve, reject) => {
    execFile(file, args, { env, timeout: 20_000, encoding: "utf8" }, (error, stdout, stderr) => {
      if (error !== null && typeof error.code !== "number") return reject(error)
      resolve({ code: error === null ? 0 : (error.code as number), stdout, stderr })
    })
  })

/** The options the notifier's SSH hop passes, then `-- <host> <payload>`. */
const HOP_OPTIONS = ["-T", "-o", "BatchMode=yes", "-o", "ConnectTimeout=5", "-o", "ClearAllForwardings=yes"]

const CLOSE_ARGS = ["call", "--session", "--dest", "org.freedesktop.Notifications", "--object-path", "/org/freedesktop/Notifications", "--method", "org.freedesktop.Notifications.CloseNotification"]

describe("real sshd with a forced command (test/real/sshd.ts)", () => {
  let sshd: Sshd | undefined
  let work = ""
  const server = (): Sshd => {
    if (sshd === undefined) throw new Error("sshd did not start")
    return sshd
  }
  const received = (): string => join(work, "received")

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "ocpool-real-ssh-"))
    sshd = await startSshd({ forcedCommand: `printf %s "$SSH_ORIGINAL_COMMAND" > ${received()}` })
  }, 60_000)

  afterAll(async () => {
    await sshd?.stop()
    if (work !== "") rmSync(work, { recursive: true, force: true })
  }, 30_000)

  it("US-13 harness: plain `ssh -- <alias> <payload>` with binDir on PATH hands the payload to the forced command byte for byte, and nothing in it runs", async () => {
    const s = server()
    const canaries = [join(work, "CANARY-subst"), join(work, "CANARY-backtick"), join(work, "CANARY-semicolon"), join(work, "CANARY-pipe")]
    const payloads = [
      "plain",
      `line one\nline two\n`,
      `"double" 'single' \\ back\\slash $HOME \${PATH}`,
      `$(touch ${canaries[0]})`,
      `\`touch ${canaries[1]}\``,
      `x; touch ${canaries[2]} && echo y`,
      `a | touch ${canaries[3]} & wait`,
      `{"v":1,"title":"Build — done ✓","body":"é 😀 \\"q\\" $(id) \`id\`"}`,
      `  leading and trailing spaces\t`,
      `-oProxyCommand=touch ${canaries[0]}`
    ]
    const env = { ...process.env, PATH: `${s.binDir}:${process.env.PATH ?? ""}` }
    for (const payload of payloads) {
      rmSync(received(), { force: true })
      const r = await runCmd("ssh", [...HOP_OPTIONS, "--", s.alias, payload], env)
      expect({ payload, code: r.code, stderr: r.stderr }).toEqual({ payload, code: 0, stderr: "" })
      expect(readFileSync(received(), "utf8")).toBe(payload)
    }
    for (const canary of canaries) expect(existsSync(canary), canary).toBe(false)
    expect(s.log()).toContain("forced-command")
  })

  it("US-13 harness: `ssh -F <config>` reaches the server too; env reaches every command of the forced line; HOME is the isolated one; stdout and exit status come back", async () => {
    const s = server()
    const second = join(work, "second")
    s.setForcedCommand(`printf %s "$OCPOOL_TEST_VAR" > ${received()}; printf '%s|%s' "$OCPOOL_TEST_VAR" "$SSH_ORIGINAL_COMMAND" > ${second}; echo "$HOME"; exit 3`, {
      OCPOOL_TEST_VAR: `it's "quoted" $(no)`
    })
    try {
      const r = await runCmd("ssh", [...s.sshArgs(), ...HOP_OPTIONS, "--", s.alias, "p é"])
      expect(r).toEqual({ code: 3, stdout: `${s.home}\n`, stderr: "" })
      expect(readFileSync(received(), "utf8")).toBe(`it's "quoted" $(no)`)
      expect(readFileSync(second, "utf8")).toBe(`it's "quoted" $(no)|p é`)
    } finally {
      s.setForcedCommand(`printf %s "$SSH_ORIGINAL_COMMAND" > ${received()}`)
    }
  })

  it("US-13 harness: ssh takes ~/.ssh/config from the passwd home, not $HOME, so a temp HOME does not reach it (binDir's wrapper does)", async () => {
    const s = server()
    const home = join(work, "home")
    s.writeClientHome(home)
    const viaHome = await runCmd("ssh", ["-G", s.alias], { ...process.env, HOME: home })
    expect(viaHome.stdout).toMatch(new RegExp(`^hostname ${s.alias}$`, "m"))
    // the files writeClientHome wrote are a working client setup when named explicitly
    rmSync(received(), { force: true })
    const r = await runCmd("ssh", ["-F", join(home, ".ssh", "config"), ...HOP_OPTIONS, "--", s.alias, "via home"])
    expect(r).toEqual({ code: 0, stdout: "", stderr: "" })
    expect(readFileSync(received(), "utf8")).toBe("via home")
    const viaWrapper = await runCmd("ssh", ["-G", s.alias], { ...process.env, PATH: `${s.binDir}:${process.env.PATH ?? ""}` })
    expect(viaWrapper.stdout).toMatch(/^hostname 127\.0\.0\.1$/m)
    expect(viaWrapper.stdout).toMatch(new RegExp(`^port ${s.port}$`, "m"))
  })
})

describe("private session bus with python-dbusmock's notification daemon (test/real/dbus.ts)", () => {
  let mock: DbusMock | undefined
  const bus = (): DbusMock => {
    if (mock === undefined) throw new Error("the dbus mock did not start")
    return mock
  }

  beforeAll(async () => {
    mock = await startDbusMock()
  }, 60_000)

  afterAll(async () => {
    await mock?.stop()
  }, 30_000)

  it("US-11 harness: notify-send's app name, urgency, icon, sound hint, summary and body land in the mock exactly; --print-id prints the mock's id; gdbus CloseNotification is recorded", async () => {
    const m = bus()
    await m.reset()
    const env = { ...process.env, ...m.env }
    const sent = await runCmd(
      "notify-send",
      ["--app-name=opencode", "--urgency=critical", "--icon=dialog-error", "--hint=string:sound-name:dialog-error", "--print-id", "--", "Title $(x)", "Body `y`"],
      env
    )
    expect(sent.code).toBe(0)
    expect(sent.stdout).toMatch(/^[1-9]\d*\n$/)
    const id = Number(sent.stdout.trim())
    const notes = await m.notifications()
    expect(notes).toHaveLength(1)
    expect(notes[0]).toMatchObject({
      appName: "opencode",
      replacesId: 0,
      icon: "dialog-error",
      summary: "Title $(x)",
      body: "Body `y`",
      actions: [],
      expireTimeout: -1,
      hints: { urgency: 2, "sound-name": "dialog-error" }
    })

    const closed = await runCmd("gdbus", [...CLOSE_ARGS, String(id)], env)
    expect(closed).toMatchObject({ code: 0, stdout: "()\n" })
    expect(await m.closes()).toEqual([id])
  })

  it("US-11 harness: summaries and bodies come back byte for byte (quotes, $(...), backticks, non-ASCII, emoji, newlines); ids count up; reset() forgets", async () => {
    const m = bus()
    await m.reset()
    const env = { ...process.env, ...m.env }
    const cases: Array<[string, string]> = [
      [`"double" 'single' $(touch /nonexistent/x) \`id\``, `é à ü — ✓ 😀 "q" 'q' $(id) \`id\` \${HOME}`],
      ["newlines replaced by spaces: a b c", "line 1\nline 2\n\ttabbed"],
      ["<b>not markup</b> & amp;", "  spaces kept  "]
    ]
    const ids: Array<number> = []
    for (const [summary, body] of cases) {
      const r = await runCmd("notify-send", ["--app-name=opencode", "--print-id", "--", summary, body], env)
      expect(r.code).toBe(0)
      ids.push(Number(r.stdout.trim()))
    }
    const notes = await m.notifications()
    expect(notes.map((n) => [n.summary, n.body])).toEqual(cases)
    expect(notes.every((n) => n.hints.urgency === 1 && n.hints["sound-name"] === undefined)).toBe(true)
    expect(ids.every((id, i) => i === 0 || id === ids[i - 1]! + 1)).toBe(true)
    await m.reset()
    expect(await m.calls()).toEqual([])
  })

  it("US-11 harness: notify-send C-unescapes the body (g_strcompress) but not the summary: doubling every backslash of the body gets it through byte for byte", async () => {
    const m = bus()
    await m.reset()
    const env = { ...process.env, ...m.env }
    const text = `a\\nb c\\\\d e\\tf \\101 \\q C:\\path\\`
    await runCmd("notify-send", ["--", text, text], env)
    await runCmd("notify-send", ["--", text, text.replaceAll("\\", "\\\\")], env)
    const notes = await m.notifications()
    expect(notes.map((n) => [n.summary, n.body])).toEqual([
      [text, "a\nb c\\d e\tf A q C:path"],
      [text, text]
    ])
  })

  it("US-13 harness: the two together — a forced command given DBUS_SESSION_BUS_ADDRESS through env raises the payload on the mock", async () => {
    const m = bus()
    await m.reset()
    const s = await startSshd({
      forcedCommand: `notify-send --app-name=opencode --print-id -- "$SSH_ORIGINAL_COMMAND" "from ssh"`,
      env: { ...m.env, PATH: process.env.PATH ?? "/usr/bin:/bin" },
      alias: "ocpool-test-chain"
    })
    try {
      const payload = `done: "quoted" $(touch /nonexistent/y) \`id\` é 😀`
      const r = await runCmd("ssh", [...HOP_OPTIONS, "--", s.alias, payload], { ...process.env, PATH: `${s.binDir}:${process.env.PATH ?? ""}` })
      expect(r.code).toBe(0)
      expect(r.stdout).toMatch(/^[1-9]\d*\n$/)
      const notes = await m.notifications()
      expect(notes.map((n) => [n.appName, n.summary, n.body])).toEqual([["opencode", payload, "from ssh"]])
    } finally {
      await s.stop()
    }
  })
})
