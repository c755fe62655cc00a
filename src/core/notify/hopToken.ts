/**
 * The hop token: how the payload of SPEC §10.6 travels as ssh's remote command (a deliberate departure
 * from §10.5's wire format, docs/DECISIONS.md). ssh hands its remote command to the desktop's sshd as
 * one string; only the forced command of the hop key (`command="ocpool receive"`) keeps it away from a
 * shell. A host reached without it (an ordinary login, a wrong `OCPOOL_NOTIFY_HOST`) gives the string
 * to the user's login shell, where the eight lines of a plain payload would each run as a command. So
 * the sender never sends the payload as written: it sends ONE word,
 *
 *     ocpool-notify-b64/1.<base64url of the payload's UTF-8, no padding>
 *
 * made only of `[A-Za-z0-9._/-]`: no whitespace, newline, quote, `$`, backtick, `;`, `&`, `|`, `<`,
 * `>`, `=`, glob character, `~` or `#` that a shell (sh, bash, zsh, fish, csh) would act on. A shell
 * that gets it tries to run a program at that relative path and answers `not found` (127); `ocpool
 * receive` decodes it and validates the payload exactly as before.
 *
 * Also here: what the answers of the hop mean (the probe of `ocpool doctor --probe`, a shell's
 * complaint). Pure.
 */
import { PAYLOAD_MAX_BYTES } from "./limits.js"

export const HOP_TOKEN_PREFIX = "ocpool-notify-b64/1."

/**
 * The longest token `ocpool receive` decodes (prefix included, surrounding whitespace trimmed); a
 * longer one is refused before decoding and shown as text. The largest token the sender makes is that
 * of a PAYLOAD_MAX_BYTES payload, HOP_TOKEN_OF_MAX_PAYLOAD (5,482) characters; a token up to this cap
 * carries up to 12,273 bytes, which are decoded and then cut at PAYLOAD_MAX_BYTES like a plain payload.
 * Both stay far below what the hop can carry: Linux's 128 KiB for one argument or environment string
 * (MAX_ARG_STRLEN: the login shell's `-c` argument, SSH_ORIGINAL_COMMAND) and OpenSSH's 256 KiB packet.
 */
export const HOP_TOKEN_MAX_BYTES = 16_384

/** Characters of the base64url encoding of `bytes` bytes, without padding. */
export const base64UrlLength = (bytes: number): number => Math.floor(bytes / 3) * 4 + [0, 2, 3][bytes % 3]!

/** The length of the token of a payload of PAYLOAD_MAX_BYTES bytes (5,482). */
export const HOP_TOKEN_OF_MAX_PAYLOAD = HOP_TOKEN_PREFIX.length + base64UrlLength(PAYLOAD_MAX_BYTES)

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
/** The value of each ASCII character in the alphabet, −1 for any other. */
const VALUE: ReadonlyArray<number> = Array.from({ length: 128 }, (_, c) => ALPHABET.indexOf(String.fromCharCode(c)))

const CODES = Uint8Array.from(ALPHABET, (c) => c.charCodeAt(0))

/** base64url (RFC 4648 §5) without padding. */
export const toBase64Url = (bytes: Uint8Array): string => {
  const out = new Uint8Array(base64UrlLength(bytes.length))
  let o = 0
  for (let i = 0; i < bytes.length; i += 3) {
    const n = Math.min(3, bytes.length - i)
    const acc = (bytes[i]! << 16) | ((n > 1 ? bytes[i + 1]! : 0) << 8) | (n > 2 ? bytes[i + 2]! : 0)
    out[o++] = CODES[(acc >>> 18) & 63]!
    out[o++] = CODES[(acc >>> 12) & 63]!
    if (n > 1) out[o++] = CODES[(acc >>> 6) & 63]!
    if (n > 2) out[o++] = CODES[acc & 63]!
  }
  // ASCII only: one character per byte, in chunks that stay within the argument limit of a call
  let text = ""
  for (let i = 0; i < out.length; i += 8_192) text += String.fromCharCode(...out.subarray(i, i + 8_192))
  return text
}

/**
 * The bytes of a base64url text without padding, or `undefined` unless it is the canonical encoding of
 * some bytes: only the 64 characters, a length that is not 1 more than a multiple of 4, and the unused
 * low bits of the last character zero. So each byte string has exactly one text, and back.
 */
export const fromBase64Url = (text: string): Uint8Array | undefined => {
  const rest = text.length % 4
  if (rest === 1) return undefined
  const out = new Uint8Array(Math.floor(text.length / 4) * 3 + (rest === 0 ? 0 : rest - 1))
  let o = 0
  for (let i = 0; i < text.length; i += 4) {
    const n = Math.min(4, text.length - i)
    let acc = 0
    for (let j = 0; j < 4; j++) {
      const c = j < n ? text.charCodeAt(i + j) : 65 // a missing character counts as `A` (0)
      const v = c < 128 ? VALUE[c]! : -1
      if (v < 0) return undefined
      acc = (acc << 6) | v
    }
    out[o++] = (acc >>> 16) & 0xff
    if (n > 2) out[o++] = (acc >>> 8) & 0xff
    if (n > 3) out[o++] = acc & 0xff
    // the bits after the last whole byte must be zero (canonical form)
    if ((n === 2 && (acc & 0xffff) !== 0) || (n === 3 && (acc & 0xff) !== 0)) return undefined
  }
  return out
}

const encoder = new TextEncoder()
/** Fatal: bytes that are not UTF-8 (overlong forms, surrogates, cut sequences) make a malformed token. A BOM is kept. */
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/** The token of a payload (lone surrogates are encoded as U+FFFD, as any UTF-8 encoder does). */
export const encodeHopToken = (payload: string): string => HOP_TOKEN_PREFIX + toBase64Url(encoder.encode(payload))

export type TokenRead =
  /** The text does not start with the token prefix: it is read as a plain payload (§10.6). */
  | { readonly _tag: "NotToken" }
  | { readonly _tag: "Token"; readonly payload: string }
  /** It starts with the prefix but is not a token: too long, not canonical base64url, or not UTF-8. */
  | { readonly _tag: "Malformed"; readonly reason: string }

/** What `ocpool receive` makes of SSH_ORIGINAL_COMMAND before reading a payload: a token, or not one. */
export const readHopToken = (raw: string): TokenRead => {
  const text = raw.trim()
  if (!text.startsWith(HOP_TOKEN_PREFIX)) return { _tag: "NotToken" }
  if (text.length > HOP_TOKEN_MAX_BYTES) return { _tag: "Malformed", reason: `longer than ${HOP_TOKEN_MAX_BYTES} bytes` }
  const bytes = fromBase64Url(text.slice(HOP_TOKEN_PREFIX.length))
  if (bytes === undefined) return { _tag: "Malformed", reason: "not base64url" }
  try {
    return { _tag: "Token", payload: strictUtf8.decode(bytes) }
  } catch {
    return { _tag: "Malformed", reason: "not UTF-8" }
  }
}

// ---------------------------------------------------------------------------------------------------
// The answers

/**
 * The one stderr line `ocpool receive` writes for a probe payload (op `probe`), and for nothing else:
 * proof that the host ran the forced command and that it understands the token. It holds no part of
 * the token, so a shell's complaint about the token can never contain it.
 */
export const PROBE_ANSWER = "ocpool receive: probe answered; nothing shown"

/** The token in a text shortened to its prefix and `…`: what a shell says about it, readable. */
export const elideTokens = (text: string): string => text.replace(/ocpool-notify-b64\/1\.[A-Za-z0-9_-]*/g, `${HOP_TOKEN_PREFIX}…`)

const lines = (stderr: string): Array<string> =>
  stderr
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "")

/**
 * The line of stderr in which something other than `ocpool receive` complained about the token (a
 * login shell's `…: not found`, `No such file or directory`, `command not found`), the token elided
 * and capped; `undefined` when no line names it. `ocpool receive` never echoes the token.
 */
export const shellAnswer = (stderr: string): string | undefined => {
  const line = lines(stderr).find((l) => l.includes(HOP_TOKEN_PREFIX))
  if (line === undefined) return undefined
  const short = elideTokens(line)
  return Array.from(short).length > 160 ? `${Array.from(short).slice(0, 159).join("")}…` : short
}

/** The advice that goes with a shell's answer, wherever it is reported. */
export const FORCED_COMMAND_ADVICE = "the hop host must use the forced-command key written by ocpool tunnel setup"

/** How an ssh run's failure reads when a shell, not `ocpool receive`, answered (`<how>` is `ssh exited 127`). */
export const shellFailure = (how: string, line: string): string => `${how}: a login shell answered, not ocpool receive: ${FORCED_COMMAND_ADVICE} (${line})`

/** What answered the probe of `ocpool doctor --probe`. */
export type ProbeAnswer =
  /** `ocpool receive` as the forced command: exit 0 and PROBE_ANSWER. */
  | { readonly _tag: "Receiver" }
  /** A shell (or anything else that is not `ocpool receive`) tried to run the token. */
  | { readonly _tag: "Shell"; readonly line: string }
  /** An `ocpool receive` from before the token: it showed the token as an unrecognised message. */
  | { readonly _tag: "OldReceiver" }
  /** No answer to read: unreachable, refused, timed out, a broken forced command. */
  | { readonly _tag: "NoAnswer" }

/** Reads the answer to a probe from ssh's exit code (`null` when killed or not started) and stderr. */
export const probeAnswer = (code: number | null, stderr: string): ProbeAnswer => {
  const said = lines(stderr)
  if (code === 0 && said.includes(PROBE_ANSWER)) return { _tag: "Receiver" }
  const shell = shellAnswer(stderr)
  if (shell !== undefined) return { _tag: "Shell", line: shell }
  if (code === 0 && said.some((l) => l.startsWith("ocpool receive: payload not understood"))) return { _tag: "OldReceiver" }
  return { _tag: "NoAnswer" }
}
