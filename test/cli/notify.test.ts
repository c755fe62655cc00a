/**
 * `ocpool notify` (SPEC §12.2, §10.4, §10.5; US-11, US-13.1, US-14.3, US-14.4, US-29), run as the built CLI
 * in a child process with stub `notify-send` and `ssh` as the only programs on PATH and an environment built from
 * scratch (no SSH_* of the test runner leaks in).
 */
import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { composeNotification } from "../../src/cli/notify.js"
import { calls, cli, ensureBuilt, stub } from "./builtCli.js"

ensureBuilt("notify --help")

const tmp = () => mkdtempSync(join(tmpdir(), "ocpool-notify-"))
const short = hostname().split(".")[0]!


const ocpool = (bin: string, args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const r = spawnSync(process.execPath, [cli, "notify", ...args], { encoding: "utf8", timeout: 30_000, cwd: bin, env: { PATH: bin, HOME: bin, ...env } })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

const REMOTE = { SSH_CONNECTION: "10.0.0.2 50000 10.0.0.1 22" }

describe("ocpool notify (SPEC §12.2)", { timeout: 60_000 }, () => {
  it("US-14.3 a failing hop: stderr reads 'ocpool: notification not delivered via ssh: <reason>', exit 75; US-14.4 notify-send is not called", () => {
    const bin = tmp()
    stub(bin, "ssh", 255, "ssh: connect to host desk port 22: Connection refused\r\n")
    stub(bin, "notify-send")
    const r = ocpool(bin, ["T", "M", "--host", "desk"], REMOTE)
    expect(r.code).toBe(75)
    expect(r.stdout).toBe("")
    expect(r.stderr).toBe("ocpool: notification not delivered via ssh: ssh exited 255: ssh: connect to host desk port 22: Connection refused\n")
    expect(calls(bin, "ssh")).toHaveLength(1)
    expect(calls(bin, "notify-send")).toEqual([])
  })

  it("US-14.3 --json on a failed hop is exactly {ok, channel, reason, id}; the stderr line is still written", () => {
    const bin = tmp()
    stub(bin, "ssh", 255, "Permission denied (publickey).\n")
    const r = ocpool(bin, ["--title", "T", "--json", "--via", "ssh", "--host", "desk"])
    expect(r.code).toBe(75)
    expect(r.stdout).toBe('{"ok":false,"channel":"ssh","reason":"ssh exited 255: Permission denied (publickey).","id":null}\n')
    expect(r.stderr).toBe("ocpool: notification not delivered via ssh: ssh exited 255: Permission denied (publickey).\n")
  })

  it("US-13.1 in an SSH session with --host desk, ssh gets BatchMode, ConnectTimeout=5, ClearAllForwardings and exactly one argument after desk", () => {
    const bin = tmp()
    stub(bin, "ssh")
    const r = ocpool(bin, ["Title", "Message", "--json"], { ...REMOTE, OCPOOL_NOTIFY_HOST: "ignored-env-host" })
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual({ ok: true, channel: "ssh", reason: null, id: null })
    const r2 = ocpool(bin, ["Title", "Message", "--host", "desk"], REMOTE)
    expect(r2.code).toBe(0)
    expect(r2.stdout).toBe("notification delivered via ssh\n")
    const [envHost, flagHost] = calls(bin, "ssh")
    expect(envHost![envHost!.indexOf("--") + 1]).toBe("ignored-env-host")
    // --host wins over OCPOOL_NOTIFY_HOST
    const argv = flagHost!
    expect(argv.slice(0, 9)).toEqual(["-T", "-o", "BatchMode=yes", "-o", "ConnectTimeout=5", "-o", "ClearAllForwardings=yes", "--", "desk"])
    expect(argv).toHaveLength(10)
    // the remote argument is the payload's hop token: one shell-inert word (docs/DECISIONS.md)
    expect(argv[9]).toMatch(/^ocpool-notify-b64\/1\.[A-Za-z0-9_-]+$/)
    const lines = Buffer.from(argv[9]!.slice("ocpool-notify-b64/1.".length), "base64url").toString("utf8").split("\n")
    expect(lines.slice(0, 2)).toEqual(["ocpool-notify/1", "show"])
    expect(lines.slice(3)).toEqual(["Title", `Message [${short}]`, "normal", "utilities-terminal", "none"])
  })

  it("US-13.3 a remote session without a hop host: no ssh runs, the reason names ocpool tunnel setup, exit 75", () => {
    const bin = tmp()
    stub(bin, "ssh")
    stub(bin, "notify-send")
    const r = ocpool(bin, ["T"], REMOTE)
    expect(r.code).toBe(75)
    expect(r.stderr).toBe("ocpool: notification not delivered via none: remote session without a notify host; run ocpool tunnel setup\n")
    expect(calls(bin, "ssh")).toEqual([])
    expect(calls(bin, "notify-send")).toEqual([])
  })

  it("US-11.7 local delivery: title and message are separate argv entries after --; --json is exactly {ok, channel, reason, id}", () => {
    const bin = tmp()
    stub(bin, "notify-send")
    const r = ocpool(bin, ["He said \"hi\"; $(id)", "`id` and\ttabs", "--json"])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe('{"ok":true,"channel":"notify-send","reason":null,"id":null}\n')
    expect(r.stderr).toBe("")
    expect(calls(bin, "notify-send")).toEqual([["--app-name=opencode", "--urgency=normal", "--icon=utilities-terminal", "--", 'He said "hi"; $(id)', "`id` and tabs"]])
    const text = ocpool(bin, ["--title", "T", "--message", "M", "--via", "local"])
    expect(text.code).toBe(0)
    expect(text.stdout).toBe("notification delivered via notify-send\n")
  })

  it("US-11.1 --kind fills the §10.2 content; explicit values win; a test kind is normal, utilities-terminal and silent", () => {
    const bin = tmp()
    stub(bin, "notify-send")
    expect(ocpool(bin, ["--kind", "done"]).code).toBe(0)
    expect(ocpool(bin, ["--kind", "error", "--message", "Failed: boom", "--urgency", "low"]).code).toBe(0)
    expect(ocpool(bin, ["--kind", "test"]).code).toBe(0)
    expect(ocpool(bin, ["Mine", "--kind", "question"]).code).toBe(0)
    expect(calls(bin, "notify-send")).toEqual([
      ["--app-name=opencode", "--urgency=normal", "--icon=emblem-default", "--hint=string:sound-name:complete", "--", "opencode — ocpool notify", "Finished — waiting for your review"],
      ["--app-name=opencode", "--urgency=low", "--icon=dialog-error", "--hint=string:sound-name:dialog-error", "--", "opencode — ocpool notify", "Failed: boom"],
      ["--app-name=opencode", "--urgency=normal", "--icon=utilities-terminal", "--", "opencode — ocpool notify", `Test notification from ${short}`],
      ["--app-name=opencode", "--urgency=normal", "--icon=dialog-information", "--hint=string:sound-name:message-new-instant", "--", "Mine", "Question waiting for your answer"]
    ])
  })

  it("US-29.4 values outside the whitelists are the defaults (with a note on stderr); OCPOOL_SOUND=0 silences", () => {
    const bin = tmp()
    stub(bin, "notify-send")
    const r = ocpool(bin, ["T", "--urgency", "low --icon=dialog-error", "--icon", "../x", "--sound", "$(rm -rf ~)"])
    expect(r.code).toBe(0)
    expect(r.stderr.split("\n").filter((l) => l !== "")).toEqual([
      'ocpool: --urgency "low --icon=dialog-error" is not one of low, normal, critical; normal is used',
      'ocpool: --icon "../x" is not one of utilities-terminal, dialog-information, dialog-error, dialog-warning, system-run, emblem-default; utilities-terminal is used',
      'ocpool: --sound "$(rm -rf ~)" is not one of none, done, question, permission, error; none is used'
    ])
    expect(ocpool(bin, ["--kind", "done", "--sound", "chime"]).code).toBe(0)
    expect(ocpool(bin, ["--kind", "done"], { OCPOOL_SOUND: " off " }).code).toBe(0)
    expect(calls(bin, "notify-send")).toEqual([
      ["--app-name=opencode", "--urgency=normal", "--icon=utilities-terminal", "--", "T", ""],
      ["--app-name=opencode", "--urgency=normal", "--icon=emblem-default", "--hint=string:sound-name:complete", "--", "opencode — ocpool notify", "Finished — waiting for your review"],
      ["--app-name=opencode", "--urgency=normal", "--icon=emblem-default", "--", "opencode — ocpool notify", "Finished — waiting for your review"]
    ])
  })

  it("US-11 without a title (no TITLE, no --title, no --kind; or one that is blank once cleaned) it is a usage error, exit 2", () => {
    const bin = tmp()
    stub(bin, "notify-send")
    for (const args of [[], ["--message", "M"], ["\t \u0007"], ["--title", "", "--json"]]) {
      const r = ocpool(bin, args)
      expect(r.code, args.join(" ")).toBe(2)
      expect(r.stdout).toBe("")
      expect(r.stderr.split("\n")[0]).toBe("ocpool: notify needs a title (or --kind)")
    }
    const twice = ocpool(bin, ["A", "--title", "B"])
    expect(twice.code).toBe(2)
    expect(twice.stderr.split("\n")[0]).toBe("ocpool: notify: give the title once, as TITLE or as --title")
    expect(ocpool(bin, ["T", "--via", "carrier-pigeon"]).code).toBe(2)
    // a flag @effect/cli does not know, or one missing its value, is never sent as a text
    for (const args of [["T", "--bogus"], ["--via"], ["--kind", "done", "--bogus"]]) {
      const r = ocpool(bin, args)
      expect(r.code, args.join(" ")).toBe(2)
      expect(r.stderr.split("\n")[0]).toMatch(/^ocpool: notify: (unknown flag '--bogus'|--via needs a value \(--via auto \| local \| ssh\))$/)
    }
    expect(calls(bin, "notify-send")).toEqual([])
  })

  it("US-11.9 no notifier here: {ok:false, channel:'none'} with the reason, exit 75", () => {
    const bin = tmp()
    const r = ocpool(bin, ["T", "--json", "--via", "local"], { PATH: bin })
    expect(r.code).toBe(75)
    expect(JSON.parse(r.stdout)).toEqual({ ok: false, channel: "none", reason: "no notifier on linux: notify-send is not on PATH", id: null })
    expect(r.stderr).toBe("ocpool: notification not delivered via none: no notifier on linux: notify-send is not on PATH\n")
  })

  it("US-11 texts are capped in code points: a 200-emoji title keeps 89 and '…'", () => {
    const c = composeNotification({ kind: undefined, title: "😀".repeat(200), message: "x".repeat(1000), urgency: undefined, icon: undefined, sound: undefined }, true, "h")
    expect(c._tag).toBe("Notification")
    if (c._tag !== "Notification") return
    expect(Array.from(c.notification.title)).toHaveLength(90)
    expect(c.notification.title.endsWith("😀…")).toBe(true)
    expect(Array.from(c.notification.message)).toHaveLength(400)
  })
})
