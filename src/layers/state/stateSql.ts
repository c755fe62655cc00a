/**
 * The SQL of the shared state (issue 32), written once for both databases it runs on: SQLite (the
 * embedded default, `state.db` in the state directory) and PostgreSQL (fleet mode). Every statement is
 * a function of the `Dialect`, and the dialects' differences are named here and nowhere else:
 *
 * - parameters: `$1, $2, …` (PostgreSQL) or `?` (SQLite), each value used once, in order;
 * - the permits' arrival order `pos`: a sequence's `nextval` (PostgreSQL) or the table's
 *   `AUTOINCREMENT` key (SQLite), both assigned inside the writing transaction;
 * - integer columns: `bigint` (PostgreSQL returns them as text: readers convert with `Number`) or
 *   `integer` (SQLite: 64-bit);
 * - the lock around a transaction: advisory locks (pgRecords.ts) or `BEGIN IMMEDIATE` (SQLite);
 * - what a statement costs (`local`): a call (SQLite reads a peer's claims only when they changed) or a
 *   round trip (PostgreSQL reads them all at once).
 *
 * Records are stored as the text the tolerant decoders of src/core read back (claims, cooldowns,
 * quota, fallbacks, permits, context records), with the columns queries select and order on.
 */
import type { SqlValue } from "./sqliteDriver.js"

export interface Dialect {
  readonly name: "sqlite" | "postgres"
  /** The placeholder of the `i`-th parameter (from 1). */
  readonly param: (i: number) => string
  /** The column type of epoch milliseconds and counters. */
  readonly bigint: string
  /** The permits table's arrival-order column. */
  readonly permitPos: string
  /**
   * A statement costs a call, not a network round trip (SQLite): a read may take two steps (the rows'
   * versions first, then only the bodies that changed) where PostgreSQL takes everything in one.
   */
  readonly local: boolean
}

export const SQLITE: Dialect = { name: "sqlite", param: () => "?", bigint: "integer", permitPos: "pos integer PRIMARY KEY AUTOINCREMENT", local: true }
export const POSTGRES: Dialect = { name: "postgres", param: (i) => `$${i}`, bigint: "bigint", permitPos: "pos bigint NOT NULL DEFAULT nextval('permit_order')", local: false }

/** A statement and its parameters. */
export interface Query {
  readonly text: string
  readonly params: ReadonlyArray<SqlValue>
}

/** A list of values spliced into `IN (…)`. */
class List {
  constructor(readonly values: ReadonlyArray<SqlValue>) {}
}
export const list = (values: ReadonlyArray<SqlValue>): List => new List(values)

/** The tagged template of a dialect: interpolated values become parameters (a `list` one per value). */
export const sqlOf =
  (d: Dialect) =>
  (strings: TemplateStringsArray, ...values: ReadonlyArray<SqlValue | List>): Query => {
    const params: Array<SqlValue> = []
    let text = strings[0] ?? ""
    values.forEach((v, i) => {
      if (v instanceof List) {
        text += v.values.map((x) => (params.push(x), d.param(params.length))).join(", ")
      } else {
        params.push(v)
        text += d.param(params.length)
      }
      text += strings[i + 1] ?? ""
    })
    return { text, params }
  }

/**
 * The text of a statement made once, when a part is built, for the statements every spawn or limit
 * runs (DECISIONS 268): each `${name}` is the next placeholder, the name only saying what goes there;
 * the caller passes the values apart, in the same order (`{ text, params: [...] }`). Building the
 * text on every call (`sqlOf`) cost a spawn a template walk per statement.
 */
export const textOf =
  (d: Dialect) =>
  (strings: TemplateStringsArray, ..._names: ReadonlyArray<string>): string =>
    strings.reduce((text, s, i) => (i === 0 ? s : `${text}${d.param(i)}${s}`), "")

/** The tables of schema version 1, in both dialects (PostgreSQL's sequence first). */
export const schemaV1 = (d: Dialect): ReadonlyArray<string> => [
  // a holder: one row per process, its lease renewed by every publish (and, in a fleet, the heartbeat)
  `CREATE TABLE IF NOT EXISTS holders (host text NOT NULL, pid integer NOT NULL, start_token text, lease_until ${d.bigint} NOT NULL, seen_at ${d.bigint} NOT NULL, fallbacks integer NOT NULL DEFAULT 0, PRIMARY KEY (host, pid))`,
  // a process's claims (one row per plugin instance), `gen` orders its publishes
  `CREATE TABLE IF NOT EXISTS claims (host text NOT NULL, pid integer NOT NULL, instance integer NOT NULL, gen ${d.bigint} NOT NULL, body text NOT NULL, written_at ${d.bigint} NOT NULL, PRIMARY KEY (host, pid, instance))`,
  `CREATE TABLE IF NOT EXISTS cooldowns (model text PRIMARY KEY, body text NOT NULL, expires_at ${d.bigint} NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS quota (model text PRIMARY KEY, body text NOT NULL, seen_at ${d.bigint} NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS fallbacks (session text PRIMARY KEY, body text NOT NULL, until ${d.bigint} NOT NULL)`,
  ...(d.name === "postgres" ? ["CREATE SEQUENCE IF NOT EXISTS permit_order"] : []),
  // permits: FIFO by the machine's seq (assigned inside the transaction), then the arrival order
  `CREATE TABLE IF NOT EXISTS permits (${d.name === "sqlite" ? `${d.permitPos}, id text NOT NULL UNIQUE` : `id text PRIMARY KEY, ${d.permitPos}`}, seq ${d.bigint} NOT NULL, host text NOT NULL, pid integer NOT NULL, body text NOT NULL, written_at ${d.bigint} NOT NULL)`,
  "CREATE INDEX IF NOT EXISTS permits_fifo ON permits (seq, pos)"
]

/** Schema version 2: the context map's per-project records (issue 23, onto the port in issue 32). */
export const schemaV2 = (_d: Dialect): ReadonlyArray<string> => ["CREATE TABLE IF NOT EXISTS context (key text PRIMARY KEY, body text NOT NULL)"]

/**
 * Schema version 3: the plugin engines on record (issue 33), one row per plugin instance, written once
 * when it starts and deleted when it is disposed; `since` is when it started, `seen_at` its last write.
 */
export const schemaV3 = (d: Dialect): ReadonlyArray<string> => [
  `CREATE TABLE IF NOT EXISTS engines (host text NOT NULL, pid integer NOT NULL, instance integer NOT NULL, start_token text, version text NOT NULL, backend text NOT NULL, since ${d.bigint} NOT NULL, seen_at ${d.bigint} NOT NULL, PRIMARY KEY (host, pid, instance))`
]

/** Schema version 4: the model groups' learned budgets (issue 35), one row per group, written by every counted request. */
export const schemaV4 = (d: Dialect): ReadonlyArray<string> => [`CREATE TABLE IF NOT EXISTS learned (grp text PRIMARY KEY, body text NOT NULL, seen_at ${d.bigint} NOT NULL)`]

/**
 * Schema version 5: every host's counters (issue 36), one row per host, name and label values (a JSON
 * array), only ever added to: a commit's increments in its own transaction.
 */
export const schemaV5 = (_d: Dialect): ReadonlyArray<string> => [
  "CREATE TABLE IF NOT EXISTS counters (host text NOT NULL, name text NOT NULL, labels text NOT NULL, value double precision NOT NULL, PRIMARY KEY (host, name, labels))"
]

/** Every migration in order: its id, name and statements. The schema version is the highest id. */
export const MIGRATION_STEPS: ReadonlyArray<{ readonly id: number; readonly name: string; readonly statements: (d: Dialect) => ReadonlyArray<string> }> = [
  { id: 1, name: "fleet", statements: schemaV1 },
  { id: 2, name: "context", statements: schemaV2 },
  { id: 3, name: "engines", statements: schemaV3 },
  { id: 4, name: "learned", statements: schemaV4 },
  { id: 5, name: "counters", statements: schemaV5 }
]

export const MIGRATIONS_TABLE = "ocpool_migrations"

export const migrationsTable = (d: Dialect): string =>
  `CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (migration_id integer PRIMARY KEY, created_at ${d.name === "postgres" ? "timestamp with time zone NOT NULL DEFAULT now()" : "text NOT NULL DEFAULT (datetime('now'))"}, name text NOT NULL)`
