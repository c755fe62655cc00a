/** MachineFacts with a fixed view, for tests (`MachineFactsTest(view)`). */
import { Effect, Layer } from "effect"
import { MachineFacts, type MachineFactsView } from "../../services/permits/MachineFacts.js"
import { spanned } from "../hotPath.js"

export const MachineFactsTest = (view: MachineFactsView) => Layer.succeed(MachineFacts, MachineFacts.of({ read: spanned(Effect.succeed(view), "MachineFacts.read") }))
