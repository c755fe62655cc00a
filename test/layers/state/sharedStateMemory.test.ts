/** The shared-state contract over the memory backend (several "processes" on one MemoryState). */
import { memoryState } from "../../../src/layers/state/MemoryState.js"
import { sharedStateLayer } from "../../../src/layers/state/sharedStateLayer.js"
import { StateDirMemory } from "../../../src/layers/state/StateDirMemory.js"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SharedState } from "../../../src/services/state/SharedState.js"
import { sharedStateContract } from "./sharedState.contract.js"

sharedStateContract({
  name: "memory",
  make: () => {
    const shared = memoryState()
    const port = (pid: number) => sharedStateLayer({ backend: "memory", shared, pid }).pipe(Layer.provide(StateDirMemory(pid)))
    // pid 99 (and the group 99) never live; the others do
    shared.dead.add(99)
    return {
      process: port,
      dead: () => port(99),
      holders: { host: "memory", live: (n) => n, dead: 99, liveGroup: 2, deadGroup: 99 }
    }
  }
})

describe("what the memory backend says of itself (issue 34)", () => {
  it.effect("US-46 records in memory, nothing left by an earlier version, no fleet", () =>
    Effect.gen(function* () {
      const seen = yield* Effect.scoped(Effect.flatMap(SharedState, (p) => p.inspect(0)).pipe(Effect.provide(sharedStateLayer({ backend: "memory", shared: memoryState(), pid: 1 }).pipe(Layer.provide(StateDirMemory(1))))))
      expect(seen).toEqual({ store: { _tag: "InMemory" }, leftovers: { toImport: [], unused: [] }, fleet: { _tag: "NotFleet" } })
    })
  )
})
