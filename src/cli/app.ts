/**
 * The `ocpool` command tree and `runCli`: parses argv, runs the command with the given io, and turns
 * every outcome into an exit code (SPEC §12.1: 0 ok, 1 failure, 2 bad input or usage, 75 busy). Nothing
 * here exits the process or prints a stack: the entry point (main.ts) only sets the exit code.
 */
import { Command, ValidationError } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Cause, Console, Effect, Logger, Option } from "effect"
import { describeFailure } from "./errors.js"
import { type CliIo, diagnostic, drain, forStream, isClosedPipe, OutputFailed, recordedFailure, withIo, writeOut, writeReason } from "./output.js"
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

/** The short usage printed on stderr after a usage error; `--help` prints the full help on stdout. */
export const USAGE = [
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

const usageError = (message: string | undefined): Effect.Effect<number> =>
  Effect.zipRight(message === undefined ? Effect.void : diagnostic(message), Console.error(USAGE)).pipe(Effect.as(2))

const fail = (f: { readonly message: string; readonly exitCode: number }): Effect.Effect<number> => Effect.as(diagnostic(f.message), f.exitCode)

/** The wizard prompts on the terminal: with standard input not a terminal it would wait forever. */
const wizardWithoutTerminal = (args: ReadonlyArray<string>, io: CliIo): boolean => !io.stdinIsTTY && args.some((a) => /^--wizard(=|$)/.test(a))

/** One command's run, every typed failure mapped to its exit code. */
const command = (argv: ReadonlyArray<string>): Effect.Effect<number, unknown> =>
  cli(argv).pipe(
    Effect.as(0),
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
      ChecksFailed: () => Effect.succeed(1),
      UsageProblem: (e) => usageError(e.message)
    }),
    // @effect/cli has already printed the problem; add the usage and exit 2 (SPEC §12.1).
    Effect.catchIf(ValidationError.isValidationError, () => usageError(undefined)),
    Effect.provide(NodeContext.layer)
  )

/** The first line of a defect's message, for the one line an unexpected failure gets. */
const defectLine = (defect: unknown): string => {
  const text = defect instanceof Error ? defect.message : typeof defect === "string" ? defect : String(defect)
  return text.split("\n")[0]!.slice(0, 300)
}

/**
 * Effect's own log lines (a forked fiber's unhandled failure, `--log-level`) as one line each on stderr,
 * never a pretty-printed cause on stdout.
 */
const stderrLogger = (io: CliIo) =>
  Logger.make(({ logLevel, message }) => {
    const text = (Array.isArray(message) ? message : [message]).map((m) => (typeof m === "string" ? m : String(m))).join(" ")
    try {
      io.stderr.write(forStream(io, io.stderr, `ocpool: ${logLevel.label.toLowerCase()}: ${text.split("\n")[0]!.slice(0, 300)}\n`), () => {})
    } catch {
      // stderr is gone: nowhere to say it
    }
  })

/**
 * Runs `ocpool` with `argv` (as process.argv: node, script, then the arguments) on `io`; resolves to the
 * exit code. A closed stdout ends the run quietly with the command's own code; any other write failure
 * is `ocpool: cannot write output: <reason>` and 1; an unexpected defect is one line and 1.
 */
export const runCli = (argv: ReadonlyArray<string>, io: CliIo): Effect.Effect<number> => {
  const args = argv.slice(2)
  const run: Effect.Effect<number, unknown> = wizardWithoutTerminal(args, io)
    ? usageError("--wizard needs an interactive terminal on standard input")
    : command(argv)
  return run.pipe(
    Effect.catchAllCause((cause): Effect.Effect<number | "output"> => {
      if (Cause.isInterruptedOnly(cause)) return Effect.succeed(1)
      if (Option.exists(Cause.dieOption(cause), (d) => d instanceof OutputFailed)) return Effect.succeed("output")
      const failure = Cause.failureOption(cause)
      const reason = Option.isSome(failure) ? defectLine(failure.value) : Option.match(Cause.dieOption(cause), { onNone: () => "interrupted", onSome: defectLine })
      return fail({ message: `internal error: ${reason}`, exitCode: 1 })
    }),
    Effect.flatMap((code) =>
      Effect.zipRight(
        drain(io),
        Effect.suspend(() => {
          const failed = recordedFailure(io)
          // a write failed but no record is left (cannot happen): a failure all the same
          if (failed === undefined) return Effect.succeed(code === "output" ? 1 : code)
          // the reader closed the pipe (`ocpool status | head -1`): stop quietly, with the command's own code
          if (isClosedPipe(failed)) return Effect.succeed(code === "output" ? 0 : code)
          // stderr itself is unwritable: nowhere to say why
          if (failed.stream === "stderr") return Effect.succeed(code === "output" || code === 0 ? 1 : code)
          return Effect.as(Effect.catchAllDefect(writeOut(io, "stderr", `ocpool: cannot write output: ${writeReason(failed.error)}\n`), () => Effect.void), 1)
        })
      )
    ),
    withIo(io),
    Effect.provide(Logger.replace(Logger.defaultLogger, stderrLogger(io)))
  )
}
