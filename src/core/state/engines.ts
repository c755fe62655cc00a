/**
 * The plugin engines on record (issue 33): every engine registers itself in the shared state when it
 * starts (pid, version, since, backend) and goes when it is disposed, so that a view can say whether a
 * running opencode has the plugin loaded, idle or not. Whether an entry still runs is the holder
 * judgement of core/state/holder.ts, without the lease on this host (an idle engine writes nothing, and
 * runs as long as its process does): its pid alive under its start token. Another host's entry holds
 * while that host's holder lease does. The line `ocpool status` and `doctor` show. Pure.
 */
import { holderGone, isLocal, type Holder, type HolderFacts } from "./holder.js"
import { uptime } from "../time.js"

/** What an engine says of itself when it registers; the backend adds who and where it is. */
export interface EngineRegistration {
  /** The package version the engine was built from. */
  readonly version: string
  /** When the engine started (epoch ms). */
  readonly since: number
  /** The backend its settings chose (`sqlite`, `postgres`), wherever the entry is written (a fleet's fallback too). */
  readonly backend: string
}

/** One registered engine as a view shows it. */
export interface EngineView {
  readonly host: string
  readonly pid: number
  readonly version: string
  /** The backend its settings chose: `sqlite`, or `postgres` (fleet mode). */
  readonly backend: string
  readonly since: number
  /** Its process still runs (this host), or its host's lease holds (another host). */
  readonly live: boolean
  /** It runs on the host the view runs on. */
  readonly local: boolean
}

/** The most entries a view reads (dead ones are pruned when an engine registers; this bounds a database never pruned). */
export const ENGINES_MAX = 256

/**
 * Whether a registered engine still runs: on this host, its pid alive and not reused (no lease: an
 * idle engine renews nothing); elsewhere, while its host's holder lease holds (none on record: not live).
 */
export const engineLive = (holder: Holder, leaseUntil: number | undefined, facts: HolderFacts, ownHost: string, now: number): boolean =>
  isLocal(holder, ownHost) ? !holderGone(holder, Number.POSITIVE_INFINITY, facts, ownHost, now) : leaseUntil !== undefined && now <= leaseUntil

/** Entries sorted by when they started, then host and pid. */
export const byStart = (engines: ReadonlyArray<EngineView>): ReadonlyArray<EngineView> =>
  [...engines].sort((a, b) => a.since - b.since || (a.host < b.host ? -1 : a.host > b.host ? 1 : 0) || a.pid - b.pid)

/** One process's engines (opencode runs one per project directory): `pid 1234 (v0.1.0, sqlite, since 3m)`. */
const processText = (group: ReadonlyArray<EngineView>, now: number): string => {
  const e = group[0]!
  const projects = group.length > 1 ? `${group.length} projects, ` : ""
  return `pid ${e.pid}${e.local ? "" : `@${e.host}`} (${projects}v${e.version}, ${e.backend}, since ${uptime(now - Math.min(...group.map((g) => g.since)))})`
}

/** Entries grouped by process (host and pid), in the order given. */
const byProcess = (engines: ReadonlyArray<EngineView>): ReadonlyArray<ReadonlyArray<EngineView>> => {
  const groups = new Map<string, Array<EngineView>>()
  for (const e of engines) {
    const key = `${e.host}\u0000${e.pid}`
    const group = groups.get(key)
    if (group === undefined) groups.set(key, [e])
    else group.push(e)
  }
  return [...groups.values()]
}

/**
 * The line of the status view and the `plugin-loaded` check: `plugin loaded in 1 opencode process: pid
 * 1234 (v0.1.0, sqlite, since 3m)`, or `plugin loaded in no running opencode process`; entries whose
 * process is gone (it ended without unregistering) follow as `gone: …`. Not yet made printable.
 */
export const enginesLine = (engines: ReadonlyArray<EngineView>, now: number): string => {
  const sorted = byStart(engines)
  const live = byProcess(sorted.filter((e) => e.live))
  const gone = byProcess(sorted.filter((e) => !e.live))
  const head =
    live.length === 0
      ? "plugin loaded in no running opencode process"
      : `plugin loaded in ${live.length} opencode process${live.length === 1 ? "" : "es"}: ${live.map((g) => processText(g, now)).join(", ")}`
  return gone.length === 0 ? head : `${head}; gone: ${gone.map((g) => processText(g, now)).join(", ")}`
}
