/**
 * The PostgreSQL client of fleet mode (issue 22): `@effect/sql-pg` over a `pg` pool built here, so that
 * nothing connects before the first query (`PgClient.layer` runs `SELECT 1` while the layer is built;
 * `layerFromPool` does not): plugin start never waits for the server. Every connection uses the
 * fleet's schema first on its `search_path`, gives up connecting after `connectMs`, and the pool's
 * idle-client errors (a server restart) are swallowed: the next query reconnects.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Stream } from "effect"
import * as Pg from "pg"

export interface PgOptions {
  readonly url: string
  readonly schema: string
  /** How long a connection attempt may take. */
  readonly connectMs: number
  /** Connections kept at most (a process needs one for its transaction and one for its heartbeat). */
  readonly max?: number
}

/** The pool: lazy, ended with the layer's scope (never waiting more than a second for it). */
const acquirePool = (o: PgOptions) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const pool = new Pg.Pool({
        connectionString: o.url,
        options: `-c search_path=${o.schema}`,
        connectionTimeoutMillis: Math.max(1, o.connectMs),
        idleTimeoutMillis: 30_000,
        max: o.max ?? 4,
        application_name: "ocpool"
      })
      // an idle client that loses its server emits "error" on the pool; unhandled, it would end the process
      pool.on("error", () => undefined)
      return pool
    }),
    (pool) => Effect.promise(() => pool.end().catch(() => undefined)).pipe(Effect.timeoutOption(1_000))
  )

/** `PgClient` and `SqlClient` over a lazily connecting pool. */
export const pgClientLayer = (o: PgOptions) => PgClient.layerFromPool({ acquire: acquirePool(o), applicationName: "ocpool" })

/**
 * NOTIFYs on `channel` (issue 24: the live view's change feed), on a connection of its own. The
 * library's `listen` keeps a connection that swallows its errors, so a server restart would silence it
 * for good; here a lost connection fails the stream, and the caller listens again after a pause.
 */
export const listenChanges = (o: Pick<PgOptions, "url" | "connectMs">, channel: string): Stream.Stream<void, Error> =>
  Stream.asyncScoped<void, Error>((emit) =>
    Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const client = new Pg.Client({ connectionString: o.url, connectionTimeoutMillis: Math.max(1, o.connectMs), application_name: "ocpool" })
          client.on("error", (e) => void emit.fail(e))
          client.on("end", () => void emit.fail(new Error("connection ended")))
          client.on("notification", (msg) => {
            if (msg.channel === channel) void emit.single(undefined)
          })
          try {
            await client.connect()
            await client.query(`LISTEN ${Pg.escapeIdentifier(channel)}`)
          } catch (e) {
            client.end().catch(() => undefined)
            throw e
          }
          return client
        },
        catch: (e) => (e instanceof Error ? e : new Error(String(e)))
      }),
      (client) =>
        Effect.promise(() => {
          client.removeAllListeners("end")
          client.on("error", () => undefined)
          return client.end().catch(() => undefined)
        }).pipe(Effect.timeoutOption(1_000))
    )
  )
