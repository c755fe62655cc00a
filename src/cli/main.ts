/** `ocpool`: the process entry (SPEC §12). Runs the command tree in app.ts on the process's streams and sets the exit code. */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect, Exit } from "effect"
import { LoggerStderr } from "../layers/process/LoggerStderr.js"
import { runCli } from "./app.js"
import { processIo } from "./output.js"

runCli(process.argv, processIo()).pipe(
  // Effect.log* lines: one line each on stderr
  Effect.provide(LoggerStderr),
  NodeRuntime.runMain({
    disableErrorReporting: true,
    // the pretty logger runMain installs would print every Effect.log* line a second time, on stdout
    disablePrettyLogger: true,
    // runCli never fails and has already drained its output: the code is final.
    teardown: (exit, onExit) => onExit(Exit.isSuccess(exit) ? Number(exit.value) : 1)
  })
)
