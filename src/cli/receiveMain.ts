/**
 * The fast `receive` path (bundled to dist/receive-main.cjs): the hop's forced command runs on the
 * desktop for every notification, so it starts without @effect/cli; the same run `ocpool receive`
 * calls (receive.ts) and the same exit-code mapping (outcome.ts).
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect, Exit } from "effect"
import { finishRun } from "./outcome.js"
import { type CliIo, processIo } from "./output.js"
import { receiveExitCode } from "./receive.js"

export const runReceive = (io: CliIo): Effect.Effect<number> => finishRun(receiveExitCode(), io)

export const main = (): void =>
  runReceive(processIo()).pipe(
    NodeRuntime.runMain({
      disableErrorReporting: true,
      // runReceive never fails and has already drained its output: the code is final.
      teardown: (exit, onExit) => onExit(Exit.isSuccess(exit) ? Number(exit.value) : 1)
    })
  )
