/** Cooldown file names and contents (SPEC §5.4). Pure: encoding, decoding, validation, retention; the decoding uses effect/Schema. */
import { Option, Schema } from "effect"
import { STRIKE_DECAY_MS } from "../constants.js"
import type { Cooldown, CoolSource } from "./cooldown.js"
import { Count, EpochMs, orElse } from "../tolerant.js"

const SAFE = /[A-Za-z0-9.-]/

/** A model as the `<enc>` of a per-model state file name: `opencode/big-pickle` → `opencode_2fbig-pickle` (every UTF-8 byte outside `[A-Za-z0-9.-]` as `_xx`). */
export const modelFileKey = (model: string): string => {
  let enc = ""
  for (const byte of new TextEncoder().encode(model)) {
    const ch = String.fromCharCode(byte)
    enc += byte < 128 && SAFE.test(ch) ? ch : `_${byte.toString(16).padStart(2, "0")}`
  }
  return enc
}

/** `opencode/big-pickle` → `cooldown.opencode_2fbig-pickle.json`. */
export const cooldownFileName = (model: string): string => `cooldown.${modelFileKey(model)}.json`

export const COOLDOWN_FILE = /^cooldown\..+\.json$/

/** The file body for a record (`peer` records are never written: they came from a file). */
export const encodeCooldown = (c: Cooldown): string =>
  JSON.stringify({
    version: 1,
    model: c.model,
    reason: c.reason,
    strikes: c.strikes,
    scope: c.scope,
    since: c.since,
    until: c.until,
    source: c.source === "peer" ? "flat" : c.source,
    ...(c.note !== undefined ? { note: c.note } : {}),
    ...(c.ended !== undefined ? { ended: c.ended } : {})
  })

/** `model` and `until` (a time within ±8.64e15 ms) are required; an unknown reason reads as `rate_limit`, any scope but `provider` as `model`. */
const CooldownJson = Schema.parseJson(
  Schema.Struct({
    model: Schema.String,
    reason: orElse(Schema.Literal("rate_limit", "quota", "outage", "unavailable", "auth", "entitlement", "hang", "quota_low", "manual"), "rate_limit"),
    strikes: orElse(Count, 0),
    scope: orElse(Schema.Literal("model", "provider"), "model"),
    since: orElse(Schema.UndefinedOr(EpochMs), undefined),
    until: EpochMs,
    source: orElse(Schema.String, "flat"),
    note: orElse(Schema.UndefinedOr(Schema.String), undefined),
    ended: orElse(Schema.UndefinedOr(EpochMs), undefined)
  })
)

const decodeFile = Schema.decodeUnknownOption(CooldownJson)

/** A parsed file, or `undefined` when it is unusable (no `model`, no `until` or one beyond the date range, not JSON). */
export const decodeCooldown = (text: string): Cooldown | undefined => {
  const file = decodeFile(text)
  if (Option.isNone(file)) return undefined
  const r = file.value
  return {
    model: r.model,
    reason: r.reason,
    strikes: r.strikes,
    scope: r.scope,
    since: r.since ?? r.until,
    until: r.until,
    source: r.source as CoolSource,
    ...(r.note !== undefined ? { note: r.note.slice(0, NOTE_MAX) } : {}),
    ...(r.ended !== undefined ? { ended: r.ended } : {})
  }
}

/** A note (`ocpool cool set --reason`) is cut to this many characters. */
export const NOTE_MAX = 200

/** A record is kept until `until` + 30 min so escalation can see it, then deleted by whoever reads it. */
export const isCooldownExpired = (c: Cooldown, now: number): boolean => now > Math.max(c.until, c.ended ?? c.until) + STRIKE_DECAY_MS
