/**
 * Claims shared by every opencode process on the machine (SPEC §5.1–5.2): each process publishes its
 * own `claims.<pid>.json` and reads everyone else's.
 */
import { Context, Data, type Effect } from "effect"
import type { Claim } from "../../core/claims.js"
import type { ProcessSnapshot } from "../../core/status.js"

export class ClaimStoreError extends Data.TaggedError("ClaimStoreError")<{ readonly reason: string }> {}

export interface OwnClaims {
  readonly claims: ReadonlyArray<Claim>
  readonly reaped: number
}

export interface ClaimStoreService {
  /** Every other live process's claims (dead and stale files are deleted on the way). */
  readonly readPeers: (now: number) => Effect.Effect<ReadonlyArray<ProcessSnapshot>, ClaimStoreError>
  /** Writes this process's claim file (tmp + rename). */
  readonly publish: (own: OwnClaims, now: number) => Effect.Effect<void, ClaimStoreError>
  /** Deletes this process's claim file (dispose; and at start, a stale file named after this pid). */
  readonly removeOwn: Effect.Effect<void>
}

export class ClaimStore extends Context.Tag("opencode-pool/ClaimStore")<ClaimStore, ClaimStoreService>() {}
