/**
 * `ocpool tunnel setup --host H [--user U] [--port P] [--alias A] [--key PATH] [--receiver CMD] [--print]`
 * (SPEC §10.7), run on the remote machine: creates the hop key if absent, writes the marked `Host`
 * block into `~/.ssh/config` (replaced in place, so a second run changes no byte), and prints the block
 * and the line for the desktop's `authorized_keys`. `--print` writes nothing and creates no key.
 *
 * Order: the flags are checked (a value OpenSSH would not read back exactly is exit 2), the config edit
 * is planned on the file's bytes (every byte outside the block kept) and the write checked (a
 * read-only file, a directory or a dangling link in the way, the 1 MiB cap: exit 1), and only then is
 * the key created and the file written, so a refusal leaves no key behind.
 */
import { Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import { accessSync, chmodSync, constants, lstatSync, statSync } from "node:fs"
import { hostname } from "node:os"
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path"
import { DESKTOP_ALIAS } from "../core/notify/channel.js"
import { authorizedKeysLine, DEFAULT_RECEIVER, identityFileArg, receiverProblem, tunnelBlock, withTunnelBlock, type TunnelSpec } from "../core/notify/tunnel.js"
import { printable } from "../core/printable.js"
import { isReadOnly, writeFileWithMode, writeTarget } from "../layers/fs/atomicWrite.js"
import { dirReason, makeDir } from "../layers/fs/dirs.js"
import { runTool, failureOf } from "../layers/process/tools.js"
import { occupied, readBytesFile, readTextFile } from "../layers/fs/safeRead.js"
import { homeDir } from "../layers/fs/xdg.js"
import { ocpoolLine } from "../layers/install/installation.js"
import { BadInput, PathUnusable, UsageProblem } from "./errors.js"
import { commandGroup } from "./shared/commandGroup.js"
import { text } from "./shared/textFlag.js"

/** How long ssh-keygen may take (creating an ed25519 key is instant). */
const KEYGEN_TIMEOUT_MS = 15_000
/** Largest ~/.ssh/config read (and rewritten). */
const SSH_CONFIG_MAX_BYTES = 1 << 20
const PUBLIC_KEY_MAX_BYTES = 16 << 10

/** ssh takes a host argument starting with `-` for an option (and refuses it as a host name). */
const ALIAS = /^[A-Za-z0-9._][A-Za-z0-9._-]{0,63}$/
/** A host name, IPv4 or IPv6 address (an IPv6 zone after `%`): nothing that could end the `HostName` line. */
const HOST = /^[A-Za-z0-9_:%.][A-Za-z0-9._:%-]{0,252}$/
/** A login name (domain logins may carry `@`). */
const USER = /^[A-Za-z0-9._][A-Za-z0-9._@$-]{0,127}$/
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/
/** What Node makes of bytes that are not UTF-8 in argv (U+FFFD), and halves of a surrogate pair. */
const UNDECODABLE = /[\ufffd]|\p{Cs}/u
const PUBLIC_KEY = /^(ssh-[a-z0-9-]+|ecdsa-sha2-[a-z0-9-]+|sk-[A-Za-z0-9@.-]+) [A-Za-z0-9+/=]+( .*)?$/

const NO_HOME = "no home directory (HOME is unset or not absolute, and the system has none for this user); set HOME"

export interface TunnelFlags {
  readonly host: string | undefined
  readonly user: string | undefined
  readonly port: string | undefined
  readonly alias: string | undefined
  readonly key: string | undefined
  readonly receiver: string | undefined
  readonly print: boolean
}

interface Checked {
  readonly spec: TunnelSpec
  readonly receiver: string
  /** The private key, absolute. */
  readonly keyPath: string
  /** The key as the block and the messages show it (`~/…` under the home directory). */
  readonly keyShown: string
}

/** `path` as `~/…` when it is under `home`, else as it is. */
const tilde = (path: string, home: string | undefined): string => {
  if (home === undefined) return path
  const rel = relative(home, path)
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel) ? `~/${rel.split(sep).join("/")}` : path
}

/** The line shown, and the flag at fault with its value when there is one. */
const bad = (message: string, option?: string, value?: string) =>
  new BadInput(option === undefined ? { message } : value === undefined ? { message, option } : { message, option, value })

/** Every flag checked before anything is read or written (exit 2 with one line naming the flag). */
export const checkFlags = (f: TunnelFlags, home: string | undefined, cwd: string = process.cwd()): Effect.Effect<Checked, BadInput | UsageProblem> =>
  Effect.gen(function* () {
    const host = f.host?.trim() ?? ""
    if (f.host === undefined) return yield* new UsageProblem({ message: "tunnel setup needs --host H (the desktop's host name or address, as seen from here)", option: "--host" })
    if (!HOST.test(host)) return yield* bad(`--host must be a host name or address (letters, digits, '.', '-', ':', '%'), not "${printable(f.host)}"`, "--host", f.host)
    const user = f.user?.trim()
    if (user !== undefined && !USER.test(user)) return yield* bad(`--user must be a login name, not "${printable(f.user!)}"`, "--user", f.user!)
    let port: number | undefined
    if (f.port !== undefined) {
      const p = f.port.trim()
      port = /^\d{1,5}$/.test(p) ? Number(p) : NaN
      if (!(port >= 1 && port <= 65_535)) return yield* bad(`--port must be an integer from 1 to 65535, not "${printable(f.port)}"`, "--port", f.port)
    }
    const alias = f.alias ?? DESKTOP_ALIAS
    if (!ALIAS.test(alias)) return yield* bad(`--alias must be 1 to 64 of A-Z a-z 0-9 . _ - not starting with '-', not "${printable(alias)}"`, "--alias", alias)
    const receiver = (f.receiver ?? DEFAULT_RECEIVER).trim()
    if (receiver === "" || CONTROL.test(receiver) || UNDECODABLE.test(receiver)) return yield* bad(`--receiver must be a one-line command, not "${printable(f.receiver ?? "")}"`, "--receiver", f.receiver ?? "")
    const commandProblem = receiverProblem(receiver)
    if (commandProblem !== undefined) return yield* bad(`--receiver ${commandProblem}, not "${printable(receiver)}"`, "--receiver", receiver)
    let keyPath: string
    if (f.key === undefined) {
      if (home === undefined) return yield* bad(`no default key path: ${NO_HOME}, or give --key PATH`)
      keyPath = join(home, ".ssh", "ocpool_notify")
    } else {
      if (f.key === "" || CONTROL.test(f.key) || UNDECODABLE.test(f.key)) return yield* bad(`--key must be a file path without control characters or bytes that are not UTF-8, not "${printable(f.key)}"`, "--key", f.key)
      if (f.key === "~" || f.key.startsWith("~/")) {
        if (home === undefined) return yield* bad(`--key ${printable(f.key)}: ${NO_HOME}`, "--key", f.key)
        // `~//x` is under home, as in a shell; a trailing `/` goes, as `resolve` drops it from other paths
        keyPath = f.key === "~" ? home : resolve(join(home, f.key.slice(2)))
      } else keyPath = resolve(cwd, f.key)
    }
    // ssh expands `~` before `%` and `${}`: a home holding those is written out, escaped, instead
    const keyShown = home !== undefined && (home.includes("%") || home.includes("${")) ? keyPath : tilde(keyPath, home)
    const identityFile = identityFileArg(keyShown)
    if (identityFile._tag === "Unwritable") return yield* bad(`--key "${printable(keyShown)}" cannot be written into ~/.ssh/config: ${identityFile.reason}; give another path (a symbolic link to the key will do)`)
    return {
      spec: { host, user: user === "" ? undefined : user, port, alias, identityFile: identityFile.text },
      receiver,
      keyPath,
      keyShown
    }
  })

/** The first line of a public key file, when it is one. */
const publicKeyText = (text: string): string | undefined => {
  const line = (text.split(/\r?\n/).find((l) => l.trim() !== "") ?? "").trim()
  return PUBLIC_KEY.test(line) ? line : undefined
}

/**
 * The public key of `keyPath`: `<key>.pub`, else derived with `ssh-keygen -y` (reads only); `undefined`
 * with the reason when neither gives one.
 */
const publicKeyOf = (keyPath: string): Effect.Effect<{ readonly key: string } | { readonly problem: string }> =>
  Effect.gen(function* () {
    const pub = `${keyPath}.pub`
    const read = readTextFile(pub, PUBLIC_KEY_MAX_BYTES)
    if (read._tag === "Text") {
      const key = publicKeyText(read.text)
      return key === undefined ? { problem: `${pub}: not an OpenSSH public key` } : { key }
    }
    if (read._tag === "Refused") return { problem: `${pub}: ${read.reason}` }
    const derived = yield* runTool("ssh-keygen", ["-y", "-f", keyPath], { timeoutMs: KEYGEN_TIMEOUT_MS })
    const why = failureOf("ssh-keygen", derived, KEYGEN_TIMEOUT_MS, "last")
    const key = why === undefined ? publicKeyText(derived.stdout) : undefined
    return key === undefined ? { problem: `${pub} is missing and ssh-keygen -y could not derive it${why === undefined ? "" : ` (${why})`}` } : { key }
  })

/** The short host name for the key's comment: letters, digits, `.`, `_` and `-` only. */
const commentHost = (): string => {
  const h = (hostname().split(".")[0] ?? "").replace(/[^A-Za-z0-9_-]/g, "")
  return h === "" ? "host" : h
}

const unusable = (path: string, e: unknown) => {
  const code = (e as NodeJS.ErrnoException | undefined)?.code
  return new PathUnusable({ path, reason: code === "EISDIR" ? "is a directory" : dirReason(code ?? String(e)) })
}

/** Creates the key with `ssh-keygen -t ed25519 -N "" -C ocpool-notify@<host>` (private key mode 0600). */
const createKey = (keyPath: string): Effect.Effect<void, PathUnusable> =>
  Effect.gen(function* () {
    const dirProblem = makeDir(dirname(keyPath), 0o700)
    if (dirProblem !== undefined) return yield* new PathUnusable({ path: dirProblem.path, reason: dirReason(dirProblem.code) })
    const r = yield* runTool("ssh-keygen", ["-t", "ed25519", "-N", "", "-C", `ocpool-notify@${commentHost()}`, "-f", keyPath], { timeoutMs: KEYGEN_TIMEOUT_MS })
    const why = failureOf("ssh-keygen", r, KEYGEN_TIMEOUT_MS, "last")
    if (why !== undefined) return yield* new PathUnusable({ path: keyPath, reason: `the key could not be created: ${why}` })
    yield* Effect.try({ try: () => chmodSync(keyPath, 0o600), catch: (e) => unusable(keyPath, e) })
  })

type ConfigWrite = "written" | "unchanged" | "not written (--print)"

/** The config edit, planned before anything is created or written. */
interface ConfigPlan {
  readonly path: string
  /** The bytes to write; `undefined` when the file already holds them. */
  readonly bytes: Buffer | undefined
  /** The mode to write with: the file's own, 0600 for a new one. */
  readonly mode: number
}

/** Reads `~/.ssh/config` as bytes and splices the block in (exit 1 when unreadable or over the cap, before or after). */
const planConfig = (path: string, spec: TunnelSpec): Effect.Effect<ConfigPlan, PathUnusable> =>
  Effect.gen(function* () {
    const read = readBytesFile(path, SSH_CONFIG_MAX_BYTES)
    if (read._tag === "Refused") return yield* new PathUnusable({ path, reason: read.tooLarge === true ? "larger than 1 MiB, not changed" : read.reason })
    // latin1: one character per byte, so the splice keeps every byte outside the block
    const before = read._tag === "Bytes" ? read.bytes.toString("latin1") : undefined
    const after = withTunnelBlock(before ?? "", spec)
    if (after.length > SSH_CONFIG_MAX_BYTES) return yield* new PathUnusable({ path, reason: "the block would take it over 1 MiB, not changed" })
    return { path, bytes: after === before ? undefined : Buffer.from(after, "latin1"), mode: read._tag === "Bytes" ? read.stat.mode & 0o777 : 0o600 }
  })

const accessCode = (path: string, mode: number): string | undefined => {
  try {
    accessSync(path, mode)
    return undefined
  } catch (e) {
    return (e as NodeJS.ErrnoException).code ?? String(e)
  }
}


/**
 * Whether the planned write can happen: the directory (created when missing), the file a link points
 * to, not read-only, a directory it can be replaced in, no directory at `<file>.tmp`. Returns the file
 * to write. Nothing is created but a missing ~/.ssh.
 */
const checkWritable = (path: string): Effect.Effect<string, PathUnusable> =>
  Effect.gen(function* () {
    const dirProblem = makeDir(dirname(path), 0o700)
    if (dirProblem !== undefined) return yield* new PathUnusable({ path: dirProblem.path, reason: dirReason(dirProblem.code) })
    const target = writeTarget(path)
    const st = yield* Effect.try({ try: () => statSync(target, { throwIfNoEntry: false }), catch: (e) => unusable(target, e) })
    if (st !== undefined && isReadOnly(target, st)) return yield* new PathUnusable({ path: target, reason: "read-only (no write permission), not changed" })
    const dir = dirname(target)
    const dirCode = accessCode(dir, constants.W_OK | constants.X_OK)
    if (dirCode !== undefined) return yield* new PathUnusable({ path: dir, reason: dirReason(dirCode) })
    const tmp = `${target}.tmp`
    const tmpStat = yield* Effect.try({ try: () => lstatSync(tmp, { throwIfNoEntry: false }), catch: (e) => unusable(tmp, e) })
    if (tmpStat?.isDirectory() === true) return yield* new PathUnusable({ path: tmp, reason: "a directory is in the way of the write (through this temporary name), not changed" })
    return target
  })

/** Writes the planned bytes (atomically, the mode kept or 0600) into `target`. */
const writeConfig = (target: string, bytes: Buffer, mode: number): Effect.Effect<void, PathUnusable> =>
  Effect.try({ try: () => writeFileWithMode(target, bytes, mode), catch: (e) => unusable(target, e) })

/** Runs the setup; resolves to the text for stdout. */
export const tunnelSetup = (f: TunnelFlags, env: NodeJS.ProcessEnv = process.env): Effect.Effect<string, BadInput | UsageProblem | PathUnusable> =>
  Effect.gen(function* () {
    const home = homeDir(env)
    const c = yield* checkFlags(f, home)
    if (home === undefined && !f.print) return yield* new PathUnusable({ path: "~/.ssh/config", reason: NO_HOME })
    const configPath = home === undefined ? undefined : join(home, ".ssh", "config")
    const plan = configPath === undefined ? undefined : yield* planConfig(configPath, c.spec)
    // every reason not to write is found before the key is created
    const target = plan?.bytes === undefined || f.print ? undefined : yield* checkWritable(plan.path)

    let keyState: string
    if (occupied(c.keyPath)) keyState = "exists"
    else if (f.print) keyState = "absent (created on setup; --print creates nothing)"
    else {
      yield* createKey(c.keyPath)
      keyState = "created (ed25519, mode 600)"
    }
    const pub = occupied(c.keyPath) ? yield* publicKeyOf(c.keyPath) : { key: `<public key of ${c.keyShown}, created on setup>` }
    if ("problem" in pub) return yield* new PathUnusable({ path: c.keyPath, reason: pub.problem })

    let written: ConfigWrite
    if (plan === undefined || f.print) written = "not written (--print)"
    else if (target === undefined || plan.bytes === undefined) written = "unchanged"
    else {
      // planned again on the bytes there now: an edit made while the key was created is not lost
      const now = keyState.startsWith("created") ? yield* planConfig(plan.path, c.spec) : plan
      if (now.bytes === undefined) written = "unchanged"
      else {
        yield* writeConfig(target, now.bytes, now.mode)
        written = "written"
      }
    }
    const hostSetting = c.spec.alias === DESKTOP_ALIAS ? "" : ` (this alias is not the default: set OCPOOL_NOTIFY_HOST=${c.spec.alias} or the plugin option notifyHost)`
    return [
      `~/.ssh/config: block ${c.spec.alias} ${written}`,
      ...tunnelBlock(c.spec),
      "",
      `key ${printable(c.keyShown)}: ${keyState}`,
      "",
      `On the desktop (${c.spec.host}), add this line to ~/.ssh/authorized_keys:`,
      authorizedKeysLine(c.receiver, pub.key),
      "",
      "Next steps:",
      `  1. Add the line above to ~/.ssh/authorized_keys on the desktop. '${c.receiver}' must run there in a non-interactive ssh session: if ocpool is not on that PATH, run this again with --receiver "/full/path/to/ocpool receive".`,
      `  2. From here, try it: ${ocpoolLine(`notify --kind test --via ssh --host ${c.spec.alias}`, env)}   (or: ${ocpoolLine("doctor --probe", env)})`,
      `  3. opencode in an SSH session then sends its notifications through ${c.spec.alias}${hostSetting}.`
    ]
      .map((l) => printable(l))
      .join("\n")
  })


export const tunnelSetupCommand = Command.make(
  "setup",
  {
    host: text("host", "H", "The desktop as seen from here: host name or address (required); with a forward of the desktop's port 22, localhost and --port"),
    user: text("user", "U", "Login name on the desktop (default: ssh's own)"),
    port: text("port", "P", "ssh port of the desktop, 1-65535 (default: ssh's own)"),
    alias: text("alias", "A", `The ssh Host alias to write (default ${DESKTOP_ALIAS}, the one the plugin finds by itself)`),
    key: text("key", "PATH", "The hop's private key (default ~/.ssh/ocpool_notify; created with ssh-keygen -t ed25519 when absent)"),
    receiver: text("receiver", "CMD", `The forced command in the authorized_keys line (default "${DEFAULT_RECEIVER}")`),
    print: Options.boolean("print").pipe(Options.withDescription("Write nothing and create no key: only print the block and the authorized_keys line"))
  },
  (a) =>
    Effect.gen(function* () {
      const out = yield* tunnelSetup({
        host: Option.getOrUndefined(a.host),
        user: Option.getOrUndefined(a.user),
        port: Option.getOrUndefined(a.port),
        alias: Option.getOrUndefined(a.alias),
        key: Option.getOrUndefined(a.key),
        receiver: Option.getOrUndefined(a.receiver),
        print: a.print
      })
      yield* Console.log(out)
    })
).pipe(
  Command.withDescription(
    "Run on the remote machine: create the hop key ~/.ssh/ocpool_notify if absent (mode 600), write the marked 'Host ocpool-desktop' block into ~/.ssh/config (replaced in place: a second run changes nothing), and print the block and the line for the desktop's ~/.ssh/authorized_keys (command=\"ocpool receive\",no-pty,no-port-forwarding,…). Exit 0; 1 if the key or the config cannot be written; 2 without --host or with a bad value."
  )
)

export const tunnelCommand = commandGroup("tunnel", "Set up the ssh hop that carries notifications from this (remote) machine to your desktop.", [tunnelSetupCommand])
