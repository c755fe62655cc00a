/** Cooldown records every process honours (SPEC §5.4): one `cooldown.<enc>.json` per model. */
import { Context, Data, type Effect } from "effect"
import type { Cooldown, CooldownTable } from "../../core/cooldown.js"

export class CooldownStoreError extends Data.TaggedError("CooldownStoreError")<{ readonly reason: string }> {}

export interface CooldownStoreService {
  /** Every record still worth keeping (expired ones past the decay window, and unreadable files, are deleted). */
  readonly readAll: (now: number) => Effect.Effect<CooldownTable, CooldownStoreError>
  readonly write: (records: ReadonlyArray<Cooldown>) => Effect.Effect<void, CooldownStoreError>
  readonly remove: (model: string) => Effect.Effect<void, CooldownStoreError>
}

export class CooldownStore extends Context.Tag("opencode-pool/CooldownStore")<CooldownStore, CooldownStoreService>() {}
