/**
 * One store API over the shared pool state (SPEC §5): a decision that reads shared state runs as one
 * transaction — take the pool lock, read the other processes' claims and the cooldown table, run a
 * pure function of (snapshot, now), write what it changed — and a decision that does not only writes.
 */
import { Context, type Effect } from "effect"
import type { Cooldown } from "../../core/cooldown.js"
import type { PoolSnapshot } from "../../core/engine/snapshot.js"
import type { OwnClaims } from "./ClaimStore.js"

/** What one decision changed in shared state. */
export interface Commit {
  /** This process's claims, when they changed. */
  readonly claims?: OwnClaims | undefined
  readonly cool: ReadonlyArray<Cooldown>
  readonly uncool: ReadonlyArray<string>
}

export interface PoolStoreService {
  /** Under the pool lock: read the snapshot, decide, write the commit. Read and write failures are logged, never raised. */
  readonly transact: <A>(now: number, peers: boolean, decide: (snapshot: PoolSnapshot) => { readonly value: A; readonly commit: Commit }) => Effect.Effect<A>
  /** Writes a commit that read no shared state (own claims only, in practice). */
  readonly commit: (now: number, commit: Commit) => Effect.Effect<void>
  /** The snapshot as it is now, without the lock (status views); `peers: false` skips the other processes' claims. */
  readonly read: (now: number, peers?: boolean) => Effect.Effect<PoolSnapshot>
  /** Removes this process's claim file (dispose). */
  readonly removeOwn: Effect.Effect<void>
}

export class PoolStore extends Context.Tag("opencode-pool/PoolStore")<PoolStore, PoolStoreService>() {}
