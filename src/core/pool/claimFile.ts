/** The claim file `claims.<pid>.json` (SPEC §5.1): encoding and tolerant decoding; the decoding uses effect/Schema. Pure. */
import { Option, Schema } from "effect"
import type { Claim } from "./claims.js"
import { Count, EpochMs, JsonObject, orElse, Pid } from "../tolerant.js"

export interface ClaimFile {
  readonly pid: number
  readonly startTime: string | null
  readonly host: string
  readonly writtenAt: number
  readonly reaped: number
  readonly claims: ReadonlyArray<Claim>
}

/** `claims.<pid>.json`, or `claims.<pid>-<n>.json` for the n-th further plugin instance in one process. */
export const CLAIM_FILE = /^claims\.(\d+)(?:-\d+)?\.json$/

/**
 * opencode runs one plugin instance per project directory, all in one process: the first instance
 * writes `claims.<pid>.json`, later ones `claims.<pid>-<n>.json`, so none overwrites another's claims
 * and each counts the others as peers.
 */
export const claimFileName = (pid: number, instance = 0): string => (instance === 0 ? `claims.${pid}.json` : `claims.${pid}-${instance}.json`)

export const encodeClaimFile = (f: ClaimFile): string => {
  const claims: Record<string, unknown> = {}
  for (const c of f.claims) {
    claims[c.key] = {
      base: c.base,
      slot: c.slot,
      model: c.model,
      acquiredAt: c.acquiredAt,
      heartbeatAt: c.heartbeatAt,
      ownerSession: c.ownerSession,
      targetSession: c.targetSession,
      abortAttempts: c.abortAttempts,
      abortPending: c.abortPending
    }
  }
  return JSON.stringify({ version: 1, pid: f.pid, startTime: f.startTime, host: f.host, writtenAt: f.writtenAt, reaped: f.reaped, claims })
}

const ClaimEntry = Schema.Struct({
  base: Schema.String,
  slot: orElse(Count, 0),
  model: Schema.String,
  acquiredAt: EpochMs,
  heartbeatAt: EpochMs,
  ownerSession: orElse(Schema.NullOr(Schema.String), null),
  targetSession: orElse(Schema.NullOr(Schema.String), null),
  abortAttempts: orElse(Count, 0),
  abortPending: orElse(Schema.Boolean, false)
})

/**
 * The file itself: `pid` (an integer ≥ 1) and a `claims` object are required, the rest has defaults;
 * claims are decoded one by one. Times must lie within the date range and counts be integers ≥ 0: a
 * claim with `acquiredAt: 1e16` is invalid, not one from the far future.
 */
const ClaimFileJson = Schema.parseJson(
  Schema.Struct({
    pid: Pid,
    startTime: orElse(Schema.NullOr(Schema.String), null),
    host: orElse(Schema.String, ""),
    writtenAt: orElse(EpochMs, 0),
    reaped: orElse(Count, 0),
    claims: JsonObject
  })
)

const decodeFile = Schema.decodeUnknownOption(ClaimFileJson)
const decodeEntry = Schema.decodeUnknownOption(ClaimEntry)

/** Parses a claim file; invalid claims inside are skipped. `undefined` when the file itself is unusable. */
export const decodeClaimFile = (text: string): ClaimFile | undefined => {
  const file = decodeFile(text)
  if (Option.isNone(file)) return undefined
  const r = file.value
  const claims: Array<Claim> = []
  for (const [key, raw] of Object.entries(r.claims)) {
    const entry = decodeEntry(raw)
    if (Option.isNone(entry)) continue
    const c = entry.value
    claims.push({
      key,
      base: c.base,
      slot: c.slot,
      model: c.model,
      acquiredAt: c.acquiredAt,
      heartbeatAt: c.heartbeatAt,
      ownerSession: c.ownerSession,
      targetSession: c.targetSession,
      abortAttempts: c.abortAttempts,
      abortPending: c.abortPending,
      abortOrigin: c.abortPending ? "signal" : null,
      abortInFlight: false,
      endedInFlight: false
    })
  }
  return { pid: r.pid, startTime: r.startTime, host: r.host, writtenAt: r.writtenAt, reaped: r.reaped, claims }
}
