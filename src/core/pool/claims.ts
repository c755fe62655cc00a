/** Claims and load accounting (SPEC §5.1, §5.2). Pure: claims and times in, loads and plans out. */
import { CAP_FACTOR, CLAIM_TTL_MS } from "../constants.js"

/**
 * `first_token`: a sweep's `stalled` entry (no first token within `firstTokenMs`, issue 35); `spin`: a
 * sweep's `spinning` entry (SPEC §8.5), which follows an abort as a hang does (issue 36 counts its reap
 * apart: `reaps_total{kind="spinning"}`).
 */
export type AbortOrigin = "signal" | "hang" | "spin" | "first_token"

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
