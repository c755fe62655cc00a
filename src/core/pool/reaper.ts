/** Reaper decisions (SPEC §8.2, §7.8, TRACE.md §6). Pure: a claim and what is known of it in, a verdict out. */
import { FIRST_TOKEN_STRIKES, HUNG_MIN_AGE_MS, HUNG_SILENCE_MS, MAX_ABORT_ATTEMPTS } from "../constants.js"
import { updateClaim, type AbortOrigin, type Claim } from "./claims.js"

export interface ReaperTiming {
  readonly hangMinAgeMs: number
  readonly hangSilenceMs: number
  /**
   * How long a bound child may go without its first token (issue 35): the engine's clock, which hands
   * the sweep its `stalled` claims; the machine itself never reads it (the line carries the verdicts).
   * Absent: no first-token rule (the plugin's option always gives one, FIRST_TOKEN_MS by default).
   */
  readonly firstTokenMs?: number | undefined
}

export const DEFAULT_TIMING: ReaperTiming = { hangMinAgeMs: HUNG_MIN_AGE_MS, hangSilenceMs: HUNG_SILENCE_MS }

/**
 * Issue 35: a claim whose child has streamed no first token `firstTokenMs` after its spawn. Only a bound
 * claim (there is a session to abort) that no abort is pending or in flight for, not held by a person
 * (`blocked`), and whose session never produced output (`spoke`). The clock runs from the spawn
 * (`acquiredAt`): the time the parent waits, which is the time lost. Independent of the hang clock.
 */
export const missedFirstToken = (claim: Claim, spoke: boolean, blocked: boolean, now: number, firstTokenMs: number): boolean =>
  !spoke && !blocked && claim.targetSession !== null && !claim.abortInFlight && !claim.abortPending && now - claim.acquiredAt >= firstTokenMs

/**
 * Whether a verified first-token abort cools its model (`hang`): only the FIRST_TOKEN_STRIKES-th miss in
 * a row on that model (`before`: the misses since its last success or cooling). One slow start is the
 * provider's queue, not the model; two in a row are the model.
 */

export const firstTokenCools = (before: number): boolean => before + 1 >= FIRST_TOKEN_STRIKES

export type ClaimVerdict =
  /** Its abort is in flight: it keeps its load and waits for the outcome. */
  | { readonly _tag: "Aborting" }
  /** An abort is owed: retry it first, whatever the claim's age, silence or blocked state. */
  | { readonly _tag: "RetryAbort" }
  /** Bound and a person is being asked somewhere in its tree: refresh the heartbeat, leave it. */
  | { readonly _tag: "Blocked" }
  | { readonly _tag: "Young" }
  /** Old enough and still unbound (after any back-fill): release, no abort, no cooldown. */
  | { readonly _tag: "Unbound"; readonly ageMs: number }
  | { readonly _tag: "Hung"; readonly ageMs: number; readonly silenceMs: number }
  | { readonly _tag: "Healthy" }

export interface ClaimFacts {
  readonly now: number
  /** Whether a question or permission is pending in the target's tree. */
  readonly blocked: boolean
  /** The target's last recorded activity, if any (asked only for an old enough bound claim). */
  readonly lastActivity: (session: string) => number | undefined
}

const ABORTING: ClaimVerdict = { _tag: "Aborting" }
const RETRY_ABORT: ClaimVerdict = { _tag: "RetryAbort" }
const BLOCKED: ClaimVerdict = { _tag: "Blocked" }
const YOUNG: ClaimVerdict = { _tag: "Young" }
const HEALTHY: ClaimVerdict = { _tag: "Healthy" }

/** SPEC §8.2 steps 1–5 for one claim. Silence runs from the later of last activity and acquisition. */
export const judgeClaim = (claim: Claim, facts: ClaimFacts, timing: ReaperTiming = DEFAULT_TIMING): ClaimVerdict => {
  if (claim.abortInFlight) return ABORTING
  if (claim.abortPending) return RETRY_ABORT
  if (claim.targetSession !== null && facts.blocked) return BLOCKED
  const ageMs = facts.now - claim.acquiredAt
  if (ageMs <= timing.hangMinAgeMs) return YOUNG
  if (claim.targetSession === null) return { _tag: "Unbound", ageMs }
  const last = facts.lastActivity(claim.targetSession)
  const since = last === undefined ? claim.acquiredAt : Math.max(last, claim.acquiredAt)
  const silenceMs = facts.now - since
  return silenceMs >= timing.hangSilenceMs ? { _tag: "Hung", ageMs, silenceMs } : HEALTHY
}

export type AbortFollowUp =
  /** Verified abort after a signal: release as `signal`, no new cooldown, not a reap. */
  | { readonly _tag: "ReleaseSignal" }
  /** Verified abort of a hang or spin: cool `hang` if the model is not cooling, release as `hung`. */
  | { readonly _tag: "ReleaseHung" }
  /** Verified abort of a child with no first token: release as `hung`; cool `hang` only on the second miss in a row (`firstTokenCools`). */
  | { readonly _tag: "ReleaseFirstToken" }
  /** Failed, attempts left: keep the claim (still load) with the abort pending. */
  | { readonly _tag: "Keep"; readonly claim: Claim }
  /** The third failure in total: release as `gave_up`, no cooldown. */
  | { readonly _tag: "GiveUp"; readonly attempts: number }

/**
 * What follows one abort attempt on a claim (SPEC §7.8, §8.2 step 5, TRACE.md §6). `origin` is the cause
 * of the most recent abort request: a sweep's retry passes the claim's own origin, a new request its cause.
 */
export const afterAbort = (claim: Claim, ok: boolean, origin: AbortOrigin): AbortFollowUp => {
  const cause = origin
  if (ok) return cause === "signal" ? { _tag: "ReleaseSignal" } : cause === "first_token" ? { _tag: "ReleaseFirstToken" } : { _tag: "ReleaseHung" }
  const attempts = claim.abortAttempts + 1
  if (attempts >= MAX_ABORT_ATTEMPTS) return { _tag: "GiveUp", attempts }
  return { _tag: "Keep", claim: updateClaim(claim, { abortAttempts: attempts, abortPending: true, abortOrigin: cause }) }
}
