/** Claims and load accounting (SPEC §5.1, §5.2). Pure: claims and times in, loads and plans out. */
import { CAP_FACTOR, CLAIM_TTL_MS, DEAD_FILE_MS, LOCK_STALE_MS, ORPHAN_TMP_MS } from "./constants.js"
import { holderGone, type Holder } from "./state/holder.js"

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
  /** The holder the file names; `undefined` when the content did not parse as a claim file. */
  readonly content?: { readonly pid: number; readonly host: string | null; readonly startTime: string | null } | undefined
  /** Liveness of the named pid on this host: `alive` (EPERM counts), `dead` (ESRCH). */
  readonly pidState?: "alive" | "dead" | undefined
  /** The live process's start token, when it could be read. */
  readonly liveStartTime?: string | null | undefined
}

export type ClaimFileVerdict = "read" | "skip" | "delete"

/** The holder a state file names, as the holder rules judge it (the files call its start token `startTime`). */
const holderOf = (c: { readonly pid: number; readonly host: string | null; readonly startTime: string | null }): Holder => ({ host: c.host, pid: c.pid, startToken: c.startTime })

/**
 * SPEC §5.2 for one file, given this host and now: a temporary or unreadable file is an orphan after
 * ORPHAN_TMP_MS; a claims table goes when its holder is gone (core/state/holder.ts), its lease being
 * the file's mtime + DEAD_FILE_MS (every publish and heartbeat rewrites it).
 */
export const judgeClaimFile = (file: ClaimFileFacts, host: string, now: number): ClaimFileVerdict => {
  if (file.isTmp || file.content === undefined) return now - file.mtimeMs > ORPHAN_TMP_MS ? "delete" : "skip"
  const facts = { pidState: file.pidState, liveStartToken: file.liveStartTime }
  return holderGone(holderOf(file.content), file.mtimeMs + DEAD_FILE_MS, facts, host, now) ? "delete" : "read"
}

export interface LockFacts {
  readonly content?: { readonly pid: number; readonly host: string | null; readonly startTime: string | null; readonly at: number } | undefined
  readonly mtimeMs: number
  readonly pidState?: "alive" | "dead" | undefined
  readonly liveStartTime?: string | null | undefined
}

/**
 * SPEC §5.3 step 2: is the existing lock stale? Its holder is gone (core/state/holder.ts), the lease
 * being the `at` it wrote + LOCK_STALE_MS; an unreadable lock (an empty one an older version left
 * included) has only its mtime.
 */
export const isLockStale = (lock: LockFacts, host: string, now: number): boolean => {
  const c = lock.content
  if (c === undefined) return now - lock.mtimeMs > LOCK_STALE_MS
  return holderGone(holderOf(c), c.at + LOCK_STALE_MS, { pidState: lock.pidState, liveStartToken: lock.liveStartTime }, host, now)
}
