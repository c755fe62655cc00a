/** The claim file `claims.<pid>.json` (SPEC §5.1): encoding and tolerant decoding. Pure. */
import type { Claim } from "./claims.js"
import { isRecord, parseJsonRecord } from "./json.js"

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

/** Parses a claim file; invalid claims inside are skipped. `undefined` when the file itself is unusable. */
export const decodeClaimFile = (text: string): ClaimFile | undefined => {
  const r = parseJsonRecord(text)
  if (r === undefined || typeof r.pid !== "number" || !isRecord(r.claims)) return undefined
  const claims: Array<Claim> = []
  for (const [key, c] of Object.entries(r.claims)) {
    if (!isRecord(c)) continue
    if (typeof c.base !== "string" || typeof c.model !== "string" || typeof c.acquiredAt !== "number" || typeof c.heartbeatAt !== "number") continue
    claims.push({
      key,
      base: c.base,
      slot: typeof c.slot === "number" ? c.slot : 0,
      model: c.model,
      acquiredAt: c.acquiredAt,
      heartbeatAt: c.heartbeatAt,
      ownerSession: typeof c.ownerSession === "string" ? c.ownerSession : null,
      targetSession: typeof c.targetSession === "string" ? c.targetSession : null,
      abortAttempts: typeof c.abortAttempts === "number" ? c.abortAttempts : 0,
      abortPending: c.abortPending === true,
      abortOrigin: c.abortPending === true ? "signal" : null
    })
  }
  return {
    pid: r.pid,
    startTime: typeof r.startTime === "string" ? r.startTime : null,
    host: typeof r.host === "string" ? r.host : "",
    writtenAt: typeof r.writtenAt === "number" ? r.writtenAt : 0,
    reaped: typeof r.reaped === "number" ? r.reaped : 0,
    claims
  }
}
