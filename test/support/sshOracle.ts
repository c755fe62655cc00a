/**
 * What OpenSSH makes of the lines `ocpool tunnel setup` writes, for tests (US-13): the real programs
 * (`ssh -G`, `ssh -v` through a `ProxyCommand` that fails at once, `ssh-keygen -lf`) and models of
 * the parsers transcribed from openssh-portable:
 *
 * - `argvSplit`: misc.c `argv_split` (ssh_config arguments since OpenSSH 8.7): `"` and `'` quote,
 *   `\\`, `\"`, `\'` (and `\ ` outside quotes) are escapes, any other backslash is kept, a `#` that
 *   starts an argument ends the line;
 * - `strdelimArgs`: misc.c `strdelim` (ssh_config before 8.7): `"` quotes with no escape at all,
 *   whitespace and one `=` separate;
 * - `percentDollarExpand`: misc.c `vdollar_percent_expand` (IdentityFile after `~`): `${NAME}` is an
 *   environment variable (no escape exists), `%%` a `%`, another `%x` a token;
 * - `authorizedKeysCommand`: sshkey_advance_past_options and auth-options.c `opt_dequote`: inside
 *   the quotes only `\"` is an escape.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir, userInfo } from "node:os"
import { join } from "node:path"

const MISSING = "is not installed: the real OpenSSH checks need the package openssh-client (apt-get install -y openssh-client)"

/** Throws one line naming the package when `ssh` or `ssh-keygen` is missing. */
export const requireOpenSsh = (): void => {
  for (const program of ["ssh", "ssh-keygen"]) {
    const r = spawnSync(program, program === "ssh" ? ["-V"] : ["-?"], { encoding: "utf8" })
    if ((r.error as NodeJS.ErrnoException | undefined)?.code === "ENOENT") throw new Error(`${program} ${MISSING}`)
  }
}

/** ssh's own home directory (`~` in ssh_config is the passwd entry's, never HOME). */
export const sshHome = (): string => userInfo().homedir

export interface SshView {
  readonly code: number | null
  readonly stderr: string
  /** First value of each keyword `ssh -G` prints. */
  readonly values: ReadonlyMap<string, string>
  readonly identityFiles: ReadonlyArray<string>
}

/** `ssh -G -F file -- alias`: the configuration ssh would use, as it prints it. */
export const sshG = (file: string, alias: string): SshView => {
  const r = spawnSync("ssh", ["-G", "-F", file, "--", alias], { encoding: "latin1", timeout: 10_000 })
  if ((r.error as NodeJS.ErrnoException | undefined)?.code === "ENOENT") throw new Error(`ssh ${MISSING}`)
  const values = new Map<string, string>()
  const identityFiles: Array<string> = []
  for (const line of (r.stdout ?? "").split("\n")) {
    const sp = line.indexOf(" ")
    if (sp <= 0) continue
    const key = line.slice(0, sp)
    // ssh prints bytes: the test compares the UTF-8 text
    const value = Buffer.from(line.slice(sp + 1), "latin1").toString("utf8")
    if (!values.has(key)) values.set(key, value)
    if (key === "identityfile") identityFiles.push(value)
  }
  return { code: r.status, stderr: r.stderr ?? "", values, identityFiles }
}

/** sshlog's `strnvis(VIS_SAFE | VIS_OCTAL)` undone: `\\` and `\ooo` back to bytes, read as UTF-8. */
const unvis = (s: string): string => {
  const bytes: Array<number> = []
  for (let i = 0; i < s.length; i++) {
    if (s[i] === "\\" && s[i + 1] === "\\") {
      bytes.push(0x5c)
      i++
    } else if (s[i] === "\\" && /^[0-7]{3}$/.test(s.slice(i + 1, i + 4))) {
      bytes.push(parseInt(s.slice(i + 1, i + 4), 8))
      i += 3
    } else bytes.push(...Buffer.from(s[i]!, "utf8"))
  }
  return Buffer.from(bytes).toString("utf8")
}

/**
 * The identity files ssh loads for `alias`, after its own `~`, `%` and `${}` expansion: `ssh -v` with
 * a `ProxyCommand` that exits at once (no network, nothing written: with `-F` ssh creates no ~/.ssh).
 */
export const sshIdentityPaths = (file: string, alias: string, env: NodeJS.ProcessEnv = {}): { readonly paths: ReadonlyArray<string>; readonly stderr: string } => {
  const r = spawnSync(
    "ssh",
    ["-v", "-F", file, "-o", "ProxyCommand=false", "-o", "ControlMaster=no", "-o", "ControlPath=none", "-o", "BatchMode=yes", "-o", "UserKnownHostsFile=/dev/null", "-o", "GlobalKnownHostsFile=/dev/null", "--", alias, "true"],
    { encoding: "utf8", timeout: 10_000, env: { PATH: process.env.PATH, ...env } }
  )
  if ((r.error as NodeJS.ErrnoException | undefined)?.code === "ENOENT") throw new Error(`ssh ${MISSING}`)
  const paths: Array<string> = []
  for (const m of (r.stderr ?? "").matchAll(/^debug1: identity file (.*) type -?\d+\r?$/gm)) {
    const p = unvis(m[1]!)
    if (!p.endsWith("-cert")) paths.push(p)
  }
  return { paths, stderr: r.stderr ?? "" }
}

/** Whether `ssh-keygen -lf` reads `line` as an authorized_keys line (options, then a key). */
export const keygenAccepts = (line: string): { readonly ok: boolean; readonly output: string } => {
  const dir = mkdtempSync(join(tmpdir(), "ocpool-ak-"))
  const file = join(dir, "authorized_keys")
  writeFileSync(file, `${line}\n`)
  const r = spawnSync("ssh-keygen", ["-lf", file], { encoding: "utf8", timeout: 10_000 })
  if ((r.error as NodeJS.ErrnoException | undefined)?.code === "ENOENT") throw new Error(`ssh-keygen ${MISSING}`)
  return { ok: r.status === 0, output: `${r.stdout}${r.stderr}`.trim() }
}

// ---- models ------------------------------------------------------------------------------------

const WHITESPACE = " \t\r\n"

/** readconf.c: a line's trailing whitespace and form feeds go before it is split. */
export const stripTrailing = (line: string): string => line.replace(/[ \t\r\n\f]+$/, "")

/** misc.c `argv_split(s, …, terminate_on_comment = 1)`; `undefined` for "invalid quotes". */
export const argvSplit = (s: string): ReadonlyArray<string> | undefined => {
  const argv: Array<string> = []
  let i = 0
  for (; i < s.length; i++) {
    if (s[i] === " " || s[i] === "\t") continue
    if (s[i] === "#") break
    let quote = ""
    let arg = ""
    for (; i < s.length; i++) {
      const c = s[i]!
      const n = s[i + 1]
      if (c === "\\") {
        if (n === "'" || n === '"' || n === "\\" || (quote === "" && n === " ")) {
          i++
          arg += n
        } else arg += c
      } else if (quote === "" && (c === " " || c === "\t")) break
      else if (quote === "" && (c === '"' || c === "'")) quote = c
      else if (quote !== "" && c === quote) quote = ""
      else arg += c
    }
    argv.push(arg)
    if (i >= s.length) {
      if (quote !== "") return undefined
      break
    }
  }
  return argv
}

/** misc.c `strdelim` (split_equals): the next argument and where the rest starts, or `undefined` for a missing quote. */
const strdelim = (s: string, from: number): { readonly arg: string; readonly rest: number } | undefined => {
  let k = from
  while (k < s.length && !(WHITESPACE + '"=').includes(s[k]!)) k++
  if (k >= s.length) return { arg: s.slice(from), rest: s.length }
  const span = (at: number) => {
    let j = at
    while (j < s.length && WHITESPACE.includes(s[j]!)) j++
    return j
  }
  if (s[k] === '"') {
    const close = s.indexOf('"', k + 1)
    if (close === -1) return undefined
    return { arg: s.slice(from, k) + s.slice(k + 1, close), rest: span(close + 1) }
  }
  const equals = s[k] === "="
  let rest = span(k + 1)
  if (!equals && s[rest] === "=") rest = span(rest + 1)
  return { arg: s.slice(from, k), rest }
}

/** The one argument of a keyword line as OpenSSH before 8.7 reads it (strdelim, then "garbage at end of line"). */
export const strdelimOneArg = (s: string): string | undefined => {
  const first = strdelim(s, 0)
  if (first === undefined || first.arg === "") return undefined
  if (first.rest < s.length) {
    const more = strdelim(s, first.rest)
    if (more === undefined || more.arg !== "") return undefined
  }
  return first.arg
}

/** misc.c `vdollar_percent_expand` with the given `%` tokens; `undefined` where ssh fails. */
export const percentDollarExpand = (s: string, tokens: Readonly<Record<string, string>>, env: Readonly<Record<string, string | undefined>>, dollar: boolean): string | undefined => {
  let out = ""
  for (let i = 0; i < s.length; i++) {
    if (dollar && s[i] === "$" && s[i + 1] === "{") {
      const end = s.indexOf("}", i + 2)
      if (end === -1 || end === i + 2) return undefined
      const value = env[s.slice(i + 2, end)]
      if (value === undefined) return undefined
      out += value
      i = end
      continue
    }
    if (s[i] !== "%") {
      out += s[i]
      continue
    }
    const k = s[i + 1]
    i++
    if (k === "%") out += "%"
    else if (k !== undefined && Object.hasOwn(tokens, k)) out += tokens[k]
    else return undefined
  }
  return out
}

/** misc.c `tilde_expand_filename` for `~` and `~/…` (another user's `~name` is not modelled). */
export const tildeExpand = (s: string, home: string): string | undefined =>
  s === "~" ? home : s.startsWith("~/") ? `${home.replace(/\/$/, "")}/${s.slice(2)}` : s.startsWith("~") ? undefined : s

/** The forced command of an authorized_keys line and the key after the options, as sshd reads them. */
export const authorizedKeysCommand = (line: string): { readonly command: string; readonly options: string; readonly key: string } | undefined => {
  // sshkey_advance_past_options
  let quoted = false
  let i = 0
  for (; i < line.length && (quoted || (line[i] !== " " && line[i] !== "\t")); i++) {
    if (line[i] === "\\" && line[i + 1] === '"') i++
    else if (line[i] === '"') quoted = !quoted
  }
  if (i >= line.length && quoted) return undefined
  const options = line.slice(0, i)
  if (!options.startsWith('command="')) return undefined
  // opt_dequote
  let s = 'command="'.length
  let command = ""
  while (s < options.length && options[s] !== '"') {
    if (options[s] === "\\" && options[s + 1] === '"') s++
    command += options[s]
    s++
  }
  if (s >= options.length) return undefined
  return { command, options: options.slice(s + 1), key: line.slice(i).replace(/^[ \t]+/, "") }
}

/** glibc `inet_aton` (what getaddrinfo with AI_NUMERICHOST takes for IPv4): `1`, `1.2`, `0x7f.1`, octal parts; the dotted quad, or `undefined`. */
const inetAton = (s: string): string | undefined => {
  const parts = s.split(".")
  if (parts.length > 4) return undefined
  const nums: Array<number> = []
  for (const p of parts) {
    const n = /^0x[0-9a-f]*$/i.test(p) ? parseInt(p.slice(2) || "0", 16) : /^0[0-7]*$/.test(p) ? parseInt(p, 8) : /^[1-9][0-9]*$/.test(p) ? Number(p) : NaN
    if (!Number.isFinite(n)) return undefined
    nums.push(n)
  }
  const last = nums.pop()!
  if (nums.some((n) => n > 255) || last >= 2 ** (8 * (4 - nums.length))) return undefined
  let value = last
  nums.forEach((n, i) => (value += n * 2 ** (8 * (3 - i))))
  return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join(".")
}

/** An IPv6 address in its canonical text (compressed, lower case), its zone kept; `undefined` when not one. */
const ipv6 = (s: string): string | undefined => {
  const zoneAt = s.indexOf("%")
  const addr = zoneAt === -1 ? s : s.slice(0, zoneAt)
  if (!addr.includes(":")) return undefined
  try {
    const h = new URL(`http://[${addr}]/`).hostname
    return h.slice(1, -1) + (zoneAt === -1 ? "" : s.slice(zoneAt))
  } catch {
    return undefined
  }
}

/**
 * The HostNames `ssh -G` may print for `host`. ssh resolves a numeric address (AI_NUMERICHOST) and
 * prints it back canonical: an IPv4 form is exactly that (`1` is `0.0.0.1`); an IPv6 form with a zone
 * only when the zone exists here; and it lowers the case of names that hold no `:` or `%`.
 */
export const sshHostNames = (host: string): ReadonlyArray<string> => {
  const v4 = inetAton(host)
  if (v4 !== undefined) return [v4]
  return [...new Set([ipv6(host), host, host.includes(":") || host.includes("%") ? host : host.toLowerCase()].filter((h): h is string => h !== undefined))]
}
