/**
 * A real OpenSSH server for tests: on 127.0.0.1 at a free port, as the current user, everything
 * (host key, sshd_config, pid file, authorized_keys, log, client key, known_hosts, ssh_config) in
 * one temp dir. The one client key is restricted to a forced command given by the caller, the way a
 * desktop's authorized_keys line for `ocpool receive` is.
 *
 * Reaching it:
 *   - `ssh -F <sshConfigPath> -- <alias> <payload>` (or `ssh ...sshArgs() -- <alias> <payload>`);
 *   - plain `ssh -- <alias> <payload>` with `binDir` first on PATH: binDir/ssh is a wrapper that
 *     execs the real ssh with `-F <sshConfigPath>`. This is the way for code under test that runs
 *     `ssh` by name. ssh reads ~/.ssh/config from the passwd entry's home directory, never from
 *     $HOME, so a temp HOME (`writeClientHome`) does NOT reach ssh; it is kept for code of our own
 *     that reads $HOME/.ssh/config (e.g. a doctor check), and a test pins the fact.
 *
 * With `plainAlias`, a second client key is in authorized_keys WITHOUT a forced command: an ordinary
 * login, where sshd hands the client's command line to the user's login shell (`<shell> -c <command>`),
 * reached as that alias. It is what a hop host looks like that was not set up with `ocpool tunnel
 * setup`'s key line (the tests of the hop token use it).
 *
 * sshd passes no client environment to the forced command (PermitUserEnvironment no, no AcceptEnv):
 * it runs under the user's login shell from passwd with sshd's environment (USER, a default PATH,
 * SSH_ORIGINAL_COMMAND, SSH_CLIENT, SSH_CONNECTION; HOME is an empty temp dir unless `home` says
 * otherwise) plus whatever that shell reads at start (bash reads $HOME/.bashrc when started by
 * sshd). Pass what it needs in `env` or inside `forcedCommand` itself.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process"
import { chmodSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir, userInfo } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { freePort, isRunning, shQuote, sleep, stopTree, tcpOpen, trackDir, trackPid, untrackDir, watchdog } from "./procs.js"

const run = promisify(execFile)

export interface SshdOptions {
  /**
   * The forced command of the client key (authorized_keys `command="..."`): one shell command line,
   * run by the user's login shell with `-c`; the client's command line is in $SSH_ORIGINAL_COMMAND.
   * No newlines. Double quotes are escaped for authorized_keys here.
   */
  readonly forcedCommand: string
  /**
   * Environment for the forced command: the line becomes `env 'K=V' ... /bin/sh -c '<forcedCommand>'`
   * (shell-quoted), so the variables reach every command of the line.
   */
  readonly env?: Readonly<Record<string, string>>
  /**
   * HOME of the forced command (sshd_config `SetEnv HOME=...`), default `<dir>/home` (empty): the
   * session then reads no real dotfiles (bash sources ~/.bashrc when started by sshd, which can cost
   * seconds) and writes nothing into the real home. `"passwd"` keeps the passwd home directory.
   * The working directory is still the passwd home (sshd chdirs there).
   */
  readonly home?: string
  /** Host alias in the client ssh_config (default `ocpool-test-desktop`). */
  readonly alias?: string
  /**
   * When given: a second client key, in authorized_keys without `command="..."` (still no-pty and
   * without forwarding), and a client `Host <plainAlias>` block using it. A login with it runs the
   * client's command line in the user's login shell. As root this sets `PermitRootLogin
   * prohibit-password` (keys only) instead of `forced-commands-only`.
   */
  readonly plainAlias?: string
  /** sshd binary, absolute (default: /usr/sbin/sshd, else `sshd` found on PATH). */
  readonly sshdPath?: string
  /** Readiness timeout (default 15 s). */
  readonly startTimeoutMs?: number
}

export interface Sshd {
  readonly host: "127.0.0.1"
  readonly port: number
  /** The temp dir holding everything; removed by stop(). */
  readonly dir: string
  /** Client private key (ed25519, no passphrase). */
  readonly clientKey: string
  /** known_hosts with the server's host key for [127.0.0.1]:port. */
  readonly knownHosts: string
  /** Client ssh_config with a `Host <alias>` block; use with `ssh -F`. */
  readonly sshConfigPath: string
  readonly alias: string
  /** The alias of the key without a forced command (a login shell), when `plainAlias` was given. */
  readonly plainAlias: string | undefined
  /** Dir with an executable `ssh` wrapper (`exec ssh -F <sshConfigPath> "$@"`): put it first on PATH. */
  readonly binDir: string
  /** HOME of the forced command, or undefined when it is the passwd home. */
  readonly home: string | undefined
  /** The authorized_keys file sshd reads (re-read on every connection). */
  readonly authorizedKeys: string
  /** The command line currently in authorized_keys (with the `env` prefix, before quote escaping). */
  forcedCommand(): string
  /** Replaces the forced command (and its env) for the following connections; no restart. */
  setForcedCommand(forcedCommand: string, env?: Readonly<Record<string, string>>): void
  /** Arguments that select this server's client config: `["-F", sshConfigPath]`. */
  sshArgs(): Array<string>
  /** sshd's log so far (LogLevel VERBOSE; -E log file plus its stdout/stderr). */
  log(): string
  /**
   * Writes `<home>/.ssh/{config,id_ed25519,known_hosts}` (config 0600) with the alias block. Note:
   * ssh itself ignores $HOME (it uses the passwd home), so this is only for code that reads
   * $HOME/.ssh/config; to make plain `ssh` work, use `binDir`.
   */
  writeClientHome(home: string): void
  /** Stops sshd and its children, removes `dir`. Idempotent. */
  stop(): Promise<void>
}

const findSshd = (given: string | undefined): string => {
  if (given !== undefined) return given
  for (const p of ["/usr/sbin/sshd", "/usr/local/sbin/sshd", "/sbin/sshd"]) if (existsSync(p)) return p
  for (const d of (process.env.PATH ?? "").split(":")) if (d.startsWith("/") && existsSync(join(d, "sshd"))) return join(d, "sshd")
  throw new Error("sshd not found (install openssh-server; scripts/ci-real-deps.sh)")
}

const findSsh = (): string => {
  for (const p of ["/usr/bin/ssh", "/usr/local/bin/ssh", "/bin/ssh"]) if (existsSync(p)) return p
  throw new Error("ssh not found (install openssh-client)")
}

/** The command line, with `env K=V` in front when env is given. */
const commandLine = (forcedCommand: string, env: Readonly<Record<string, string>> | undefined): string => {
  if (/[\n\r\0]/.test(forcedCommand)) throw new Error("forcedCommand: no newline or NUL allowed in an authorized_keys option")
  const entries = Object.entries(env ?? {})
  for (const [k, v] of entries) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) throw new Error(`env: bad variable name ${JSON.stringify(k)}`)
    if (/[\n\r\0]/.test(v)) throw new Error(`env: no newline or NUL allowed in ${k}`)
  }
  // through `sh -c` so that the variables reach every command of a list like `a; b > f`
  return entries.length === 0 ? forcedCommand : `env ${entries.map(([k, v]) => shQuote(`${k}=${v}`)).join(" ")} /bin/sh -c ${shQuote(forcedCommand)}`
}

/** authorized_keys option values: only `"` needs a backslash (sshd turns `\"` into `"` and keeps other backslashes). */
const authorizedKeysLine = (command: string, publicKey: string): string =>
  `command="${command.replaceAll('"', '\\"')}",no-pty,no-port-forwarding,no-agent-forwarding,no-X11-forwarding,no-user-rc ${publicKey.trim()}\n`

/** A key line without a forced command: the client's command line goes to the login shell. */
const plainKeyLine = (publicKey: string): string => `no-pty,no-port-forwarding,no-agent-forwarding,no-X11-forwarding,no-user-rc ${publicKey.trim()}\n`

const keygen = async (path: string, comment: string): Promise<string> => {
  await run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", path])
  return readFileSync(`${path}.pub`, "utf8").trim()
}

const sshdConfig = (o: { dir: string; port: number; user: string; root: boolean; plain: boolean; home: string | undefined; extra: ReadonlyArray<string> }): string =>
  [
    `ListenAddress 127.0.0.1`,
    `Port ${o.port}`,
    `HostKey ${join(o.dir, "ssh_host_ed25519_key")}`,
    `PidFile ${join(o.dir, "sshd.pid")}`,
    `AuthorizedKeysFile ${join(o.dir, "authorized_keys")}`,
    `AllowUsers ${o.user}`,
    `StrictModes no`,
    `UsePAM no`,
    `PasswordAuthentication no`,
    `KbdInteractiveAuthentication no`,
    `HostbasedAuthentication no`,
    `PubkeyAuthentication yes`,
    `AuthenticationMethods publickey`,
    // root may log in only with a key that carries command="..." (with a plain key: with keys only)
    ...(o.root ? [o.plain ? `PermitRootLogin prohibit-password` : `PermitRootLogin forced-commands-only`] : []),
    `PermitUserEnvironment no`,
    `PermitUserRC no`,
    `PermitTTY no`,
    `AllowTcpForwarding no`,
    `AllowAgentForwarding no`,
    `AllowStreamLocalForwarding no`,
    `X11Forwarding no`,
    `PermitTunnel no`,
    `PrintMotd no`,
    `PrintLastLog no`,
    `UseDNS no`,
    `MaxStartups 100:30:200`,
    `LoginGraceTime 30`,
    `LogLevel VERBOSE`,
    ...(o.home !== undefined ? [`SetEnv HOME=${o.home}`] : []),
    ...o.extra,
    ``
  ].join("\n")

const clientConfig = (o: { alias: string; port: number; user: string; key: string; knownHosts: string }): string =>
  [
    `Host ${o.alias}`,
    `  HostName 127.0.0.1`,
    `  Port ${o.port}`,
    `  User ${o.user}`,
    `  IdentityFile ${o.key}`,
    `  IdentitiesOnly yes`,
    `  IdentityAgent none`,
    `  UserKnownHostsFile ${o.knownHosts}`,
    `  GlobalKnownHostsFile /dev/null`,
    `  StrictHostKeyChecking yes`,
    `  CheckHostIP no`,
    `  UpdateHostKeys no`,
    `  BatchMode yes`,
    `  ControlMaster no`,
    `  ControlPath none`,
    `  ForwardAgent no`,
    `  ForwardX11 no`,
    `  LogLevel ERROR`,
    ``
  ].join("\n")

/** Options newer sshd versions know and older ones reject: kept only when `sshd -t` accepts them. */
const OPTIONAL_SERVER_OPTIONS = [
  // OpenSSH >= 9.8 penalises sources with failed logins; tests connect often from 127.0.0.1
  "PerSourcePenalties no"
]

export const startSshd = async (opts: SshdOptions): Promise<Sshd> => {
  const sshd = findSshd(opts.sshdPath)
  const ssh = findSsh()
  const user = userInfo().username
  const root = process.getuid?.() === 0
  const alias = opts.alias ?? "ocpool-test-desktop"
  if (!/^[A-Za-z0-9._-]+$/.test(alias)) throw new Error(`alias: ${JSON.stringify(alias)}`)
  const plainAlias = opts.plainAlias
  if (plainAlias !== undefined && (!/^[A-Za-z0-9._-]+$/.test(plainAlias) || plainAlias === alias)) throw new Error(`plainAlias: ${JSON.stringify(plainAlias)}`)
  const plain = plainAlias !== undefined
  // sshd as root checks its privilege-separation dir at start
  if (root && !existsSync("/run/sshd")) mkdirSync("/run/sshd", { recursive: true, mode: 0o755 })

  const dir = mkdtempSync(join(tmpdir(), "ocpool-sshd-"))
  trackDir(dir)
  const hostKey = join(dir, "ssh_host_ed25519_key")
  const clientKey = join(dir, "client_ed25519")
  const plainKey = join(dir, "client_plain_ed25519")
  const knownHosts = join(dir, "known_hosts")
  const authorizedKeys = join(dir, "authorized_keys")
  const sshConfigPath = join(dir, "ssh_config")
  const serverConfig = join(dir, "sshd_config")
  const logPath = join(dir, "sshd.log")
  const outPath = join(dir, "sshd.out")
  const binDir = join(dir, "bin")
  const home = opts.home === "passwd" ? undefined : (opts.home ?? join(dir, "home"))
  if (home !== undefined && /[\s"]/.test(home)) throw new Error(`home: no whitespace or quotes: ${JSON.stringify(home)}`)

  let child: ChildProcess | undefined
  let stopDog: (() => void) | undefined
  let stopped = false
  const stop = async (): Promise<void> => {
    if (stopped) return
    stopped = true
    stopDog?.()
    if (child !== undefined) await stopTree(child)
    rmSync(dir, { recursive: true, force: true })
    untrackDir(dir)
  }

  try {
    if (home !== undefined) mkdirSync(home, { recursive: true, mode: 0o700 })
    const [hostPub, clientPub, plainPub] = await Promise.all([
      keygen(hostKey, "ocpool-test-host"),
      keygen(clientKey, "ocpool-test-client"),
      plain ? keygen(plainKey, "ocpool-test-plain") : Promise.resolve(undefined)
    ])
    const keyLines = (command: string): string => authorizedKeysLine(command, clientPub) + (plainPub === undefined ? "" : plainKeyLine(plainPub))
    let command = commandLine(opts.forcedCommand, opts.env)
    writeFileSync(authorizedKeys, keyLines(command), { mode: 0o600 })
    mkdirSync(binDir)
    writeFileSync(join(binDir, "ssh"), `#!/bin/sh\nexec ${shQuote(ssh)} -F ${shQuote(sshConfigPath)} "$@"\n`, { mode: 0o755 })

    // options this sshd accepts (probe with a config on a throwaway port number; -t does not bind)
    const extra: Array<string> = []
    for (const option of OPTIONAL_SERVER_OPTIONS) {
      writeFileSync(serverConfig, sshdConfig({ dir, port: 1, user, root, plain, home, extra: [option] }))
      try {
        await run(sshd, ["-t", "-f", serverConfig])
        extra.push(option)
      } catch {
        // unknown to this version
      }
    }

    const deadline = Date.now() + (opts.startTimeoutMs ?? 15_000)
    let port = 0
    for (let attempt = 1; ; attempt++) {
      port = await freePort()
      writeFileSync(serverConfig, sshdConfig({ dir, port, user, root, plain, home, extra }))
      writeFileSync(knownHosts, `[127.0.0.1]:${port} ${hostPub}\n`)
      writeFileSync(
        sshConfigPath,
        clientConfig({ alias, port, user, key: clientKey, knownHosts }) + (plainAlias === undefined ? "" : clientConfig({ alias: plainAlias, port, user, key: plainKey, knownHosts })),
        { mode: 0o600 }
      )
      const out = openSync(outPath, "a")
      const c = spawn(sshd, ["-D", "-e", "-E", logPath, "-f", serverConfig], { stdio: ["ignore", out, out] })
      closeSync(out)
      child = c
      trackPid(c.pid)
      const spawnError = new Promise<Error>((resolve) => c.once("error", resolve))
      let ready = false
      while (Date.now() < deadline && isRunning(c)) {
        if (await tcpOpen("127.0.0.1", port, 500)) {
          ready = true
          break
        }
        const err = await Promise.race([spawnError, sleep(25).then(() => undefined)])
        if (err !== undefined) throw err
      }
      if (ready && isRunning(c)) break
      await stopTree(c)
      const text = readLog(logPath, outPath)
      // lost the race for the port: try another one
      if (attempt < 5 && Date.now() < deadline && /Bind to port|Address already in use|Cannot bind/.test(text)) continue
      throw new Error(`sshd did not become ready on 127.0.0.1:${port}:\n${text}`)
    }
    const c = child!
    stopDog = c.pid !== undefined ? watchdog([c.pid], [dir]) : undefined

    const handle: Sshd = {
      host: "127.0.0.1",
      port,
      dir,
      clientKey,
      knownHosts,
      sshConfigPath,
      alias,
      plainAlias,
      binDir,
      home,
      authorizedKeys,
      forcedCommand: () => command,
      setForcedCommand: (forcedCommand, env) => {
        command = commandLine(forcedCommand, env)
        writeFileSync(`${authorizedKeys}.tmp`, keyLines(command), { mode: 0o600 })
        renameSync(`${authorizedKeys}.tmp`, authorizedKeys)
      },
      sshArgs: () => ["-F", sshConfigPath],
      log: () => readLog(logPath, outPath),
      writeClientHome: (home) => {
        const dotSsh = join(home, ".ssh")
        mkdirSync(dotSsh, { recursive: true, mode: 0o700 })
        chmodSync(dotSsh, 0o700)
        const key = join(dotSsh, "id_ed25519")
        writeFileSync(key, readFileSync(clientKey), { mode: 0o600 })
        writeFileSync(`${key}.pub`, readFileSync(`${clientKey}.pub`), { mode: 0o644 })
        const kh = join(dotSsh, "known_hosts")
        writeFileSync(kh, readFileSync(knownHosts), { mode: 0o644 })
        const cfg = join(dotSsh, "config")
        writeFileSync(cfg, clientConfig({ alias, port, user, key, knownHosts: kh }), { mode: 0o600 })
        chmodSync(cfg, 0o600)
      },
      stop
    }
    return handle
  } catch (e) {
    await stop()
    throw e
  }
}

const readLog = (...paths: ReadonlyArray<string>): string =>
  paths
    .map((p) => {
      try {
        return readFileSync(p, "utf8")
      } catch {
        return ""
      }
    })
    .join("")
