/** `ocpool status [--pool FILE] [--json] [--state-dir DIR] [--watch [--trace FILE]]` (SPEC §9, §12.2) and `ocpool top` (issue 24). */
import { Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { UsageProblem } from "./errors.js"
import { statusRun } from "./statusRun.js"
import { watchRun } from "./statusWatch.js"

export const stateDirOption = Options.text("state-dir").pipe(
  Options.withPseudoName("DIR"),
  Options.withDescription("The state directory (default: $OCPOOL_STATE_DIR, else $XDG_STATE_HOME/opencode-pool)"),
  Options.optional
)

const pool = Options.text("pool").pipe(Options.withPseudoName("FILE"), Options.withDescription("Pool file to show (default: the user config directory, then the bundled preset)"), Options.optional)
const trace = Options.text("trace").pipe(
  Options.withPseudoName("FILE"),
  Options.withDescription("With --watch: a trace being recorded; its last decisions (FILE.decisions.jsonl) are shown (default: $OCPOOL_TRACE; a %p in it stands for the process whose decisions changed last)"),
  Options.optional
)

const WATCH_TEXT =
  "On a terminal: a full-screen view redrawn when the shared state changes (at most 10 times a second); keys q (or Ctrl-C) quit, j/k or arrows scroll, ? help; NO_COLOR honoured. Not on a terminal, or with --json: one JSON status object per line each time it changes. Ends with 0 on q, 128+n on a signal."

export const statusCommand = Command.make(
  "status",
  {
    pool,
    json: Options.boolean("json").pipe(Options.withDescription("One JSON object on stdout (origin, bases, next, slots, processes, claims, reaped, warnings); with --watch, one per change")),
    stateDir: stateDirOption,
    watch: Options.boolean("watch").pipe(Options.withDescription("Keep watching: the live view (see `ocpool top`)")),
    trace
  },
  (args) =>
    Effect.gen(function* () {
      const flags = { pool: Option.getOrUndefined(args.pool), json: args.json, stateDir: Option.getOrUndefined(args.stateDir) }
      if (args.watch) return yield* watchRun({ ...flags, trace: Option.getOrUndefined(args.trace) })
      if (Option.isSome(args.trace)) return yield* new UsageProblem({ message: "--trace goes with --watch (the live view shows the trace's last decisions)", option: "--trace" })
      return yield* statusRun(flags)
    })
).pipe(Command.withDescription("Show every process's claims, per-slot load and cap, cooling models and the next pick. Exit 0; 1 if the state directory is unreadable. --watch: the live view. " + WATCH_TEXT))

export const topCommand = Command.make(
  "top",
  {
    pool,
    json: Options.boolean("json").pipe(Options.withDescription("One JSON status object per line, each time it changes (also the case off a terminal)")),
    stateDir: stateDirOption,
    trace
  },
  (args) => watchRun({ pool: Option.getOrUndefined(args.pool), json: args.json, stateDir: Option.getOrUndefined(args.stateDir), trace: Option.getOrUndefined(args.trace) })
).pipe(Command.withDescription("The live view of the pool (the same as `ocpool status --watch`): per-slot load bars, cooling models with countdowns, quota, heavy-work permits, fleet hosts, fallbacks, the last decisions of a recorded trace. " + WATCH_TEXT))
