/**
 * The hop payload (SPEC §10.6): one argument of UTF-8 lines, `ocpool-notify/1`, op, key, title,
 * message, urgency, icon, sound. The encoder cleans every field (so none holds a newline); the decoder
 * is what `ocpool receive` trusts: every field checked against its whitelist, texts cleaned and capped,
 * never evaluated. Pure.
 */
import type { Notification } from "./content.js"
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
  /** Not a payload: shown as text. `bytes` is the size that arrived. */
  | { readonly _tag: "Unrecognised"; readonly title: string; readonly message: string; readonly bytes: number }

/** What `ocpool receive` makes of `SSH_ORIGINAL_COMMAND` (SPEC §10.6). */
export const decodePayload = (raw: string | undefined): Received => {
  if (raw === undefined) return { _tag: "Empty" }
  const bytes = utf8Length(raw)
  const text = truncateUtf8(raw, PAYLOAD_MAX_BYTES)
  if (text.trim() === "") return { _tag: "Empty" }
  const lines = text.split("\n")
  const op = (lines[1] ?? "").trim().toLowerCase()
  if ((lines[0] ?? "").trim() !== PAYLOAD_HEADER || (op !== "show" && op !== "close")) {
    return { _tag: "Unrecognised", title: UNRECOGNISED_TITLE, message: cleanText(text, MESSAGE_MAX), bytes }
  }
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
