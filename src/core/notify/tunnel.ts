/**
 * `ocpool tunnel setup` (SPEC §10.7), the pure part: the marked `Host` block, its replacement in place
 * inside an ssh config text, and the desktop's `authorized_keys` line.
 */

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

/** The block, markers included, as lines. */
export const tunnelBlock = (t: TunnelSpec): ReadonlyArray<string> => [
  beginMarker(t.alias),
  `Host ${t.alias}`,
  `  HostName ${t.host}`,
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

/**
 * `config` with the alias's marked block replaced in place, or appended (after a blank line) when
 * absent. Other text is kept byte for byte; a second marked block of the same alias is removed.
 */
export const withTunnelBlock = (config: string, t: TunnelSpec): string => {
  const eol = config.includes("\r\n") ? "\r\n" : "\n"
  const block = tunnelBlock(t).join(eol)
  const lines = config === "" ? [] : config.split(/\r?\n/)
  const trailing = lines.length > 0 && lines[lines.length - 1] === ""
  if (trailing) lines.pop()
  const out: Array<string> = []
  let placed = false
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() === beginMarker(t.alias)) {
      let j = i + 1
      // a begin marker met before the end marker means this one is unterminated
      while (j < lines.length && lines[j]!.trim() !== endMarker(t.alias) && lines[j]!.trim() !== beginMarker(t.alias)) j++
      if (j >= lines.length || lines[j]!.trim() !== endMarker(t.alias)) {
        // an unterminated block: keep the text as it is, add ours at the end
        out.push(lines[i]!)
        continue
      }
      if (!placed) out.push(block)
      placed = true
      i = j
      continue
    }
    out.push(lines[i]!)
  }
  const appended = !placed
  if (appended) {
    if (out.length > 0 && out[out.length - 1]!.trim() !== "") out.push("")
    out.push(block)
  }
  // a file that did not end with a line break still does not (unless our block is its end)
  return out.join(eol) + (trailing || appended ? eol : "")
}

/**
 * The line for the desktop's `authorized_keys`: the forced command and every restriction, then the
 * public key (its own comment kept).
 */
export const authorizedKeysLine = (receiver: string, publicKey: string): string =>
  `command="${receiver.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}",no-pty,no-port-forwarding,no-agent-forwarding,no-X11-forwarding,no-user-rc ${publicKey.trim()}`
