/** The CLI's typed failures and their exit codes (SPEC §12.1). */
import { Data, Schema } from "effect"
import { echo, printable } from "../core/printable.js"

/** An `--expect` mismatch shows at most this many characters of each line. */
const DECISION_ECHO_MAX = 400

/** Exit 2: a file named on the command line cannot be read. */
export class FileUnreadable extends Data.TaggedError("FileUnreadable")<{ readonly path: string; readonly reason: string }> {}

/** Exit 1: the trace is invalid at a line. */
export class TraceInvalid extends Data.TaggedError("TraceInvalid")<{ readonly path: string; readonly line: number; readonly reason: string }> {}

/** Exit 1: `--expect` found a difference. */
export class ExpectMismatch extends Data.TaggedError("ExpectMismatch")<{ readonly line: number; readonly expected: string; readonly got: string }> {}

/** Exit 1: a pool file that was read but keeps no slot. */
export class PoolUnusable extends Data.TaggedError("PoolUnusable")<{ readonly path: string; readonly reason: string }> {}

/** Exit 1: the state directory exists but cannot be read. */
export class StateUnreadable extends Data.TaggedError("StateUnreadable")<{ readonly dir: string; readonly reason: string }> {}

/** Exit 1: `doctor` found a failing check (already printed). */
export class ChecksFailed extends Data.TaggedError("ChecksFailed")<{ readonly failed: ReadonlyArray<string> }> {}

/** Exit 1: `init` would overwrite an existing pool file without `--force`. */
export class InitRefused extends Data.TaggedError("InitRefused")<{ readonly path: string }> {}

/** Exit 1: a directory or file the command must create or write cannot be (no home directory, ENOTDIR, EACCES, …). */
export class PathUnusable extends Data.TaggedError("PathUnusable")<{ readonly path: string; readonly reason: string }> {}

/**
 * Exit 2: a usage problem @effect/cli cannot see (a flag-like word taken as a positional argument, two
 * flags that do not go together, a flag missing). `message` is the line shown; `option` the flag or
 * word at fault when there is one (docs/DECISIONS.md 251).
 */
export class UsageProblem extends Schema.TaggedError<UsageProblem>()("UsageProblem", {
  message: Schema.String,
  /** The flag or word at fault, as typed (`--trace`, `--host`, an unknown word). */
  option: Schema.optional(Schema.String)
}) {}

export type CliFailure = FileUnreadable | TraceInvalid | ExpectMismatch | PoolUnusable | StateUnreadable | ChecksFailed | InitRefused | PathUnusable

export const describeFailure = (e: CliFailure): { readonly message: string; readonly exitCode: number } => {
  switch (e._tag) {
    case "FileUnreadable":
      return { message: `cannot read ${printable(e.path)}: ${printable(e.reason)}`, exitCode: 2 }
    case "TraceInvalid":
      return { message: `${printable(e.path)}: line ${e.line}: ${printable(e.reason)}`, exitCode: 1 }
    case "ExpectMismatch":
      // a decision is ~150 characters: whole lines are shown, a runaway line from the file is cut
      return { message: `line ${e.line}: expected ${echo(e.expected, DECISION_ECHO_MAX)} | got ${echo(e.got, DECISION_ECHO_MAX)}`, exitCode: 1 }
    case "PoolUnusable":
      return { message: `pool file ${printable(e.path)} is unusable: ${printable(e.reason)}`, exitCode: 1 }
    case "StateUnreadable":
      return { message: `state dir ${printable(e.dir)} unreadable: ${printable(e.reason)}`, exitCode: 1 }
    case "InitRefused":
      return { message: `${printable(e.path)} exists; use --force to overwrite it`, exitCode: 1 }
    case "PathUnusable":
      return { message: `${printable(e.path)}: ${printable(e.reason)}`, exitCode: 1 }
    case "ChecksFailed":
      return { message: `doctor: failing checks: ${e.failed.join(", ")}`, exitCode: 1 }
  }
}

/**
 * Exit 2: a flag value out of range, or a `--db` that is missing or not an opencode database (SPEC
 * §12.1). `message` is the line shown (each command renders the value its own way: escaped, cut, a URL
 * masked); `option` and `value` say which flag and what was given, where the command knows them
 * (docs/DECISIONS.md 251).
 */
export class BadInput extends Schema.TaggedError<BadInput>()("BadInput", {
  message: Schema.String,
  /** The flag or argument at fault, as the command line names it (`--for`, `--config`, `--url`; `OPENCODE_DB` for a database named there). */
  option: Schema.optional(Schema.String),
  /** The value given, as given (a URL masked: it may carry a password). */
  value: Schema.optional(Schema.String)
}) {}

/** Exit 1: a sweep stopped on a database failure, or its id guard tripped; exit 75: it stopped busy or the vacuum was refused. */
export class SweepIncomplete extends Data.TaggedError("SweepIncomplete")<{ readonly message: string; readonly exitCode: 1 | 75 }> {}

/** Exit 1: a model named on the command line (`cost --baseline-model`) has no price, so a cost the user asked for is unknown. */
export class CostUnknown extends Schema.TaggedError<CostUnknown>()("CostUnknown", {
  /** The model without a price, as given. */
  model: Schema.String,
  /** The price sources read (none when none was readable). */
  sources: Schema.Array(Schema.Struct({ name: Schema.String, path: Schema.String }))
}) {
  override get message(): string {
    const read = this.sources.length === 0 ? "none readable" : this.sources.map((s) => `${s.name} ${printable(s.path)}`).join(", ")
    return `cost unknown: no price for the baseline model ${echo(this.model)} in any price source (${read})`
  }
}
