/**
 * How opencode's database fails, for every reader of it (the retention sweeps and `ocpool cost`): the
 * CLI maps each to its exit code (75 busy, 1 failed, 2 not an opencode database).
 *
 * Each carries what failed as fields (SQLite's result code and words, the table and columns missing);
 * `reason` (and `message`) render the text every message built on them shows (docs/DECISIONS.md 250).
 */
import { Schema } from "effect"

/** SQLite's extended result code (`SQLITE_BUSY_SNAPSHOT`, …), when the driver gave one. */
const code = Schema.optional(Schema.String)

/** The database is busy (SQLITE_BUSY / SQLITE_LOCKED after the busy timeout); a transaction was rolled back, a read read nothing. */
export class DbBusy extends Schema.TaggedError<DbBusy>()("DbBusy", {
  code,
  /** SQLite's words (the driver's message). */
  detail: Schema.String
}) {
  get reason(): string {
    return this.detail
  }
  override get message(): string {
    return this.detail
  }
}

/** Any other database failure. */
export class DbFailed extends Schema.TaggedError<DbFailed>()("DbFailed", {
  code,
  /** SQLite's words (the driver's message). */
  detail: Schema.String
}) {
  get reason(): string {
    return this.detail
  }
  override get message(): string {
    return this.detail
  }
}

/**
 * The file is not an opencode database: it cannot be opened, SQLite refused a step of the check (not
 * SQLite at all), a required table is missing, or columns of one are.
 */
export class NotOpencodeDb extends Schema.TaggedError<NotOpencodeDb>()("NotOpencodeDb", {
  problem: Schema.Literal("cannot-open", "refused", "no-table", "no-columns"),
  code,
  /** The driver's words (cannot-open, refused). */
  detail: Schema.optional(Schema.String),
  /** The table checked (no-table, no-columns). */
  table: Schema.optional(Schema.String),
  /** Its columns that are missing (no-columns). */
  columns: Schema.optional(Schema.Array(Schema.String))
}) {
  get reason(): string {
    switch (this.problem) {
      case "cannot-open":
        return `cannot open it (${this.detail ?? ""})`
      case "refused":
        return this.detail ?? ""
      case "no-table":
        return `no table '${this.table ?? ""}'`
      case "no-columns":
        return `table '${this.table ?? ""}' has no column ${(this.columns ?? []).map((c) => `'${c}'`).join(", ")}`
    }
  }
  override get message(): string {
    return this.reason
  }
}
