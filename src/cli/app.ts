/**
 * The `ocpool` command tree and `runCli`: parses argv, runs the command with the given io, and turns
 * every outcome into an exit code (SPEC §12.1: 0 ok, 1 failure, 2 bad input or usage, 75 busy). Nothing
 * here exits the process or prints a stack: the entry point (main.ts) only sets the exit code.
 */
import { type CliApp, CliConfig, Command, HelpDoc, ValidationError } from "@effect/cli"
import type * as Descriptor from "@effect/cli/CommandDescriptor"
import * as CommandDescriptor from "@effect/cli/CommandDescriptor"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect } from "effect"
import { stripVTControlCharacters } from "node:util"
import { allDocs, type CommandDoc, type DocTree, docTree } from "./help/commandDocs.js"
import { leftover, locate, reported, scan, unknownCommand } from "./help/problems.js"
import { renderCommand, renderTop, usageLine } from "./help/render.js"
import { ocpoolLine } from "../layers/install/installation.js"
import { helpWidth, wrapHelp } from "./help/wrap.js"
import { exitCodeOfFailures, finishRun } from "./outcome.js"
import { type CliIo, CurrentIo, diagnostic, writeOut } from "./output.js"

/** A problem @effect/cli describes, as plain text. */
const helpText = (doc: HelpDoc.HelpDoc): string => stripVTControlCharacters(HelpDoc.toAnsiText(doc))
import { costCommand } from "./cost.js"
import { doctorCommand } from "./doctor/command.js"
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
import { metricsCommand } from "./metrics.js"
import { preParse } from "./shared/preParse.js"
import { commandGroup } from "./shared/commandGroup.js"

declare const OCPOOL_VERSION: string | undefined
const version = typeof OCPOOL_VERSION === "string" ? OCPOOL_VERSION : "0.0.0-dev"

export const root = commandGroup("ocpool", "opencode-pool: pool subagent work over cheap models, and inspect or replay its decisions.", [statusCommand, topCommand, doctorCommand, replayCommand, initCommand, sweepCommand, costCommand, quotaCommand, coolCommand, notifyCommand, receiveCommand, tunnelCommand, runCommand, permitsCommand, mcpCommand, fleetCommand, contextCommand, metricsCommand])

const cli = Command.run(root, { name: "ocpool", version })

let treeMemo: DocTree | undefined
/** The commands' docs (help/commandDocs.ts), each read from the tree when first needed. */
const tree = (): DocTree => (treeMemo ??= docTree(root.descriptor as Descriptor.Command<unknown>))

/** Every command's doc (tests, the help table). */
export const docs = (): ReadonlyArray<CommandDoc> => allDocs(tree())

/** The words before a `--` (a `run`'s command words are already behind one: preParse). */
const ownWords = (args: ReadonlyArray<string>): ReadonlyArray<string> => {
  const end = args.indexOf("--")
  return end < 0 ? args : args.slice(0, end)
}

/** Writes help text wrapped to the io's stdout (its terminal's width, else $COLUMNS, else 80). */
const printWrapped = (which: "stdout" | "stderr", text: string): Effect.Effect<void> =>
  Effect.flatMap(CurrentIo, (io) => writeOut(io, which, wrapHelp(text, helpWidth(io[which].columns, io.env))))

/** A usage error: one line naming the problem, that command's usage, where its help is; exit 2 (SPEC §12.1). */
const usageError = (message: string, args: ReadonlyArray<string>): Effect.Effect<number> => {
  const { doc } = locate(tree(), args)
  // named as it runs from here (`npx ocpool …` in the checkout, else its absolute path when not on PATH)
  const more = ocpoolLine([...doc.path, "--help"].join(" "))
  return Effect.zipRight(diagnostic(message), printWrapped("stderr", `${usageLine(doc)}\n'${more}' shows ${doc.path.length === 0 ? "the commands" : doc.subcommands.length > 0 ? "its commands" : "its flags"}.\n`)).pipe(Effect.as(2))
}

/** `ocpool [command…] --help`: the page of the command the words name; an unknown word is a usage error. */
const help = (args: ReadonlyArray<string>): Effect.Effect<number> => {
  const located = locate(tree(), args)
  if (located.unknownCommand !== undefined) return usageError(unknownCommand({ ...located, unknownCommand: located.unknownCommand }), args)
  return Effect.as(printWrapped("stdout", page(located.tree)), 0)
}

/** Rendered help pages for the start-up fast path (helpGen.ts): unwrapped, styled, keyed by the words before `--help`. */
export const helpPage = (path: ReadonlyArray<string>): string | undefined => {
  let at: DocTree | undefined = tree()
  for (const word of path) at = at?.child(word)
  return at === undefined ? undefined : page(at)
}

const page = (at: DocTree): string => (at.path.length === 0 ? renderTop(at.doc()) : renderCommand(at.doc(), at.children().map((c) => c.doc())))

/**
 * The words as @effect/cli would take them, checked first: an unknown command or flag, a flag without
 * its value or a word left over is one line and the command's usage (exit 2); `--help` prints our page,
 * `--version` the version. Else the words to run (a flag's value that starts with `-` joined to it).
 */
const precheck = (args: ReadonlyArray<string>): Effect.Effect<number | ReadonlyArray<string>, never, CliApp.CliApp.Environment> => {
  const own = ownWords(args)
  const located = locate(tree(), own)
  if (located.unknownCommand !== undefined) return usageError(unknownCommand({ ...located, unknownCommand: located.unknownCommand }), args)
  if (own.length === 0 && args.length > 0) return usageError("'--' ends the flags: the command comes first (ocpool <command> … -- …)", args)
  if (args.length === 1 && args[0] === "--version") return Effect.as(Effect.flatMap(CurrentIo, (io) => writeOut(io, "stdout", `${version}\n`)), 0)
  const scanned = scan(located, args)
  if (scanned.problem !== undefined) return usageError(scanned.problem, args)
  if (scanned.help) return help(own)
  // a group without a command of its own (`ocpool sweep`), or nothing at all: its page
  if (own.length === located.next && located.doc.subcommands.length > 0 && located.doc.flags.length === 0 && located.doc.args.length === 0) return help(own)
  return CommandDescriptor.parse(root.descriptor, ["ocpool", ...scanned.args], CliConfig.defaultConfig).pipe(
    Effect.matchEffect({
      onFailure: (e) => (ValidationError.isHelpRequested(e) ? help(own) : usageError(reported(located, helpText(e.error), args), args)),
      onSuccess: (directive): Effect.Effect<number | ReadonlyArray<string>> =>
        directive._tag === "UserDefined" && directive.leftover.length > 0 ? usageError(leftover(located, directive.leftover[0]!, args), args) : Effect.succeed(scanned.args)
    })
  )
}

/** The wizard prompts on the terminal: with standard input not a terminal it would wait forever. */
// anywhere in argv, after `--` too: @effect/cli starts its wizard for a `--wizard` it finds there
const wizardWithoutTerminal = (args: ReadonlyArray<string>, io: CliIo): boolean => !io.stdinIsTTY && args.some((a) => /^--wizard(=|$)/.test(a))


/** One command's run: @effect/cli's validation errors add the usage and exit 2 (SPEC §12.1), typed failures their codes. */
const command = (argv: ReadonlyArray<string>): Effect.Effect<number, unknown> => {
  const args = argv.slice(2)
  return precheck(args).pipe(
    Effect.flatMap((checked) =>
      typeof checked === "number"
        ? Effect.succeed(checked)
        : cli([...argv.slice(0, 2), ...checked]).pipe(
            Effect.as(0),
            Effect.catchTags({ UsageProblem: (e) => usageError(e.message, args), ExitWith: (e) => Effect.succeed(e.code) }),
            exitCodeOfFailures,
            // @effect/cli has already printed the problem (the precheck catches what it can first)
            Effect.catchIf(ValidationError.isValidationError, () => usageError("the arguments do not go together", args))
          )
    ),
    Effect.provide(NodeContext.layer)
  )
}

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
        ? usageError("--wizard needs an interactive terminal on standard input", argv.slice(2))
        : command(argv),
    io
  )
}
