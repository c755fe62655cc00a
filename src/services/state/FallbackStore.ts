/** Root sessions' active fallbacks every process shares (issue 12, US-50): one `fallback.<enc>.json` per session. */
import { Context, type Effect } from "effect"
import type { FallbackRecord } from "../../core/quota/fallbackRecord.js"

export interface FallbackStoreService {
  /** Records a switch; a write that cannot be made is skipped. Never fails. */
  readonly record: (r: FallbackRecord) => Effect.Effect<void>
  /** Forgets the session's fallback (its episode ended). Never fails. */
  readonly remove: (session: string) => Effect.Effect<void>
  /** Every record not over at `now`, sorted by session; unreadable files are skipped. Never fails. */
  readonly readAll: (now: number) => Effect.Effect<ReadonlyArray<FallbackRecord>>
}

export class FallbackStore extends Context.Tag("opencode-pool/FallbackStore")<FallbackStore, FallbackStoreService>() {}
