/**
 * The hop payload (SPEC §10.6): UTF-8 lines, `ocpool-notify/1`, op, key, title, message, urgency,
 * icon, sound. The encoder cleans every field (so none holds a newline); the decoder is what `ocpool
 * receive` trusts: every field checked against its whitelist, texts cleaned and capped, never
 * evaluated. On the wire the payload travels as one shell-inert token word (hopToken.ts,
 * docs/DECISIONS.md); the decoder reads the token, and the plain payload of §10.6 as well.
 *
 * Ops: `show` (the eight lines), `close` (lines 1–3: the fade key), and `probe` (lines 1–2; what
 * `ocpool doctor --probe` sends to learn whether the hop host runs `ocpool receive` as its forced
 * command: nothing is shown, the receiver answers PROBE_ANSWER on stderr). An older receiver reads
 * `probe` as a bad op (shown as text). Pure.
 */
import type { Notification } from "./content.js"
import { readHopToken } from "./hopToken.js"
import { MESSAGE_MAX, PAYLOAD_MAX_BYTES, TITLE_MAX } from "./limits.js"
import { iconOf, soundOf, urgencyOf, type Icon, type Sound, type Urgency } from "./sound.js"
import { cleanText, wellFormed } from "./text.js"

export const PAYLOAD_HEADER = "ocpool-notify/1"
export const UNRECOGNISED_TITLE = "opencode-pool: unrecognised message"

const KEY = /^[A-Za-z0-9._:@-]{1,128}$/

/** A fade key when valid (`<host>:<rootSessionID>`), else empty: no fade tracking. */
export const keyOf = (v: string): string => {
  const k = v.trim()
  return KEY.test(k) ? k : ""
}

export interface ShowPayload {
  readonly op: "show"
  readonly key: string
  readonly title: string
  readonly message: string
  readonly urgency: Urgency
  readonly icon: Icon
  readonly sound: Sound
}

export interface ClosePayload {
  readonly op: "close"
  readonly key: string
}

export type Payload = ShowPayload | ClosePayload

/** The payload text for a notification (fields cleaned and whitelisted, so each is one line). */
export const encodeShow = (key: string, n: Pick<Notification, "title" | "message" | "urgency" | "icon" | "sound">): string =>
  [PAYLOAD_HEADER, "show", keyOf(key), cleanText(n.title, TITLE_MAX), cleanText(n.message, MESSAGE_MAX), urgencyOf(n.urgency), iconOf(n.icon), soundOf(n.sound)].join("\n")

export const encodeClose = (key: string): string => [PAYLOAD_HEADER, "close", keyOf(key)].join("\n")

/** The probe payload of `ocpool doctor --probe`: shows nothing; the receiver answers on stderr. */
export const encodeProbe = (): string => [PAYLOAD_HEADER, "probe"].join("\n")

const encoder = new TextEncoder()
const decoder = new TextDecoder("utf-8", { fatal: false })

/** `s` cut to at most `max` UTF-8 bytes, at a character boundary. */
export const truncateUtf8 = (s: string, max: number): string => {
  const w = wellFormed(s)
  // every code unit is at most 3 bytes: short strings need no encoding
  if (w.length * 3 <= max) return w
  const bytes = encoder.encode(w)
  if (bytes.length <= max) return w
  let end = max
  // back off continuation bytes (10xxxxxx) so the cut is at a character boundary
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--
  return decoder.decode(bytes.subarray(0, end))
}

export const utf8Length = (s: string): number => encoder.encode(wellFormed(s)).length

export type Received =
  | { readonly _tag: "Empty" }
  | ({ readonly _tag: "Show" } & Omit<ShowPayload, "op">)
  | { readonly _tag: "Close"; readonly key: string }
  | { readonly _tag: "Probe" }
  /**
   * Not a payload: shown as text. `bytes` is the size that arrived (of a token, the token's). The
   * message is the payload's text cleaned (of a token, the decoded payload's; of a malformed token,
   * the token's own text).
   */
  | { readonly _tag: "Unrecognised"; readonly title: string; readonly message: string; readonly bytes: number }

const unrecognised = (text: string, bytes: number): Received => ({ _tag: "Unrecognised", title: UNRECOGNISED_TITLE, message: cleanText(text, MESSAGE_MAX), bytes })

/**
 * What `ocpool receive` makes of `SSH_ORIGINAL_COMMAND`: a hop token (surrounding whitespace trimmed)
 * is decoded first, then its payload is read as a plain one; anything else is the plain payload of
 * SPEC §10.6. A malformed token (too long, not canonical base64url, not UTF-8) is shown as text, never
 * read as a payload and never decoded twice. Either way the payload is cut at PAYLOAD_MAX_BYTES (at a
 * character boundary) before it is read.
 */
export const decodePayload = (raw: string | undefined): Received => {
  if (raw === undefined) return { _tag: "Empty" }
  const token = readHopToken(raw)
  switch (token._tag) {
    case "NotToken":
      return decodePlain(raw, utf8Length(raw))
    case "Malformed":
      return unrecognised(truncateUtf8(raw, PAYLOAD_MAX_BYTES), utf8Length(raw))
    case "Token":
      return decodePlain(token.payload, utf8Length(raw))
  }
}

/** The plain payload of SPEC §10.6; `bytes` is the size that arrived. */
const decodePlain = (raw: string, bytes: number): Received => {
  const text = truncateUtf8(raw, PAYLOAD_MAX_BYTES)
  if (text.trim() === "") return { _tag: "Empty" }
  const lines = text.split("\n")
  const op = (lines[1] ?? "").trim().toLowerCase()
  if ((lines[0] ?? "").trim() !== PAYLOAD_HEADER || (op !== "show" && op !== "close" && op !== "probe")) return unrecognised(text, bytes)
  if (op === "probe") return { _tag: "Probe" }
  const key = keyOf(lines[2] ?? "")
  if (op === "close") return { _tag: "Close", key }
  const title = cleanText(lines[3] ?? "", TITLE_MAX)
  return {
    _tag: "Show",
    key,
    title: title === "" ? "opencode" : title,
    message: cleanText(lines[4] ?? "", MESSAGE_MAX),
    urgency: urgencyOf(lines[5]),
    icon: iconOf(lines[6]),
    sound: soundOf(lines[7])
  }
}
