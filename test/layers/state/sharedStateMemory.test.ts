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
    return {
      process: port,
      dead: () => {
        shared.dead.add(99)
        return port(99)
      }
    }
  }
})
