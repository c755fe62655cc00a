/**
 * The `ocpool` command tree and `runCli`: parses argv, runs the command with the given io, and turns
 * every outcome into an exit code (SPEC §12.1: 0 ok, 1 failure, 2 bad input or usage, 75 busy). Nothing
 * here exits the process or prints a stack: the entry point (main.ts) only sets the exit code.
 */
import { Command, ValidationError } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Console, Effect } from "effect"
import { exitCodeOfFailures, finishRun } from "./outcome.js"
import { type CliIo, diagnostic } from "./output.js"
import { costCommand } from "./cost.js"
import { doctorCommand } from "./doctor.js"
import { initCommand } from "./init.js"
import { notifyCommand } from "./notify.js"
import { quotaCommand } from "./quota.js"
import { coolCommand } from "./cool.js"
import { receiveCommand, receiveExitCode } from "./receive.js"
import { forcedReceive } from "./fastRoute.js"
import { replayCommand } from "./replay.js"
import { statusCommand, topCommand } from "./status.js"
import { sweepCommand } from "./sweep/command.js"
import { tunnelCommand } from "./tunnel.js"
import { runCommand } from "./run.js"
import { permitsCommand } from "./permits.js"
import { mcpCommand } from "./mcp.js"
import { fleetCommand } from "./fleet.js"
import { contextCommand } from "./context.js"
import { preParse } from "./shared/preParse.js"

declare const OCPOOL_VERSION: string | undefined
const version = typeof OCPOOL_VERSION === "string" ? OCPOOL_VERSION : "0.0.0-dev"

const root = Command.make("ocpool").pipe(
  Command.withDescription("opencode-pool: pool subagent work over cheap models, and inspect or replay its decisions."),
  Command.withSubcommands([statusCommand, topCommand, doctorCommand, replayCommand, initCommand, sweepCommand, costCommand, quotaCommand, coolCommand, notifyCommand, receiveCommand, tunnelCommand, runCommand, permitsCommand, mcpCommand, fleetCommand, contextCommand])
)

const cli = Command.run(root, { name: "ocpool", version })

/** The short usage printed on stderr after a usage error; `--help` prints the full help on stdout. */
export const USAGE = [
  "usage: ocpool <command> [flags]",
  "commands:",
  "  status [--pool FILE] [--json] [--state-dir DIR]                       the pool as every process sees it",
  "  status --watch [--trace FILE] [--pool FILE] [--json] [--state-dir DIR]  the live view, redrawn as the state changes",
  "  top [--trace FILE] [--pool FILE] [--json] [--state-dir DIR]           the same live view",
  "  doctor [--probe] [--json] [--state-dir DIR]                           check the setup",
  "  init [--format txt|json] [--force] [--json]                          write the user pool file",
  "  init --global|--project [--dry-run] [--remove] [--format txt|json] [--json]",
  "                                                                        add the plugin to opencode's config (or take it out)",
  "  replay [FILE|-] [--pool FILE] [--expect FILE] [--explain] [--json] [--timeline FILE.html|FILE.svg]",
  "                                                                        replay a spawn trace (and draw it)",
  "  sweep sessions [--db PATH] [--days 30] [--grace-hours 24] [--directory DIR] [--limit N]",
  "                 [--dry-run] [--no-events] [--vacuum] [--force] [--json]  retire old sessions",
  "  sweep events [--db PATH] [--days 7] [--grace-hours 1] [--limit N]",
  "               [--dry-run] [--vacuum] [--force] [--json]                 prune the event log",
  "  cost [--db PATH] [--since 7d] [--by agent|model|session|day] [--baseline-model P/M] [--json]",
  "                                                                        what the messages cost, pooled work vs its root model",
  "  quota [--json] [--state-dir DIR]                                      each model's quota from its rate-limit headers",
  "  notify [TITLE [MESSAGE]] [--kind done|question|permission|error|test] [--title T] [--message M]",
  "         [--urgency U] [--icon I] [--sound S] [--via auto|local|ssh] [--host H] [--json]  send one notification",
  "  receive                                                               the hop's forced command (payload in $SSH_ORIGINAL_COMMAND)",
  "  tunnel setup --host H [--user U] [--port P] [--alias A] [--key PATH] [--receiver CMD] [--print]",
  "                                                                        set up the ssh hop to your desktop",
  "  run [--budget NAME] [--weight N] [--wait DUR] [--timeout DUR] [--reason TEXT] -- CMD [ARGS…]",
  "                                                                        run a heavy command when a permit is free",
  "  permits [--json] [--state-dir DIR]                                    the heavy-work budgets, holders and queue",
  "  permits release ID [--force] [--json]                                 free a stuck permit",
  "  mcp [--state-dir DIR]                                                 the permits as a stdio MCP server, for other agent harnesses",
  "  init --mcp claude-code|codex|cursor|print [--remove] [--dry-run] [--force] [--json]",
  "                                                                        add the MCP server to that harness's config (or take it out)",
  "  fleet init [--url URL] [--schema NAME]                                set up fleet mode: create the PostgreSQL schema, print the option",
  "  fleet drive --config FILE --picks N --hold H --seed S --pause-ms P --start-at EPOCH_MS",
  "              [--cool-after K --cool-model MODEL --cool-ms W]          route through the plugin's hooks, one JSON line per event",
  "  context status [--project DIR] [--json] [--max-bytes N] [--state-dir DIR]",
  "                                                                        the project's context map: files, size, changes, runs",
  "  context refresh [--project DIR] [--state-dir DIR]                     queue a map refresh for the project's next idle",
  "run 'ocpool --help' or 'ocpool <command> --help' for details"
].join("\n")

const usageError = (message: string | undefined): Effect.Effect<number> =>
  Effect.zipRight(message === undefined ? Effect.void : diagnostic(message), Console.error(USAGE)).pipe(Effect.as(2))

/** The wizard prompts on the terminal: with standard input not a terminal it would wait forever. */
// anywhere in argv, after `--` too: @effect/cli starts its wizard for a `--wizard` it finds there
const wizardWithoutTerminal = (args: ReadonlyArray<string>, io: CliIo): boolean => !io.stdinIsTTY && args.some((a) => /^--wizard(=|$)/.test(a))


/** One command's run: @effect/cli's validation errors add the usage and exit 2 (SPEC §12.1), typed failures their codes. */
const command = (argv: ReadonlyArray<string>): Effect.Effect<number, unknown> =>
  cli(argv).pipe(
    Effect.as(0),
    Effect.catchTags({ UsageProblem: (e) => usageError(e.message), ExitWith: (e) => Effect.succeed(e.code) }),
    exitCodeOfFailures,
    // @effect/cli has already printed the problem; add the usage and exit 2 (SPEC §12.1).
    Effect.catchIf(ValidationError.isValidationError, () => usageError(undefined)),
    Effect.provide(NodeContext.layer)
  )

/**
 * Runs `ocpool` with `argv` (as process.argv: node, script, then the arguments) on `io`; resolves to the
 * exit code. A closed stdout ends the run quietly with the command's own code; any other write failure
 * is `ocpool: cannot write output: <reason>` and 1; an unexpected defect is one line and 1.
 */
export const runCli = (given: ReadonlyArray<string>, io: CliIo): Effect.Effect<number> => {
  // `ocpool run CMD ARGS…`: the command's words are the command's; `replay - --expect F` as meant
  const argv = [...given.slice(0, 2), ...preParse(given.slice(2))]
  return finishRun(
    forcedReceive(argv.slice(2))
      ? receiveExitCode()
      : wizardWithoutTerminal(argv.slice(2), io)
        ? usageError("--wizard needs an interactive terminal on standard input")
        : command(argv),
    io
  )
}
