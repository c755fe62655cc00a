/** Human summaries of the sweeps (the `--json` forms are the reports themselves, SPEC §12.3). */
import type { EventSweepReport } from "./events.js"
import type { SessionSweepReport } from "./sessions.js"
import type { VacuumReport } from "./vacuum.js"

const n = (x: number): string => x.toLocaleString("en-US")

export const bytesText = (b: number): string => {
  if (b < 1024) return `${b} B`
  const units = ["KiB", "MiB", "GiB", "TiB"]
  let v = b / 1024
  let i = 0
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024
    i++
  }
  return `${v.toFixed(1)} ${units[i]}`
}

const vacuumLine = (v: VacuumReport): ReadonlyArray<string> => {
  if (!v.requested) return []
  if (v.ran) return [`vacuum: ${bytesText(v.bytesBefore ?? 0)} → ${bytesText(v.bytesAfter ?? 0)}`]
  if (v.refused) return [`vacuum: refused: ${v.reason ?? ""}`]
  return [`vacuum: not run (${v.reason ?? "dry run"})`]
}

export const renderEvents = (r: EventSweepReport): string => {
  const verb = r.dryRun ? "would delete" : "deleted"
  return [
    `sweep events${r.dryRun ? " (dry run: nothing changed)" : ""}: ${verb} ${n(r.rows)} events (${bytesText(r.bytes)} of data) of ${n(r.aggregates)} sessions` +
      (r.dryRun ? "" : ` in ${n(r.chunks)} transactions`),
    `window: ids older than ${r.cutoff} (${+r.days.toFixed(2)} days), sessions quiet for ${r.graceHours} h`,
    `candidates: ${n(r.candidates)}, remaining: ${n(r.remaining)}`,
    ...vacuumLine(r.vacuum),
    ...r.warnings.map((w) => `warning: ${w}`)
  ].join("\n")
}

export const renderSessions = (r: SessionSweepReport): string => {
  const verb = r.dryRun ? "would retire" : "retired"
  const tables = Object.entries(r.rows)
    .filter(([, count]) => count > 0)
    .map(([table, count]) => `${table} ${n(count)}`)
  return [
    `sweep sessions${r.dryRun ? " (dry run: nothing changed)" : ""}: ${verb} ${n(r.roots)} root sessions (${n(r.sessions)} sessions in all)`,
    `window: created before ${r.cutoffCreated}, every session of the tree quiet since ${r.cutoffUpdated}` + (r.directory === null ? "" : `, directory ${r.directory}`),
    `rows: ${tables.length === 0 ? "none" : tables.join(", ")}`,
    `protected trees (workspace or sync): ${n(r.protected)}, remaining roots: ${n(r.remainingRoots)}` + (r.dryRun ? "" : `, archived: ${n(r.archived)}`),
    ...vacuumLine(r.vacuum),
    ...r.warnings.map((w) => `warning: ${w}`)
  ].join("\n")
}
