/** The shared-state contract over the memory backend (several "processes" on one MemoryState). */
import { memoryState } from "../../../src/layers/state/MemoryState.js"
import { sharedStateLayer } from "../../../src/layers/state/sharedStateLayer.js"
import { StateDirMemory } from "../../../src/layers/state/StateDirMemory.js"
import { Layer } from "effect"
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
