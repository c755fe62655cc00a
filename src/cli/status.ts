/** `ocpool status [--pool FILE] [--json] [--state-dir DIR]` (SPEC §9, §12.2): the pool as every process sees it. */
import { Command, Options } from "@effect/cli"
import { Option } from "effect"
import { statusRun } from "./statusRun.js"

export const stateDirOption = Options.text("state-dir").pipe(
  Options.withPseudoName("DIR"),
  Options.withDescription("The state directory (default: $OCPOOL_STATE_DIR, else $XDG_STATE_HOME/opencode-pool)"),
  Options.optional
)

export const statusCommand = Command.make(
  "status",
  {
    pool: Options.text("pool").pipe(Options.withPseudoName("FILE"), Options.withDescription("Pool file to show (default: the user config directory, then the bundled preset)"), Options.optional),
    json: Options.boolean("json").pipe(Options.withDescription("One JSON object on stdout (origin, bases, next, slots, processes, claims, reaped, warnings)")),
    stateDir: stateDirOption
  },
  (args) => statusRun({ pool: Option.getOrUndefined(args.pool), json: args.json, stateDir: Option.getOrUndefined(args.stateDir) })

).pipe(Command.withDescription("Show every process's claims, per-slot load and cap, cooling models and the next pick. Exit 0; 1 if the state directory is unreadable."))
