/** The facts about the database file that `--vacuum` needs (SPEC §11.5). */
import { Context, type Effect } from "effect"

export interface DbHostService {
  /** Bytes of the database file plus its `-wal`, or 0 for a file that is gone. */
  readonly bytes: (db: string) => Effect.Effect<number>
  /** Free bytes on the database's filesystem; undefined when unreadable. */
  readonly freeBytes: (db: string) => Effect.Effect<number | undefined>
  /** Pids of other processes holding the database or its `-wal` open; undefined when that cannot be checked. */
  readonly openBy: (db: string) => Effect.Effect<ReadonlyArray<number> | undefined>
}

export class DbHost extends Context.Tag("opencode-pool/DbHost")<DbHost, DbHostService>() {}
