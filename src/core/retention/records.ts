/**
 * The lines the sweeps append: the archive of retired sessions and one run line per run (SPEC §5.6,
 * §11). Keys, their order and their types are those of the spec's table: other tools read these files.
 */
import { Either, Schema } from "effect"
import { isoTime as iso } from "../time.js"

export interface ArchivedSession {
  readonly id: string
  readonly title: string
  readonly directory: string
  readonly projectId: string
  readonly parentId: string | null
  readonly timeCreated: number
  readonly timeUpdated: number
}


/** One `archive/retired-sessions.jsonl` line, times in epoch ms: written and fsynced before the session's rows are deleted. */
export const archiveLine = (s: ArchivedSession, retiredAt: number): string =>
  JSON.stringify({
    id: s.id,
    title: s.title,
    directory: s.directory,
    projectID: s.projectId,
    parentID: s.parentId,
    created: s.timeCreated,
    updated: s.timeUpdated,
    retiredAt
  })

/** A time of an archive line: epoch ms, or the ISO string earlier versions wrote. */
const ArchiveTime = Schema.Union(
  Schema.Number.pipe(Schema.finite(), Schema.between(-8.64e15, 8.64e15)),
  Schema.transform(Schema.Date, Schema.Number, { strict: true, decode: (d) => d.getTime(), encode: (ms) => new Date(ms) })
)

const ArchiveRecord = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  directory: Schema.String,
  projectID: Schema.String,
  parentID: Schema.NullOr(Schema.String),
  created: ArchiveTime,
  updated: ArchiveTime,
  retiredAt: ArchiveTime
})
const decodeArchiveRecord = Schema.decodeUnknownEither(Schema.parseJson(ArchiveRecord))

export interface ArchivedLine extends ArchivedSession {
  readonly retiredAt: number
}

/** One archive line read back, whichever way its times were written; undefined for a line that is not one. */
export const readArchiveLine = (line: string): ArchivedLine | undefined => {
  const decoded = decodeArchiveRecord(line)
  if (Either.isLeft(decoded)) return undefined
  const r = decoded.right
  return { id: r.id, title: r.title, directory: r.directory, projectId: r.projectID, parentId: r.parentID, timeCreated: r.created, timeUpdated: r.updated, retiredAt: r.retiredAt }
}

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

/** One `runs/event-prune.jsonl` line, with exactly the keys of SPEC §5.6 (US-33.12), in its order. */
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
  readonly cutoffCreated: number
  readonly cutoffUpdated: number
  readonly roots: number
  readonly sessions: number
  readonly protectedTrees: number
  readonly remainingRoots: number
  readonly rows: Readonly<Record<string, number>>
  readonly noEvents: boolean
  readonly dryRun: boolean
  readonly vacuumed: boolean
  readonly elapsedMs: number
}

/** One `runs/session-retire.jsonl` line, with exactly the keys of SPEC §5.6, in its order. */
export const sessionRunLine = (r: SessionRun): string =>
  JSON.stringify({
    ts: iso(r.at),
    days: r.days,
    graceHours: r.graceHours,
    directory: r.directory,
    limit: r.limit,
    cutoffCreated: iso(r.cutoffCreated),
    cutoffUpdated: iso(r.cutoffUpdated),
    roots: r.roots,
    sessions: r.sessions,
    protected: r.protectedTrees,
    remainingRoots: r.remainingRoots,
    rows: r.rows,
    noEvents: r.noEvents,
    dryRun: r.dryRun,
    vacuumed: r.vacuumed,
    elapsedMs: r.elapsedMs
  })

/** Adds per-table counts; tables that lost no row are left out. */
export const addRows = (a: Readonly<Record<string, number>>, b: Readonly<Record<string, number>>): Record<string, number> => {
  const out: Record<string, number> = { ...a }
  for (const [table, n] of Object.entries(b)) if (n > 0) out[table] = (out[table] ?? 0) + n
  return out
}
