/**
 * `ocpool context status` (epic G): the view of one project's context map (its files, its size
 * against the budget, what changed since it was last written, the pending paths, the run in flight,
 * the last run, a queued refresh) as one JSON-ready object, and as text. Also the reading of git's
 * output into the changed paths. Pure: `now` is passed in.
 */
import type { ContextRecord, InFlightRun, LastRun } from "./record.js"
import { lastWritten, managerFile, mapBytes, mapFiles, type MapFacts } from "./mapFacts.js"
import { MANAGER_FILE, MAP_DIR, MAP_FILES, PROMPT_PATHS_MAX, queuedPath } from "./map.js"
import { plural } from "../status.js"
import { ageText } from "../time.js"

// ---------------------------------------------------------------------------------------------------
// what changed since the map was last written

/**
 * The project paths (relative to `root`, as the refresh queue keeps them: core/context/map.ts
 * `queuedPath`) named by git's output: `git log -z --name-only --pretty=format:` and
 * `git status --porcelain -z --untracked-files=all`, both with paths relative to `toplevel`, the
 * repository's top directory. Paths outside `root`, inside the map or under a skipped segment are left
 * out; a rename counts its new name only.
 */
export const gitChangedPaths = (root: string, toplevel: string, logOutput: string, statusOutput: string): ReadonlySet<string> => {
  const top = toplevel.replace(/\/+$/, "")
  const out = new Set<string>()
  const add = (rel: string) => {
    if (rel.length === 0) return
    const p = queuedPath(root, `${top}/${rel}`)
    if (p !== undefined) out.add(p)
  }
  // log: the paths of each commit NUL-terminated, commits separated by an extra NUL and a newline from the empty format
  for (const token of logOutput.split("\0")) add(token.replace(/^\n+/, ""))
  // status: `XY path`, a rename or copy followed by its original path as a field of its own
  const fields = statusOutput.split("\0")
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!
    if (field.length < 4) continue
    add(field.slice(3))
    if (field[0] === "R" || field[0] === "C") i++
  }
  return out
}

/** How many files changed since the map was last written, and where the count comes from. */
export type ChangedCount =
  /** Distinct files from git: committed since `since`, or modified or untracked now. */
  | { readonly source: "git"; readonly count: number; readonly since: number }
  /** The record's pending paths (no git repository, git unusable, or no map written yet). */
  | { readonly source: "pending"; readonly count: number; readonly since: number | null }

// ---------------------------------------------------------------------------------------------------
// the view

export interface StatusInput {
  readonly root: string
  readonly facts: MapFacts
  readonly record: ContextRecord | undefined
  /** When a refresh was queued from the CLI and not taken yet. */
  readonly queuedAt: number | undefined
  readonly changed: ChangedCount
  readonly maxBytes: number
}

export interface FileEntry {
  readonly name: string
  readonly present: boolean
  readonly bytes: number | null
  readonly mtimeMs: number | null
  /** `manager.md`: the user's, not counted in the total. */
  readonly manager: boolean
}

/** `ocpool context status --json`: every field documented in docs/CONTEXT-MAP.md. */
export interface ContextStatusView {
  readonly root: string
  readonly mapDir: string
  readonly exists: boolean
  /** The five map files in order, then `manager.md`; a missing one has `present: false` and null figures. */
  readonly files: ReadonlyArray<FileEntry>
  readonly totalBytes: number
  readonly maxBytes: number
  readonly overBudget: boolean
  readonly lastWrittenAt: number | null
  readonly changed: ChangedCount
  readonly pending: { readonly count: number; readonly dropped: number; readonly paths: ReadonlyArray<string> }
  readonly lastStartedAt: number | null
  readonly inFlight: InFlightRun | null
  readonly lastRun: LastRun | null
  readonly queuedAt: number | null
  /** Whether the state directory holds a record for this project. */
  readonly record: boolean
}

const trimSlashes = (p: string): string => p.replace(/\/+$/, "") || "/"

export const contextStatusView = ({ changed, facts, maxBytes, queuedAt, record, root }: StatusInput): ContextStatusView => {
  const present = new Map(mapFiles(facts).map((f) => [f.name, f]))
  const manager = managerFile(facts)
  const entry = (name: string, f: { bytes: number; mtimeMs: number } | undefined, isManager: boolean): FileEntry => ({
    name,
    present: f !== undefined,
    bytes: f?.bytes ?? null,
    mtimeMs: f === undefined ? null : Math.floor(f.mtimeMs),
    manager: isManager
  })
  const total = mapBytes(facts)
  const written = lastWritten(facts)
  return {
    root,
    mapDir: `${trimSlashes(root) === "/" ? "" : trimSlashes(root)}/${MAP_DIR}`,
    exists: facts.exists,
    files: [...MAP_FILES.map((name) => entry(name, present.get(name), false)), entry(MANAGER_FILE, manager, true)],
    totalBytes: total,
    maxBytes,
    overBudget: total > maxBytes,
    lastWrittenAt: written === undefined ? null : Math.floor(written),
    changed,
    pending: { count: record?.pending.length ?? 0, dropped: record?.dropped ?? 0, paths: record?.pending ?? [] },
    lastStartedAt: record?.lastStartedAt ?? null,
    inFlight: record?.inFlight ?? null,
    lastRun: record?.lastRun ?? null,
    queuedAt: queuedAt ?? null,
    record: record !== undefined
  }
}

// ---------------------------------------------------------------------------------------------------
// text

/** `812 B`, `3.1 KiB`, `24 KiB`, `1.5 MiB`. */
export const sizeText = (bytes: number): string => {
  if (bytes < 1024) return `${bytes} B`
  const unit = bytes < 1 << 20 ? { n: 1024, s: "KiB" } : { n: 1 << 20, s: "MiB" }
  const v = bytes / unit.n
  const shown = Number.isInteger(v) || v >= 100 ? `${Math.round(v)}` : v.toFixed(1).replace(/\.0$/, "")
  return `${shown} ${unit.s}`
}


const runLabel = (kind: string, run: string): string => `${kind} run ${run}`

const inFlightLine = (r: InFlightRun, now: number): string => {
  const who = r.host === "" && r.pid === 0 ? "" : ` on ${r.host === "" ? "?" : r.host}${r.pid === 0 ? "" : ` pid ${r.pid}`}`
  const session = r.session === null ? "" : `, session ${r.session}`
  return `in flight: ${runLabel(r.kind, r.run)}, started ${ageText(now - r.startedAt)} ago${who}${session}, ${plural(r.paths.length, "path")}`
}

const lastRunLine = (r: LastRun, now: number): string => {
  const outcome = r.outcome === "unchanged" ? "ended without changing the map" : r.outcome
  const reason = r.reason === undefined || r.reason === "" ? "" : ` (${r.reason})`
  return `last run: ${runLabel(r.kind, r.run)} ${outcome}${reason}, ended ${ageText(now - r.endedAt)} ago after ${ageText(r.endedAt - r.startedAt)}, ${plural(r.paths, "path")}`
}

const changedLine = (c: ChangedCount, lastWrittenAt: number | null): string => {
  if (lastWrittenAt === null) return `changed since the map was last written: no map yet; ${plural(c.count, "pending path")}`
  return c.source === "git"
    ? `changed since the map was last written: ${plural(c.count, "file")} (git: committed since, modified or untracked)`
    : `changed since the map was last written: ${plural(c.count, "pending path")} (the edits opencode saw: not a git repository, or git did not answer)`
}

/** The width the file names are padded to. */
const NAME_WIDTH = Math.max(...MAP_FILES.map((n) => n.length), MANAGER_FILE.length)

/**
 * The status as lines of text. Not yet made printable (paths, hosts and reasons come from files):
 * callers escape each line.
 */
export const contextStatusLines = (v: ContextStatusView, now: number): ReadonlyArray<string> => {
  const lines: Array<string> = [`context map of ${v.root}`]
  if (!v.exists) lines.push(`  ${v.mapDir}: missing (the first refresh writes it: /context-init, or an edit and an idle)`)
  else {
    lines.push(`  ${v.mapDir}`)
    for (const f of v.files) {
      const name = f.name.padEnd(NAME_WIDTH)
      if (!f.present) {
        if (!f.manager) lines.push(`  ${name}  missing`)
        continue
      }
      const mine = f.manager ? "  (yours: read by every agent, not counted)" : ""
      lines.push(`  ${name}  ${sizeText(f.bytes ?? 0).padStart(9)}  written ${ageText(now - (f.mtimeMs ?? now))} ago${mine}`)
    }
  }
  lines.push(`  total ${sizeText(v.totalBytes)} of the ${sizeText(v.maxBytes)} budget`)
  if (v.overBudget) lines.push(`warning: map is ${sizeText(v.totalBytes)}, over the ${sizeText(v.maxBytes)} budget: the next refresh asks to condense it`)
  lines.push(changedLine(v.changed, v.lastWrittenAt))
  const { count, dropped, paths } = v.pending
  lines.push(`pending: ${plural(count, "path")}${dropped > 0 ? ` (and ${dropped} more not kept)` : ""}`)
  for (const p of paths.slice(0, PROMPT_PATHS_MAX)) lines.push(`  ${p}`)
  if (paths.length > PROMPT_PATHS_MAX) lines.push(`  …and ${paths.length - PROMPT_PATHS_MAX} more`)
  lines.push(v.inFlight === null ? "in flight: none" : inFlightLine(v.inFlight, now))
  lines.push(v.lastRun === null ? "last run: none yet" : lastRunLine(v.lastRun, now))
  lines.push(v.queuedAt === null ? "refresh queued: no" : `refresh queued: yes, ${ageText(now - v.queuedAt)} ago (starts at the next idle of a root session)`)
  return lines
}
