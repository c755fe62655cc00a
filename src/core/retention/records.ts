/** The lines the sweeps append: the archive of retired sessions and one run line per run (SPEC §2.1, §11). */

export interface ArchivedSession {
  readonly id: string
  readonly title: string
  readonly directory: string
  readonly projectId: string
  readonly parentId: string | null
  readonly timeCreated: number
  readonly timeUpdated: number
}

const iso = (ms: number): string => new Date(ms).toISOString()

/** One `archive/retired-sessions.jsonl` line: written and fsynced before the session's rows are deleted. */
export const archiveLine = (s: ArchivedSession, retiredAt: number): string =>
  JSON.stringify({
    id: s.id,
    title: s.title,
    directory: s.directory,
    projectID: s.projectId,
    parentID: s.parentId,
    created: iso(s.timeCreated),
    updated: iso(s.timeUpdated),
    retiredAt: iso(retiredAt)
  })

export interface EventRun {
  readonly at: number
  readonly days: number
  readonly graceHours: number
  readonly cutoff: number
  readonly rows: number
  readonly bytes: number
  readonly aggregates: number
  readonly dryRun: boolean
  readonly elapsedMs: number
}

/** One `runs/event-prune.jsonl` line, with exactly the keys of US-33.12. */
export const eventRunLine = (r: EventRun): string =>
  JSON.stringify({
    ts: iso(r.at),
    days: r.days,
    graceHours: r.graceHours,
    cutoff: iso(r.cutoff),
    rows: r.rows,
    bytes: r.bytes,
    aggregates: r.aggregates,
    dryRun: r.dryRun,
    elapsedMs: r.elapsedMs
  })

export interface SessionRun {
  readonly at: number
  readonly days: number
  readonly graceHours: number
  readonly directory: string | null
  readonly limit: number | null
  readonly roots: number
  readonly sessions: number
  readonly protectedTrees: number
  readonly remainingRoots: number
  readonly rows: Readonly<Record<string, number>>
  readonly archived: number
  readonly dryRun: boolean
  readonly stoppedBy: "busy" | "error" | null
  readonly elapsedMs: number
}

/** One `runs/session-retire.jsonl` line. */
export const sessionRunLine = (r: SessionRun): string =>
  JSON.stringify({
    ts: iso(r.at),
    days: r.days,
    graceHours: r.graceHours,
    directory: r.directory,
    limit: r.limit,
    roots: r.roots,
    sessions: r.sessions,
    protected: r.protectedTrees,
    remainingRoots: r.remainingRoots,
    rows: r.rows,
    archived: r.archived,
    dryRun: r.dryRun,
    stoppedBy: r.stoppedBy,
    elapsedMs: r.elapsedMs
  })

/** Adds per-table counts; tables that lost no row are left out. */
export const addRows = (a: Readonly<Record<string, number>>, b: Readonly<Record<string, number>>): Record<string, number> => {
  const out: Record<string, number> = { ...a }
  for (const [table, n] of Object.entries(b)) if (n > 0) out[table] = (out[table] ?? 0) + n
  return out
}
