/**
 * The last-activity table of the trace machine: a persistent map from session id to time.
 *
 * Persistent the "fat node" way: every key keeps its (version, value) history in one shared store, and
 * a table is a version of that store. Writing through the newest version appends (O(1)); reading any
 * version finds the newest entry at or before it (O(1) in the usual case: the last entry). Writing
 * through an older version (a branch) copies what that version sees into a new store first, so no
 * table a caller holds ever changes. Histories are compacted when they outgrow the live keys.
 *
 * Written out instead of `HashMap` from effect: replay applies one `set` per activity line, and the HAMT
 * path copies were a fifth of the replay time (docs/PERFORMANCE.md).
 */

interface Store {
  /** Per key: versions and values interleaved, versions ascending. */
  readonly entries: Map<string, Array<number>>
  /** The highest version written to this store. */
  latest: number
  /** Number of (version, value) pairs held, all keys together. */
  held: number
}

export interface ActivityTable {
  readonly store: Store
  readonly version: number
  /** Keys visible at this version. */
  readonly size: number
}

/** The empty table. Its store is sealed (latest ≠ its version), so the first write starts a new store. */
export const emptyActivity: ActivityTable = { store: { entries: new Map(), latest: 1, held: 0 }, version: 0, size: 0 }

const valueAt = (history: Array<number> | undefined, version: number): number | undefined => {
  if (history === undefined) return undefined
  for (let i = history.length - 2; i >= 0; i -= 2) if (history[i]! <= version) return history[i + 1]
  return undefined
}

export const getActivity = (t: ActivityTable, session: string): number | undefined => valueAt(t.store.entries.get(session), t.version)

/** Every key visible in `t`, with its value, in a fresh store (version 0). */
const copyVisible = (t: ActivityTable, keep?: (value: number, key: string) => boolean): ActivityTable => {
  const entries = new Map<string, Array<number>>()
  for (const [key, history] of t.store.entries) {
    const v = valueAt(history, t.version)
    if (v !== undefined && (keep === undefined || keep(v, key))) entries.set(key, [0, v])
  }
  return { store: { entries, latest: 0, held: entries.size }, version: 0, size: entries.size }
}

export const setActivity = (t0: ActivityTable, session: string, at: number): ActivityTable => {
  const t = t0.version === t0.store.latest && t0.store.held <= 4 * t0.size + 1024 ? t0 : copyVisible(t0)
  const store = t.store
  const version = store.latest + 1
  store.latest = version
  let history = store.entries.get(session)
  const known = valueAt(history, t.version) !== undefined
  if (history === undefined) {
    history = []
    store.entries.set(session, history)
  }
  history.push(version, at)
  store.held++
  return { store, version, size: known ? t.size : t.size + 1 }
}

/** The table with only the entries `keep` accepts. */
export const filterActivity = (t: ActivityTable, keep: (value: number, key: string) => boolean): ActivityTable => copyVisible(t, keep)

/** Every visible entry (tests, diagnostics). */
export const activityEntries = (t: ActivityTable): Array<readonly [string, number]> => {
  const out: Array<readonly [string, number]> = []
  for (const [key, history] of t.store.entries) {
    const v = valueAt(history, t.version)
    if (v !== undefined) out.push([key, v])
  }
  return out
}
