/** Cooldown records in a shared in-memory table (tests). */
import { Effect, Layer } from "effect"
import { CooldownStore } from "../services/CooldownStore.js"
import type { MemoryState } from "./MemoryState.js"

export const CooldownStoreMemory = (shared: MemoryState) =>
  Layer.succeed(CooldownStore, {
    readAll: () => Effect.sync(() => new Map(shared.cooldowns)),
    write: (records) => Effect.sync(() => records.forEach((r) => shared.cooldowns.set(r.model, r))),
    remove: (model) => Effect.sync(() => void shared.cooldowns.delete(model))
  })
