/** Cooldown file names and contents (SPEC §5.4). Pure: encoding, decoding, validation, retention. */
import { STRIKE_DECAY_MS } from "./constants.js"
import type { Cooldown, CoolReason, CoolScope, CoolSource } from "./cooldown.js"
import { parseJsonRecord } from "./json.js"

const SAFE = /[A-Za-z0-9.-]/

/** `opencode/big-pickle` → `cooldown.opencode_2fbig-pickle.json`. */
export const cooldownFileName = (model: string): string => {
  let enc = ""
  for (const byte of new TextEncoder().encode(model)) {
    const ch = String.fromCharCode(byte)
    enc += byte < 128 && SAFE.test(ch) ? ch : `_${byte.toString(16).padStart(2, "0")}`
  }
  return `cooldown.${enc}.json`
}

export const COOLDOWN_FILE = /^cooldown\..+\.json$/

const REASONS: ReadonlySet<string> = new Set(["rate_limit", "quota", "outage", "unavailable", "auth", "hang"])

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
    source: c.source === "peer" ? "flat" : c.source
  })

/** A parsed file, or `undefined` when it is unusable (no `model`, no `until`, not JSON). */
export const decodeCooldown = (text: string): Cooldown | undefined => {
  const r = parseJsonRecord(text)
  if (r === undefined || typeof r.model !== "string" || typeof r.until !== "number") return undefined
  return {
    model: r.model,
    reason: (typeof r.reason === "string" && REASONS.has(r.reason) ? r.reason : "rate_limit") as CoolReason,
    strikes: typeof r.strikes === "number" ? r.strikes : 0,
    scope: (r.scope === "provider" ? "provider" : "model") as CoolScope,
    since: typeof r.since === "number" ? r.since : r.until,
    until: r.until,
    source: (typeof r.source === "string" ? r.source : "flat") as CoolSource
  }
}

/** A record is kept until `until` + 30 min so escalation can see it, then deleted by whoever reads it. */
export const isCooldownExpired = (c: Cooldown, now: number): boolean => now > c.until + STRIKE_DECAY_MS
