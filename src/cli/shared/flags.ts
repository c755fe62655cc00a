/**
 * The flags and flag handling the database commands share (`ocpool cost`, `ocpool sweep …`): an
 * optional text flag, `--db`, `--json`, and a value parsed in the core as one line and exit 2.
 */
import { Options } from "@effect/cli"
import { Effect } from "effect"
import type { Parsed } from "../../core/retention/flags.js"
import { BadInput } from "../errors.js"
import { text } from "./textFlag.js"

export { text } from "./textFlag.js"

export const dbFlag = text("db", "PATH", "opencode's database (default: $OPENCODE_DB, else $XDG_DATA_HOME/opencode/opencode.db)")

export const jsonFlag = Options.boolean("json").pipe(Options.withDescription("One JSON object on stdout (SPEC §12.3)"))

/** A value parsed in the core, or BadInput with its one-line problem (exit 2). */
export const orBadInput = <A>(parsed: Parsed<A>): Effect.Effect<A, BadInput> =>
  parsed._tag === "Value" ? Effect.succeed(parsed.value) : Effect.fail(new BadInput({ message: parsed.message }))
