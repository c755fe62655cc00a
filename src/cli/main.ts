/** `ocpool`: the command-line entry (SPEC §12). Commands parse flags and wire layers to core decisions. */
import { Command, ValidationError } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect } from "effect"
import { describeFailure } from "./errors.js"
import { diagnostic } from "./output.js"
import { doctorCommand } from "./doctor.js"
import { initCommand } from "./init.js"
import { replayCommand } from "./replay.js"
import { statusCommand } from "./status.js"
import { sweepCommand } from "./sweep/command.js"

declare const OCPOOL_VERSION: string | undefined
const version = typeof OCPOOL_VERSION === "string" ? OCPOOL_VERSION : "0.0.0-dev"

const root = Command.make("ocpool").pipe(
  Command.withDescription("opencode-pool: pool subagent work over cheap models, and inspect or replay its decisions."),
  Command.withSubcommands([statusCommand, doctorCommand, replayCommand, initCommand, sweepCommand])
)

const cli = Command.run(root, { name: "ocpool", version })

// @effect/cli styles its help with ANSI codes whatever the output; keep pipes and files plain.
for (const stream of [process.stdout, process.stderr]) {
  if (stream.isTTY) continue
  const write = stream.write.bind(stream) as (chunk: unknown, ...rest: Array<unknown>) => boolean
  stream.write = ((chunk: unknown, ...rest: Array<unknown>) =>
    // eslint-disable-next-line no-control-regex
    write(typeof chunk === "string" ? chunk.replace(/\u001b\[[0-9;]*m/g, "") : chunk, ...rest)) as typeof stream.write
}

cli(process.argv).pipe(
  Effect.catchTags({
    FileUnreadable: (e) => fail(describeFailure(e)),
    TraceInvalid: (e) => fail(describeFailure(e)),
    ExpectMismatch: (e) => fail(describeFailure(e)),
    PoolUnusable: (e) => fail(describeFailure(e)),
    StateUnreadable: (e) => fail(describeFailure(e)),
    InitRefused: (e) => fail(describeFailure(e)),
    PathUnusable: (e) => fail(describeFailure(e)),
    BadInput: (e) => fail({ message: e.message, exitCode: 2 }),
    SweepIncomplete: (e) => fail(e),
    ChecksFailed: () => Effect.sync(() => void (process.exitCode = 1)),
    UsageProblem: (e) =>
      Effect.sync(() => {
        process.stderr.write(`ocpool: ${e.message}\n`)
        printUsage()
        process.exitCode = 2
      })
  }),
  // @effect/cli has already printed the problem; add the usage and exit 2 (SPEC §12.1).
  Effect.catchIf(ValidationError.isValidationError, () =>
    Effect.sync(() => {
      printUsage()
      process.exitCode = 2
    })
  ),
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain({ disableErrorReporting: false })
)

/** The short usage printed on stderr after a usage error; `--help` prints the full help on stdout. */
const USAGE = [
  "usage: ocpool <command> [flags]",
  "commands:",
  "  status [--pool FILE] [--json] [--state-dir DIR]                       the pool as every process sees it",
  "  doctor [--probe] [--json] [--state-dir DIR]                           check the setup",
  "  init [--format txt|json] [--force] [--json]                          write the user pool file",
  "  replay [FILE|-] [--pool FILE] [--expect FILE] [--explain] [--json]   replay a spawn trace",
  "  sweep sessions [--db PATH] [--days 30] [--grace-hours 24] [--directory DIR] [--limit N]",
  "                 [--dry-run] [--no-events] [--vacuum] [--force] [--json]  retire old sessions",
  "  sweep events [--db PATH] [--days 7] [--grace-hours 1] [--limit N]",
  "               [--dry-run] [--vacuum] [--force] [--json]                 prune the event log",
  "run 'ocpool --help' or 'ocpool <command> --help' for details"
].join("\n")

function printUsage(): void {
  process.stderr.write(`${USAGE}\n`)
}

function fail(f: { readonly message: string; readonly exitCode: number }) {
  return Effect.zipRight(diagnostic(f.message), Effect.sync(() => void (process.exitCode = f.exitCode)))
}
