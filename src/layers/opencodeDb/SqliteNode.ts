/**
 * The SqlClient of the Node CLI: better-sqlite3 through @effect/sql-sqlite-node. The journal mode is
 * left as opencode set it (`disableWAL`), and the file must already exist: better-sqlite3 would create
 * an empty database, so the caller checks first. A file better-sqlite3 cannot open becomes a typed
 * failure, not a defect. Dry runs open it read-only: closing the last read-write connection would
 * checkpoint a WAL opencode left behind, changing the file's bytes though no row changed.
 */
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Cause, Layer } from "effect"
import { NotOpencodeDb } from "../../services/opencodeDb/errors.js"

export const SqliteNode = (filename: string, options: { readonly readonly?: boolean } = {}) =>
  SqliteClient.layer({ filename, disableWAL: true, readonly: options.readonly === true }).pipe(
    Layer.catchAllCause((cause) => {
      const e = Cause.squash(cause) as { readonly message?: unknown }
      return Layer.fail(new NotOpencodeDb({ problem: "cannot-open", detail: typeof e?.message === "string" ? e.message : String(e) }))
    })
  )
