/**
 * `ocpool tunnel setup` (SPEC §10.7), the pure part: the marked `Host` block, its replacement in place
 * inside the bytes of an ssh config, and the desktop's `authorized_keys` line, each value written so
 * that OpenSSH reads back exactly that value (or refused with the reason).
 *
 * What OpenSSH does with the lines (openssh-portable):
 * - ssh_config arguments: since 8.7 `argv_split` (misc.c): `"` and `'` quote, `\\`, `\"`, `\'` and,
 *   outside quotes, `\ ` are escapes, any other backslash is kept, a `#` starting an argument ends the
 *   line; before 8.7 `strdelim`: only `"` quotes, with no escape at all, and whitespace or one `=`
 *   separate. A value is written so that both read it the same, or refused.
 * - IdentityFile, after that: `~` expansion, then `${NAME}` (8.4 on; no escape exists) and `%` tokens
 *   (`%%` is a `%`). HostName: `%` tokens.
 * - authorized_keys options (auth-options.c `opt_dequote`): inside the quotes `\"` is the only escape;
 *   every other backslash is kept, so no value can end with one.
 */

import { BOM, byteTextOf } from "../byteText.js"

export const DEFAULT_RECEIVER = "ocpool receive"

export interface TunnelSpec {
  readonly host: string
  readonly user?: string | undefined
  readonly port?: number | undefined
  readonly alias: string
  /** The private key path as written into the block. */
  readonly identityFile: string
}

export const beginMarker = (alias: string): string => `# >>> opencode-pool ${alias} >>>`
export const endMarker = (alias: string): string => `# <<< opencode-pool ${alias} <<<`

/** `%` written so that ssh's `%` expansion gives it back (`%%`). */
const percentEscaped = (s: string): string => s.replace(/%/g, "%%")

/** What needs quotes in an ssh_config argument: whitespace (argv_split, strdelim), `'` (argv_split), `#` (argv_split, at an argument's start), `=` (strdelim). */
const NEEDS_QUOTES = /[\s'#=]/

export type SshArg = { readonly _tag: "Arg"; readonly text: string } | { readonly _tag: "Unwritable"; readonly reason: string }

/**
 * The `IdentityFile` argument that every OpenSSH (7.6 on) reads back as `path` after its own expansion
 * (`path` absolute or `~/…`): `%` doubled, in double quotes when the path holds whitespace, `'`, `#` or
 * `=`. Refused: `${` (expanded as an environment variable, no escape exists), `"` (strdelim has no escape
 * for it), and a backslash inside quotes or before another backslash (argv_split unescapes those,
 * strdelim does not).
 */
export const identityFileArg = (path: string): SshArg => {
  if (path.includes("${")) return { _tag: "Unwritable", reason: "ssh expands '${' as an environment variable and has no escape for it" }
  if (path.includes('"')) return { _tag: "Unwritable", reason: "OpenSSH before 8.7 has no escape for a double quote in ssh_config" }
  const quoted = NEEDS_QUOTES.test(path)
  if (quoted && path.includes("\\")) return { _tag: "Unwritable", reason: "a backslash in a path that needs quotes (a space, ', # or =) is read differently by OpenSSH before and after 8.7" }
  if (path.includes("\\\\")) return { _tag: "Unwritable", reason: "two backslashes in a row are read as one by OpenSSH 8.7 and later, as two before" }
  const text = percentEscaped(path)
  return { _tag: "Arg", text: quoted ? `"${text}"` : text }
}

/** The block, markers included, as lines. */
export const tunnelBlock = (t: TunnelSpec): ReadonlyArray<string> => [
  beginMarker(t.alias),
  `Host ${t.alias}`,
  // an IPv6 zone (`fe80::1%eth0`) would otherwise be read as a `%` token
  `  HostName ${percentEscaped(t.host)}`,
  ...(t.user === undefined ? [] : [`  User ${t.user}`]),
  ...(t.port === undefined ? [] : [`  Port ${t.port}`]),
  `  IdentityFile ${t.identityFile}`,
  "  IdentitiesOnly yes",
  "  BatchMode yes",
  "  ConnectTimeout 5",
  "  ControlMaster auto",
  "  ControlPath ~/.ssh/ocpool-%C",
  "  ControlPersist 10m",
  "  ClearAllForwardings yes",
  "  RequestTTY no",
  "  StrictHostKeyChecking accept-new",
  endMarker(t.alias)
]

interface Line {
  /** Offset of the line's first byte (after a leading BOM on the first line). */
  readonly start: number
  /** Offset after its content: before `\r\n`, `\n`, or the end of the file. */
  readonly contentEnd: number
  /** Offset after its line ending. */
  readonly end: number
}

/** A marker line matches with spaces and tabs around it (and a `\r` that is not part of a CRLF). */
const bare = (s: string): string => s.replace(/^[ \t\f\v\r]+|[ \t\f\v\r]+$/g, "")

/**
 * `config` with the alias's marked block replaced in place, or appended (after a blank line) when
 * absent; a second marked block of the same alias is removed. `config` and the result are byte
 * strings (each character one byte, as `Buffer#toString("latin1")` gives): every byte outside the
 * block is kept as it is (a BOM, bytes that are not UTF-8, each line's own ending, a missing final
 * newline), and the block is the UTF-8 of its lines. A replaced block keeps the line ending its begin
 * marker had; an appended one takes the file's dominant ending (on a tie the last line's, else LF).
 */
export const withTunnelBlock = (config: string, t: TunnelSpec): string => {
  const first = config.startsWith(BOM) ? BOM.length : 0
  const lines: Array<Line> = []
  for (let pos = first; pos < config.length; ) {
    const nl = config.indexOf("\n", pos)
    const end = nl === -1 ? config.length : nl + 1
    const contentEnd = nl === -1 ? config.length : nl > pos && config[nl - 1] === "\r" ? nl - 1 : nl
    lines.push({ start: pos, contentEnd, end })
    pos = end
  }
  const text = (l: Line) => bare(config.slice(l.start, l.contentEnd))
  const eolOf = (l: Line) => config.slice(l.contentEnd, l.end)
  const block = (eol: string) => byteTextOf(tunnelBlock(t).join(eol))
  const begin = beginMarker(t.alias)
  const end = endMarker(t.alias)

  let out = ""
  let copied = 0
  let placed = false
  for (let i = 0; i < lines.length; i++) {
    if (text(lines[i]!) !== begin) continue
    let j = i + 1
    // a begin marker met before the end marker means this one is unterminated
    while (j < lines.length && text(lines[j]!) !== end && text(lines[j]!) !== begin) j++
    // an unterminated block: kept as it is, ours goes at the end
    if (j >= lines.length || text(lines[j]!) !== end) continue
    out += config.slice(copied, lines[i]!.start)
    if (!placed) {
      // the end marker's own line ending (or none) stays
      out += block(eolOf(lines[i]!))
      copied = lines[j]!.contentEnd
    } else copied = lines[j]!.end
    placed = true
    i = j
  }
  out += config.slice(copied)
  if (placed) return out

  let crlf = 0
  let lf = 0
  for (const l of lines) {
    const e = eolOf(l)
    if (e === "\r\n") crlf++
    else if (e === "\n") lf++
  }
  const lastEnded = [...lines].reverse().find((l) => l.end > l.contentEnd)
  const eol = crlf > lf ? "\r\n" : lf > crlf ? "\n" : lastEnded === undefined ? "\n" : eolOf(lastEnded)
  const last = lines[lines.length - 1]
  let gap = ""
  if (last !== undefined) {
    if (last.end === last.contentEnd) gap += eol
    if (text(last) !== "") gap += eol
  }
  return out + gap + block(eol) + eol
}

/** Why `receiver` cannot be the forced command of an authorized_keys line, or `undefined`. */
export const receiverProblem = (receiver: string): string | undefined =>
  receiver.endsWith("\\") ? "cannot end with a backslash: sshd would read it with the closing quote as an escaped quote" : undefined

/**
 * The line for the desktop's `authorized_keys`: the forced command and every restriction, then the
 * public key (its own comment kept). Inside the quotes sshd knows one escape, `\"`; a backslash
 * anywhere else is itself, so only `"` is escaped (see `receiverProblem`).
 */
export const authorizedKeysLine = (receiver: string, publicKey: string): string =>
  `command="${receiver.replace(/"/g, '\\"')}",no-pty,no-port-forwarding,no-agent-forwarding,no-X11-forwarding,no-user-rc ${publicKey.trim()}`
