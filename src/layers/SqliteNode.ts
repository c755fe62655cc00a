/**
 * The SqlClient of the Node CLI: better-sqlite3 through @effect/sql-sqlite-node. The journal mode is
 * left as opencode set it (`disableWAL`), and the file must already exist: better-sqlite3 would create
 * an empty database, so the caller checks first. A file better-sqlite3 cannot open becomes a typed
 * failure, not a defect.
 */
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Cause, Layer } from "effect"
import { NotOpencodeDb } from "../services/RetentionStore.js"

export const SqliteNode = (filename: string) =>
  SqliteClient.layer({ filename, disableWAL: true }).pipe(
    Layer.catchAllCause((cause) => {
      const e = Cause.squash(cause) as { readonly message?: unknown }
      return Layer.fail(new NotOpencodeDb({ reason: `cannot open it (${typeof e?.message === "string" ? e.message : String(e)})` }))
    })
  )
