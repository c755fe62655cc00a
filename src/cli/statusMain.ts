/** The fast `status` path: the same run as `ocpool status` (statusRun.ts), on the process's streams, without @effect/cli. */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect, Exit } from "effect"
import { exitCodeOfFailures, finishRun } from "./outcome.js"
import { type CliIo, processIo } from "./output.js"
import { statusRun, type StatusFlags } from "./statusRun.js"

/** `ocpool status` with flags already parsed by fastRoute; resolves to the exit code on `io`. */
export const runStatus = (flags: StatusFlags, io: CliIo): Effect.Effect<number> => finishRun(exitCodeOfFailures(Effect.as(statusRun(flags), 0)), io)

export const main = (flags: StatusFlags): void =>
  runStatus(flags, processIo()).pipe(
    NodeRuntime.runMain({
      disableErrorReporting: true,
      // runStatus never fails and has already drained its output: the code is final.
      teardown: (exit, onExit) => onExit(Exit.isSuccess(exit) ? Number(exit.value) : 1)
    })
  )
