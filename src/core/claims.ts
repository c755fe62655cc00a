/** Claims and load accounting (SPEC §5.1, §5.2). Pure: claims and times in, loads and plans out. */
import { CAP_FACTOR, CLAIM_TTL_MS, DEAD_FILE_MS, LOCK_STALE_MS, ORPHAN_TMP_MS } from "./constants.js"

export type AbortOrigin = "signal" | "hang"

export interface Claim {
  /** `<ownerSession>:<callID>` in the plugin; the trace's claim id in replay. */
  readonly key: string
  readonly base: string
  readonly slot: number
  readonly model: string
  readonly acquiredAt: number
  readonly heartbeatAt: number
  readonly ownerSession: string | null
  readonly targetSession: string | null
  readonly abortAttempts: number
  readonly abortPending: boolean
  /** The cause of the most recent abort request: it decides the outcome once the abort succeeds (TRACE.md §6). */
  readonly abortOrigin: AbortOrigin | null
  /** An abort was requested and its outcome has not arrived yet: the claim keeps its load and is not attempted again. */
  readonly abortInFlight: boolean
  /** The task ended (a release) while its abort was in flight: the outcome settles it. */
  readonly endedInFlight: boolean
}

/** A copy of a claim with some fields changed. Written out field by field: it runs on hot paths, where
 * an object spread is several times slower and would give claims more than one shape. */
export const updateClaim = (c: Claim, change: Partial<Omit<Claim, "key">>): Claim => ({
  key: c.key,
  base: change.base ?? c.base,
  slot: change.slot ?? c.slot,
  model: change.model ?? c.model,
  acquiredAt: change.acquiredAt ?? c.acquiredAt,
  heartbeatAt: change.heartbeatAt ?? c.heartbeatAt,
  ownerSession: change.ownerSession !== undefined ? change.ownerSession : c.ownerSession,
  targetSession: change.targetSession !== undefined ? change.targetSession : c.targetSession,
  abortAttempts: change.abortAttempts ?? c.abortAttempts,
  abortPending: change.abortPending ?? c.abortPending,
  abortOrigin: change.abortOrigin !== undefined ? change.abortOrigin : c.abortOrigin,
  abortInFlight: change.abortInFlight ?? c.abortInFlight,
  endedInFlight: change.endedInFlight ?? c.endedInFlight
})

/** A claim counts as load while now − heartbeatAt ≤ CLAIM_TTL_MS. */
export const isLive = (claim: Pick<Claim, "heartbeatAt">, now: number): boolean => now - claim.heartbeatAt <= CLAIM_TTL_MS

export const capOf = (weight: number): number => CAP_FACTOR * weight

/** What is known about a sibling claim file, gathered by the shell (SPEC §5.2). */
export interface ClaimFileFacts {
  readonly name: string
  readonly isTmp: boolean
  readonly mtimeMs: number
  /** `undefined` when the content did not parse as a claim file. */
  readonly content?: { readonly pid: number; readonly host: string | null; readonly startTime: string | null } | undefined
  /** Liveness of the named pid on this host: `alive` (EPERM counts), `dead` (ESRCH). */
  readonly pidState?: "alive" | "dead" | undefined
  /** The live process's start token, when it could be read. */
  readonly liveStartTime?: string | null | undefined
}

export type ClaimFileVerdict = "read" | "skip" | "delete"

/** Dead-holder and orphan rules of SPEC §5.2 for one file, given this host and now. */
export const judgeClaimFile = (file: ClaimFileFacts, host: string, now: number): ClaimFileVerdict => {
  const age = now - file.mtimeMs
  if (file.isTmp) return age > ORPHAN_TMP_MS ? "delete" : "skip"
  if (file.content === undefined) return age > ORPHAN_TMP_MS ? "delete" : "skip"
  if (age > DEAD_FILE_MS) return "delete"
  const c = file.content
  if (c.host === host) {
    if (file.pidState === "dead") return "delete"
    if (file.pidState === "alive" && c.startTime != null && file.liveStartTime != null && c.startTime !== file.liveStartTime) {
      return "delete"
    }
  }
  return "read"
}

export interface LockFacts {
  readonly content?: { readonly pid: number; readonly host: string | null; readonly startTime: string | null; readonly at: number } | undefined
  readonly mtimeMs: number
  readonly pidState?: "alive" | "dead" | undefined
  readonly liveStartTime?: string | null | undefined
}

/** SPEC §5.3 step 2: is the existing lock stale? */
export const isLockStale = (lock: LockFacts, host: string, now: number): boolean => {
  const c = lock.content
  if (c === undefined) return now - lock.mtimeMs > LOCK_STALE_MS
  if (now - c.at > LOCK_STALE_MS) return true
  if (c.host === host) {
    if (lock.pidState === "dead") return true
    if (lock.pidState === "alive" && c.startTime != null && lock.liveStartTime != null && c.startTime !== lock.liveStartTime) return true
  }
  return false
}
