/**
 * How opencode's database fails, for every reader of it (the retention sweeps and `ocpool cost`): the
 * CLI maps each to its exit code (75 busy, 1 failed, 2 not an opencode database).
 */
import { Data } from "effect"

/** The database is busy (SQLITE_BUSY / SQLITE_LOCKED after the busy timeout); a transaction was rolled back, a read read nothing. */
export class DbBusy extends Data.TaggedError("DbBusy")<{ readonly reason: string }> {}

/** Any other database failure. */
export class DbFailed extends Data.TaggedError("DbFailed")<{ readonly reason: string }> {}

/** The file is not an opencode database: a required table or column is missing, or it is not SQLite at all. */
export class NotOpencodeDb extends Data.TaggedError("NotOpencodeDb")<{ readonly reason: string }> {}
