/** Cooldown records in a shared in-memory table (tests), kept and expired by the file layer's rule. */
import { Effect, Layer } from "effect"
import { isCooldownExpired } from "../../core/cooldownFile.js"
import { CooldownStore } from "../../services/state/CooldownStore.js"
import type { MemoryState } from "./MemoryState.js"

export const CooldownStoreMemory = (shared: MemoryState) =>
  Layer.succeed(CooldownStore, {
    readAll: (now) =>
      Effect.sync(() => {
        for (const [model, c] of shared.cooldowns) if (isCooldownExpired(c, now)) shared.cooldowns.delete(model)
        return new Map(shared.cooldowns)
      }),
    write: (records) => Effect.sync(() => records.forEach((r) => shared.cooldowns.set(r.model, r))),
    remove: (model) => Effect.sync(() => void shared.cooldowns.delete(model))
  })
