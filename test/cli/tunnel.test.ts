/**
 * `ocpool tunnel setup` (SPEC §10.7, US-13.4, US-13.5), run as the built CLI in a child process with a
 * temporary HOME only: the real ~/.ssh is never touched. ssh-keygen is a stub, the only program on PATH, that
 * records its argv and writes a key pair with a wide mode (so the command's own chmod is what is seen).
 */
import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { cli, ensureBuilt } from "./builtCli.js"

ensureBuilt("tunnel setup --help")

const tmp = () => mkdtempSync(join(tmpdir(), "ocpool-tunnel-"))
const PUBLIC = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIStubStubStubStubStubStubStubStubStubStubStub"

/** A temporary HOME and a PATH holding only the ssh-keygen stub. */
const sandbox = () => {
  const home = tmp()
  const bin = tmp()
  const log = join(bin, "keygen.log")
  writeFileSync(
    join(bin, "ssh-keygen"),
    `#!${process.execPath}
const fs = require("fs")
const args = process.argv.slice(2)
fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify(args) + "\\n")
const f = args[args.indexOf("-f") + 1]
if (args.includes("-y")) { process.stdout.write(fs.readFileSync(f + ".pub", "utf8")); process.exit(0) }
const comment = args[args.indexOf("-C") + 1]
fs.writeFileSync(f, "-----BEGIN OPENSSH PRIVATE KEY-----\\nstub\\n-----END OPENSSH PRIVATE KEY-----\\n", { mode: 0o644 })
fs.writeFileSync(f + ".pub", ${JSON.stringify(PUBLIC)} + " " + comment + "\\n", { mode: 0o644 })
`,
    { mode: 0o755 }
  )
  const calls = (): Array<Array<string>> => (existsSync(log) ? readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Array<string>) : [])
  return { home, bin, calls }
}

const ocpool = (s: { home: string; bin: string }, args: ReadonlyArray<string>) => {
  const r = spawnSync(process.execPath, [cli, ...args], {
    encoding: "utf8",
    timeout: 30_000,
    cwd: s.home,
    env: { PATH: s.bin, HOME: s.home, XDG_CONFIG_HOME: join(s.home, ".config"), XDG_STATE_HOME: join(s.home, ".state") }
  })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

const mode = (p: string) => statSync(p).mode & 0o777
const begin = "# >>> opencode-pool ocpool-desktop >>>"
const count = (text: string, part: string) => text.split(part).length - 1
const shortHost = (hostname().split(".")[0] ?? "").replace(/[^A-Za-z0-9_-]/g, "") || "host"

/** Every path under `dir` with its size, mode and mtime. */
const snapshot = (dir: string): Record<string, string> => {
  const out: Record<string, string> = {}
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name)
      const st = lstatSync(p)
      out[p] = `${st.mode} ${st.size} ${st.mtimeMs} ${st.isFile() ? readFileSync(p, "utf8") : ""}`
      if (st.isDirectory()) walk(p)
    }
  }
  walk(dir)
  return out
}

describe("ocpool tunnel setup (SPEC §10.7)", { timeout: 90_000 }, () => {
  it("US-13.4 run twice: one marked ocpool-desktop block with the ControlMaster options, key 0600, the config byte-identical, the authorized_keys line printed", () => {
    const s = sandbox()
    const first = ocpool(s, ["tunnel", "setup", "--host", "desk.lan"])
    expect(first.stderr).toBe("")
    expect(first.code).toBe(0)
    const config = join(s.home, ".ssh", "config")
    const key = join(s.home, ".ssh", "ocpool_notify")
    const text = readFileSync(config, "utf8")
    const before = statSync(config).mtimeMs
    const second = ocpool(s, ["tunnel", "setup", "--host", "desk.lan"])
    expect(second.code).toBe(0)
    expect(readFileSync(config, "utf8")).toBe(text)
    expect(statSync(config).mtimeMs).toBe(before)
    expect(count(text, begin)).toBe(1)
    expect(count(text, "# <<< opencode-pool ocpool-desktop <<<")).toBe(1)
    for (const line of ["Host ocpool-desktop", "  HostName desk.lan", "  IdentityFile ~/.ssh/ocpool_notify", "  IdentitiesOnly yes", "  BatchMode yes", "  ConnectTimeout 5", "  ControlMaster auto", "  ControlPath ~/.ssh/ocpool-%C", "  ControlPersist 10m", "  ClearAllForwardings yes", "  RequestTTY no", "  StrictHostKeyChecking accept-new"]) {
      expect(text.split("\n")).toContain(line)
    }
    expect(mode(key)).toBe(0o600)
    expect(mode(config)).toBe(0o600)
    expect(mode(join(s.home, ".ssh"))).toBe(0o700)
    // the key is created once, by the documented command
    expect(s.calls().filter((c) => !c.includes("-y"))).toEqual([["-t", "ed25519", "-N", "", "-C", `ocpool-notify@${shortHost}`, "-f", key]])
    for (const out of [first.stdout, second.stdout]) {
      const line = out.split("\n").find((l) => l.startsWith("command="))
      expect(line).toBe(`command="ocpool receive",no-pty,no-port-forwarding,no-agent-forwarding,no-X11-forwarding,no-user-rc ${PUBLIC} ocpool-notify@${shortHost}`)
      expect(out).toContain(begin)
      expect(out).toMatch(/Next steps/)
    }
    expect(first.stdout).toContain("block ocpool-desktop written")
    expect(second.stdout).toContain("block ocpool-desktop unchanged")
  })

  it("US-13.4 an existing config keeps its other text; a new --host replaces the block in place; --receiver, --user, --port, --alias", () => {
    const s = sandbox()
    mkdirSync(join(s.home, ".ssh"), { mode: 0o700 })
    const config = join(s.home, ".ssh", "config")
    writeFileSync(config, "Host work\n  HostName work.example\n\nHost *\n  ServerAliveInterval 30\n", { mode: 0o644 })
    expect(ocpool(s, ["tunnel", "setup", "--host", "desk.lan"]).code).toBe(0)
    const r = ocpool(s, ["tunnel", "setup", "--host", "10.0.0.7"])
    expect(r.code).toBe(0)
    const text = readFileSync(config, "utf8")
    expect(text.startsWith("Host work\n  HostName work.example\n\nHost *\n  ServerAliveInterval 30\n\n# >>> opencode-pool ocpool-desktop >>>\n")).toBe(true)
    expect(count(text, begin)).toBe(1)
    expect(text).toContain("  HostName 10.0.0.7\n")
    expect(text).not.toContain("desk.lan")
    // the user's own mode is kept
    expect(mode(config)).toBe(0o644)

    const other = ocpool(s, ["tunnel", "setup", "--host", "localhost", "--port", "2222", "--user", "me", "--alias", "my-desk", "--receiver", '/opt/ocpool/bin/ocpool receive "x"'])
    expect(other.code).toBe(0)
    const both = readFileSync(config, "utf8")
    expect(count(both, begin)).toBe(1)
    expect(both).toContain("# >>> opencode-pool my-desk >>>\nHost my-desk\n  HostName localhost\n  User me\n  Port 2222\n")
    expect(other.stdout.split("\n").find((l) => l.startsWith("command="))).toMatch(/^command="\/opt\/ocpool\/bin\/ocpool receive \\"x\\"",no-pty,no-port-forwarding,/)
    expect(other.stdout).toContain("OCPOOL_NOTIFY_HOST=my-desk")
    // one key only: the second and third runs found it
    expect(s.calls().filter((c) => !c.includes("-y"))).toHaveLength(1)
  })

  it("US-13.4 a symbolic link at ~/.ssh/config stays a link; the block is written into its target", () => {
    const s = sandbox()
    mkdirSync(join(s.home, ".ssh"), { mode: 0o700 })
    const target = join(s.home, "dotfiles-ssh-config")
    writeFileSync(target, "Host a\n", { mode: 0o600 })
    symlinkSync(target, join(s.home, ".ssh", "config"))
    expect(ocpool(s, ["tunnel", "setup", "--host", "desk.lan"]).code).toBe(0)
    expect(lstatSync(join(s.home, ".ssh", "config")).isSymbolicLink()).toBe(true)
    expect(readFileSync(target, "utf8")).toContain(begin)
  })

  it("US-13.5 --print creates and changes nothing, and shows a placeholder for a key that does not exist", () => {
    const s = sandbox()
    const r = ocpool(s, ["tunnel", "setup", "--host", "desk.lan", "--print"])
    expect(r.code).toBe(0)
    expect(readdirSync(s.home)).toEqual([])
    expect(s.calls()).toEqual([])
    expect(r.stdout).toContain(`${begin}\nHost ocpool-desktop\n  HostName desk.lan\n`)
    expect(r.stdout.split("\n")).toContain(
      'command="ocpool receive",no-pty,no-port-forwarding,no-agent-forwarding,no-X11-forwarding,no-user-rc <public key of ~/.ssh/ocpool_notify, created on setup>'
    )
  })

  it("US-13.5 --print with an existing key and config shows the real public key and leaves every file as it was", () => {
    const s = sandbox()
    expect(ocpool(s, ["tunnel", "setup", "--host", "desk.lan"]).code).toBe(0)
    const before = snapshot(s.home)
    const r = ocpool(s, ["tunnel", "setup", "--host", "other.lan", "--print", "--alias", "second"])
    expect(r.code).toBe(0)
    expect(snapshot(s.home)).toEqual(before)
    expect(r.stdout).toContain("# >>> opencode-pool second >>>")
    expect(r.stdout.split("\n").find((l) => l.startsWith("command="))).toContain(PUBLIC)
  })

  it("US-13 a bad --port or --alias, a control character in a value, or no --host exits 2 and writes nothing", () => {
    const s = sandbox()
    for (const args of [
      ["--host", "desk.lan", "--port", "0"],
      ["--host", "desk.lan", "--port", "65536"],
      ["--host", "desk.lan", "--port", "22x"],
      ["--host", "desk.lan", "--alias", "two words"],
      ["--host", "desk.lan", "--alias", "x".repeat(65)],
      ["--host", "desk.lan", "--alias", "a\nHost *"],
      ["--host", "desk.lan\n  ProxyCommand touch pwned"],
      ["--host", "desk.lan", "--user", "me\nHost *"],
      ["--host", "desk.lan", "--receiver", "ocpool receive\nssh-rsa AAAA"],
      ["--host", "desk.lan", "--key", "/tmp/a\nb"]
    ]) {
      const r = ocpool(s, ["tunnel", "setup", ...args])
      expect(r.code, args.join(" ")).toBe(2)
      expect(r.stderr, args.join(" ")).toMatch(/^ocpool: --(port|alias|host|user|receiver|key) [^\n]*\n$/)
      expect(r.stdout).toBe("")
    }
    const none = ocpool(s, ["tunnel", "setup"])
    expect(none.code).toBe(2)
    expect(none.stderr.split("\n")[0]).toBe("ocpool: tunnel setup needs --host H (the desktop's host name or address, as seen from here)")
    expect(readdirSync(s.home)).toEqual([])
    expect(s.calls()).toEqual([])
  })

  it("US-13 a write failure is one line and exit 1, never a stack trace", () => {
    const s = sandbox()
    writeFileSync(join(s.home, ".ssh"), "a file where the directory should be")
    const r = ocpool(s, ["tunnel", "setup", "--host", "desk.lan"])
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/^ocpool: [^\n]*\.ssh: [^\n]+\n$/)
    expect(r.stdout).toBe("")
  })
})
