/**
 * The commands as `ocpool --help` lists them (issue 33): grouped by feature, one line each, like git's.
 * The one home of each command's one-line summary; its flags and long description stay with the
 * command itself (its @effect/cli definition). Plain data: the start-up fast path imports it.
 */

export interface CatalogEntry {
  /** The words after `ocpool` (`["sweep", "events"]`). */
  readonly path: ReadonlyArray<string>
  /** What it does, in a few words. */
  readonly summary: string
}

export interface CatalogGroup {
  readonly title: string
  readonly entries: ReadonlyArray<CatalogEntry>
}

const e = (path: string, summary: string): CatalogEntry => ({ path: path.split(" "), summary })

export const CATALOG: ReadonlyArray<CatalogGroup> = [
  {
    title: "pool",
    entries: [
      e("status", "the pool as every process sees it: load, cooling, next pick"),
      e("doctor", "check the setup: pool file, plugin, state, notifier, models"),
      e("init", "write the pool file; add the plugin or the MCP server")
    ]
  },
  {
    title: "limits",
    entries: [e("quota", "each model's quota, stated or learned; forget learned budgets"), e("cool", "list, set or clear cooling models")]
  },
  {
    title: "notifications",
    entries: [
      e("notify", "send one desktop notification (here or over the ssh hop)"),
      e("tunnel setup", "set up the ssh hop to your desktop"),
      e("receive", "the hop's forced command on the desktop")
    ]
  },
  {
    title: "database",
    entries: [
      e("sweep sessions", "retire old sessions from opencode's database"),
      e("sweep events", "prune opencode's event log"),
      e("cost", "what the messages cost, pooled work against its root model")
    ]
  },
  {
    title: "heavy work",
    entries: [
      e("run", "run a heavy command when a permit is free"),
      e("permits", "the heavy-work budgets, holders and queue"),
      e("permits release", "free a stuck permit"),
      e("mcp", "the permits as a stdio MCP server for other harnesses")
    ]
  },
  {
    title: "fleet",
    entries: [e("fleet init", "set up fleet mode: create the PostgreSQL schema")]
  },
  {
    title: "context",
    entries: [e("context status", "the project's context map: files, size, changes, runs"), e("context refresh", "queue a map refresh for the next idle")]
  },
  {
    title: "views",
    entries: [
      e("top", "the live view (also: status --watch)"),
      e("replay", "replay a spawn trace, explain it, draw its timeline"),
      e("metrics", "serve counters and gauges for Prometheus")
    ]
  }
]

/** Every entry, in the order listed. */
export const CATALOG_ENTRIES: ReadonlyArray<CatalogEntry> = CATALOG.flatMap((g) => g.entries)

/** The summary of the command at `path`, if it is listed. */
export const summaryOf = (path: ReadonlyArray<string>): string | undefined =>
  CATALOG_ENTRIES.find((c) => c.path.join(" ") === path.join(" "))?.summary
