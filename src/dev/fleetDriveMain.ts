/** `node dist/dev-fleet-drive.js`: the fleet driver's process entry (fleetDrive.ts), wired as the CLI's main.ts is. */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect, Exit } from "effect"
import { processIo } from "../cli/output.js"
import { LoggerStderr } from "../layers/process/LoggerStderr.js"
import { runDrive } from "./fleetDrive.js"

runDrive(process.argv.slice(2), processIo()).pipe(
  // Effect.log* lines: one line each on stderr
  Effect.provide(LoggerStderr),
  NodeRuntime.runMain({
    disableErrorReporting: true,
    disablePrettyLogger: true,
    // runDrive never fails and has already drained its output: the code is final
    teardown: (exit, onExit) => onExit(Exit.isSuccess(exit) ? Number(exit.value) : 1)
  })
)
