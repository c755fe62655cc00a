/** `ocpool status [--pool FILE] [--json] [--state-dir DIR]` (SPEC §9, §12.2): the pool as every process sees it. */
import { Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import { renderStatus, statusView } from "../core/status.js"
import { POOL_FILE_MAX_BYTES } from "../core/limits.js"
import { printableJson } from "../core/printable.js"
import { readTextFile } from "../layers/safeRead.js"
import { FileUnreadable } from "./errors.js"
import { cliPool, readState } from "./stateView.js"

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
  (args) =>
    Effect.gen(function* () {
      const poolFile = Option.getOrUndefined(args.pool)
      if (poolFile !== undefined) {
        // checked through safeRead first: a named pool file that cannot be read is exit 2, not a fall-through
        const read = readTextFile(poolFile, POOL_FILE_MAX_BYTES)
        if (read._tag !== "Text") return yield* new FileUnreadable({ path: poolFile, reason: read._tag === "Missing" ? "no such file or directory" : read.reason })
      }
      const state = yield* readState(Option.getOrUndefined(args.stateDir))
      const pool = cliPool(poolFile)
      const view = statusView({ origin: pool.origin, slots: pool.slots, processes: state.processes, cooldowns: state.cooldowns, now: state.now, warnings: [...pool.warnings, ...state.warnings] })
      yield* Console.log(args.json ? printableJson(JSON.stringify(view)) : renderStatus(view, { now: state.now, processes: state.processes }))
    })
).pipe(Command.withDescription("Show every process's claims, per-slot load and cap, cooling models and the next pick. Exit 0; 1 if the state directory is unreadable."))
