/**
 * `ocpool tunnel setup` (SPEC §10.7, US-13.4, US-13.5), run as the built CLI in a child process with a
 * temporary HOME only: the real ~/.ssh is never touched. ssh-keygen is a stub, the only program on PATH, that
 * records its argv and writes a key pair with a wide mode (so the command's own chmod is what is seen).
 * What the command writes is then read by the real OpenSSH client of this machine (`ssh -G`, `ssh -v`
 * through a ProxyCommand that exits at once, `ssh-keygen -lf`; test/support/sshOracle.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import { execFile, spawnSync } from "node:child_process"
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { authorizedKeysCommand, keygenAccepts, requireOpenSsh, sshG, sshIdentityPaths } from "../support/sshOracle.js"
import { cli, ensureBuilt } from "./builtCli.js"
import { expectedTunnelBlock } from "../support/tunnelBlock.js"

ensureBuilt("tunnel setup --help")

const tmp = () => mkdtempSync(join(tmpdir(), "ocpool-tunnel-"))
/** A real ed25519 public key (its private half was thrown away): `ssh-keygen -lf` reads the lines the command prints. */
const PUBLIC = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIICJi7N++bpjzNADgFkeNoLWWsELfCCqM3z2belf9/u2"

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

/** The same run, without blocking: independent runs go side by side. */
const ocpoolAsync = (s: { home: string; bin: string }, args: ReadonlyArray<string>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
    execFile(
      process.execPath,
      [cli, ...args],
      { encoding: "utf8", timeout: 60_000, cwd: s.home, env: { PATH: s.bin, HOME: s.home, XDG_CONFIG_HOME: join(s.home, ".config"), XDG_STATE_HOME: join(s.home, ".state") } },
      (error, stdout, stderr) => done({ code: error === null ? 0 : typeof error.code === "number" ? error.code : null, stdout, stderr })
    )
  })

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
    // the config is checked before the key is made: either names the file in the way
    expect(r.stderr).toMatch(/^ocpool: [^\n]*\.ssh(\/config)?: [^\n]+\n$/)
    expect(r.stdout).toBe("")
  })

  it("US-13.4 awkward --key paths (a quote, a trailing backslash, spaces, '%', '#', '=', non-ASCII), an IPv6 zone: the real ssh -G reads back exactly the key, host, user and port, and ssh expands the key to its own path", async () => {
    requireOpenSsh()
    const keys = tmp()
    const cases: ReadonlyArray<{ readonly name: string; readonly host?: string }> = [
      { name: "k'y" },
      { name: "ky\\" },
      { name: "a\\b" },
      { name: "k y" },
      { name: "k 'y" },
      { name: "k%y" },
      { name: "k%%y" },
      { name: "%d" },
      { name: "k#y" },
      { name: "#k" },
      { name: "k=y" },
      { name: "k$y" },
      { name: "clé" },
      { name: "ключ 😀" },
      { name: "plain", host: "fe80::1%eth0" }
    ]
    // one home each, run side by side
    const runs = await Promise.all(
      cases.map(async (c, i) => {
        const s = sandbox()
        const args = ["tunnel", "setup", "--host", c.host ?? "desk.lan", "--user", "me@dom$x", "--port", "2222", "--alias", `case-${i}`, "--key", join(keys, c.name)]
        return { s, r: await ocpoolAsync(s, args) }
      })
    )
    cases.forEach((c, i) => {
      const { s, r } = runs[i]!
      const config = join(s.home, ".ssh", "config")
      const key = join(keys, c.name)
      const alias = `case-${i}`
      const host = c.host ?? "desk.lan"
      expect(r.stderr, c.name).toBe("")
      expect(r.code, c.name).toBe(0)
      expect(existsSync(key), c.name).toBe(true)
      const view = sshG(config, alias)
      expect(view.stderr, c.name).toBe("")
      expect(view.code, c.name).toBe(0)
      expect(view.values.get("hostname"), c.name).toBe(host.toLowerCase())
      expect(view.values.get("user"), c.name).toBe("me@dom$x")
      expect(view.values.get("port"), c.name).toBe("2222")
      // ssh -G shows IdentityFile after the quotes, before `%` expansion
      expect(view.identityFiles, c.name).toEqual([key.replace(/%/g, "%%")])
      expect(sshIdentityPaths(config, alias).paths, c.name).toEqual([key])
    })
    // fifteen CLI starts side by side: room for a loaded machine
  }, 180_000)

  it("US-13 values ssh_config or authorized_keys cannot carry exit 2 with one line, create no key and write nothing: '${', a double quote, a backslash in a quoted or doubled key path, a receiver ending in a backslash, an alias ssh takes for an option", async () => {
    const s = sandbox()
    const d = tmp()
    const refused: ReadonlyArray<ReadonlyArray<string>> = [
      ["--key", `${d}/k\${HOME}y`],
      ["--key", `${d}/k"y`],
      ["--key", `${d}/k y\\`],
      ["--key", `${d}/k 'y\\z`],
      ["--key", `${d}/k\\\\y`],
      ["--key", `${d}/k\ufffdy`],
      ["--receiver", "ocpool receive\\"],
      ["--receiver", "ocpool receive\\ "],
      ["--alias", "-oProxyCommand"],
      ["--alias", "-x"]
    ]
    // nothing is written by any of them: side by side in one home
    const runs = await Promise.all(refused.map((args) => ocpoolAsync(s, ["tunnel", "setup", "--host", "desk.lan", ...args])))
    refused.forEach((args, i) => {
      const r = runs[i]!
      expect(r.code, args.join(" ")).toBe(2)
      expect(r.stderr, args.join(" ")).toMatch(/^ocpool: --(alias|receiver|key) [^\n]*\n$/)
      expect(r.stdout, args.join(" ")).toBe("")
    })
    expect(readdirSync(s.home)).toEqual([])
    expect(readdirSync(d)).toEqual([])
    expect(s.calls()).toEqual([])
  })

  it("US-13.4 the authorized_keys line is one sshd reads: ssh-keygen -lf accepts it and the forced command is exactly the --receiver (backslashes kept, only quotes escaped)", async () => {
    requireOpenSsh()
    const s = sandbox()
    const receivers = ["ocpool receive", "/opt/my\\ dir/ocpool receive", 'sh -c "ocpool receive"', 'a\\"b', "x \\\\ y", "/opt/ocpool receive # é", "\\\\host\\share\\ocpool receive x"]
    // the first run creates the key; --print then shows the line with that key, side by side
    const first = await ocpoolAsync(s, ["tunnel", "setup", "--host", "desk.lan"])
    expect(first.code).toBe(0)
    const runs = await Promise.all(receivers.map((receiver) => ocpoolAsync(s, ["tunnel", "setup", "--host", "desk.lan", "--receiver", receiver, "--print"])))
    receivers.forEach((receiver, i) => {
      const r = runs[i]!
      expect(r.code, receiver).toBe(0)
      const line = r.stdout.split("\n").find((l) => l.startsWith("command="))!
      expect(keygenAccepts(line).ok, `${receiver}: ${line}`).toBe(true)
      expect(authorizedKeysCommand(line), receiver).toEqual({
        command: receiver,
        options: ",no-pty,no-port-forwarding,no-agent-forwarding,no-X11-forwarding,no-user-rc",
        key: expect.stringMatching(new RegExp(`^${PUBLIC.replace(/[+/]/g, "\\$&")} `)) as unknown as string
      })
    })
  })

  it("US-13 a ~/.ssh/config that cannot be written (read-only, a directory, a dangling link, a link to a read-only file, over 1 MiB or taken over it by the block, a .tmp directory in the way) exits 1 with one line; no key is created and nothing written", async () => {
    const cases: Array<{ readonly name: string; readonly setup: (ssh: string) => void; readonly reason: RegExp }> = [
      { name: "read-only file", setup: (ssh) => writeFileSync(join(ssh, "config"), "Host a\n", { mode: 0o444 }), reason: /config: read-only/ },
      { name: "a directory", setup: (ssh) => mkdirSync(join(ssh, "config")), reason: /config: not a regular file \(a directory\)/ },
      { name: "a dangling link", setup: (ssh) => symlinkSync(join(ssh, "nowhere"), join(ssh, "config")), reason: /config: a dangling symbolic link/ },
      {
        name: "a link to a read-only file",
        setup: (ssh) => {
          writeFileSync(join(ssh, "target"), "Host a\n", { mode: 0o400 })
          symlinkSync(join(ssh, "target"), join(ssh, "config"))
        },
        reason: /target: read-only/
      },
      { name: "over 1 MiB", setup: (ssh) => writeFileSync(join(ssh, "config"), `# ${"x".repeat(1 << 20)}\n`, { mode: 0o600 }), reason: /config: larger than 1 MiB/ },
      { name: "taken over 1 MiB", setup: (ssh) => writeFileSync(join(ssh, "config"), `# ${"x".repeat((1 << 20) - 100)}\n`, { mode: 0o600 }), reason: /config: the block would take it over 1 MiB/ },
      {
        name: "a .tmp directory in the way",
        setup: (ssh) => {
          writeFileSync(join(ssh, "config"), "Host a\n", { mode: 0o600 })
          mkdirSync(join(ssh, "config.tmp"))
        },
        reason: /config\.tmp: a directory is in the way/
      }
    ]
    // permission bits do not stop root
    if (process.getuid?.() !== 0) {
      cases.push({
        name: "a directory without write permission",
        setup: (ssh) => {
          writeFileSync(join(ssh, "config"), "Host a\n", { mode: 0o600 })
          chmodSync(ssh, 0o500)
        },
        reason: /\.ssh: permission denied/
      })
    }
    const prepared = cases.map((c) => {
      const s = sandbox()
      const ssh = join(s.home, ".ssh")
      mkdirSync(ssh, { mode: 0o700 })
      c.setup(ssh)
      return { c, s, ssh, before: snapshot(s.home) }
    })
    // one home each, side by side
    const runs = await Promise.all(prepared.map(({ s }) => ocpoolAsync(s, ["tunnel", "setup", "--host", "desk.lan"])))
    prepared.forEach(({ c, s, ssh, before }, i) => {
      const r = runs[i]!
      const after = snapshot(s.home)
      chmodSync(ssh, 0o700)
      expect(r.stderr, c.name).toMatch(/^ocpool: [^\n]+\n$/)
      expect(r.stderr, c.name).toMatch(c.reason)
      expect(r.code, c.name).toBe(1)
      expect(r.stdout, c.name).toBe("")
      expect(s.calls(), c.name).toEqual([])
      expect(after, c.name).toEqual(before)
    })
  })

  it("US-13.4 every byte outside the block is kept (Latin-1 bytes, a BOM, mixed LF and CRLF, no final newline); the block takes the file's dominant line ending, and a later run changes only the block", async () => {
    const s = sandbox()
    mkdirSync(join(s.home, ".ssh"), { mode: 0o700 })
    const config = join(s.home, ".ssh", "config")
    const bytes = (...parts: ReadonlyArray<string | Buffer>) => Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p, "latin1") : p)))
    const block = (host: string, eol: string) => Buffer.from(expectedTunnelBlock(host).join(eol))
    // CRLF five times, LF once, the last line unterminated; é and ÿ as Latin-1 bytes
    const prefix = bytes("\xef\xbb\xbf# mine\r\nHost other\r\n  IdentityFile ~/.ssh/cl\xe9\r\n  HostName o.lan\n\r\nHost b\r\n  HostName b.lan")
    writeFileSync(config, prefix, { mode: 0o600 })
    expect((await ocpoolAsync(s, ["tunnel", "setup", "--host", "desk.lan"])).code).toBe(0)
    const first = bytes(prefix, "\r\n\r\n", block("desk.lan", "\r\n"), "\r\n")
    expect(readFileSync(config).equals(first)).toBe(true)

    // text after the block, in other endings and bytes, stays as it is when the block is replaced
    const suffix = bytes("Host after\n  User x\xff\n# end")
    writeFileSync(config, bytes(first, suffix))
    expect((await ocpoolAsync(s, ["tunnel", "setup", "--host", "10.0.0.7"])).code).toBe(0)
    expect(readFileSync(config).equals(bytes(prefix, "\r\n\r\n", block("10.0.0.7", "\r\n"), "\r\n", suffix))).toBe(true)

    // LF wins in a file mostly LF; the result parses with the real ssh, the other host's Latin-1 path intact
    requireOpenSsh()
    const lf = bytes("Host other\n  IdentityFile ~/.ssh/cl\xe9\r\nHost b\n  HostName b.lan\n")
    writeFileSync(config, lf)
    expect((await ocpoolAsync(s, ["tunnel", "setup", "--host", "desk.lan"])).code).toBe(0)
    expect(readFileSync(config).equals(bytes(lf, "\n", block("desk.lan", "\n"), "\n"))).toBe(true)
    const view = sshG(config, "ocpool-desktop")
    expect(view.code).toBe(0)
    expect(view.values.get("hostname")).toBe("desk.lan")
    expect(view.identityFiles).toEqual(["~/.ssh/ocpool_notify"])
    expect(sshG(config, "other").identityFiles).toEqual([Buffer.from("~/.ssh/cl\xe9", "latin1").toString("utf8")])
  })
})
