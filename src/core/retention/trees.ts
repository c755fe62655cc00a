/** Which session trees `sweep sessions` retires (SPEC §11.3). Plain rows in, an ordered plan out. */
import { sessionWindow } from "./window.js"

export interface SessionFacts {
  readonly id: string
  readonly parentId: string | null
  readonly directory: string
  readonly workspaceId: string | null
  readonly timeCreated: number
  readonly timeUpdated: number
}

export interface TreeOptions {
  readonly now: number
  readonly days: number
  readonly graceHours: number
  /** Only roots whose directory equals this (already absolute, no trailing slash). */
  readonly directory?: string | undefined
  readonly limit?: number | undefined
}

export interface SessionTree {
  readonly root: string
  /** Every session of the tree, children before parents (the root last). */
  readonly ids: ReadonlyArray<string>
}

export interface TreePlan {
  readonly cutoffCreated: number
  readonly cutoffUpdated: number
  /** The trees to retire, oldest root first, at most `limit`. */
  readonly trees: ReadonlyArray<SessionTree>
  /** Old and quiet trees kept because a session in them has a workspace or is in sync. */
  readonly protectedTrees: number
  /** Eligible trees left for a later run because of `limit`. */
  readonly remainingRoots: number
}

/** A root is a session without a parent, or whose parent row is missing. */
export const rootsOf = (sessions: ReadonlyArray<SessionFacts>): ReadonlyArray<SessionFacts> => {
  const ids = new Set(sessions.map((s) => s.id))
  return sessions.filter((s) => s.parentId === null || !ids.has(s.parentId))
}

export const childrenIndex = (sessions: ReadonlyArray<SessionFacts>): ReadonlyMap<string, ReadonlyArray<SessionFacts>> => {
  const index = new Map<string, Array<SessionFacts>>()
  for (const s of sessions) {
    if (s.parentId === null) continue
    const list = index.get(s.parentId)
    if (list === undefined) index.set(s.parentId, [s])
    else list.push(s)
  }
  return index
}

/** The root and all its descendants, breadth first; a parent cycle cannot loop. */
export const treeOf = (root: SessionFacts, children: ReadonlyMap<string, ReadonlyArray<SessionFacts>>): ReadonlyArray<SessionFacts> => {
  const seen = new Set([root.id])
  const out = [root]
  for (let i = 0; i < out.length; i++) {
    for (const child of children.get(out[i]!.id) ?? []) {
      if (seen.has(child.id)) continue
      seen.add(child.id)
      out.push(child)
    }
  }
  return out
}

const byCreatedThenId = (a: SessionFacts, b: SessionFacts): number =>
  a.timeCreated - b.timeCreated || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/**
 * The plan: a root's tree goes when the root was created before now − days, every session in the tree
 * was updated before now − graceHours, and no session has a workspace or an `event_sequence.owner_id`.
 */
export const planTrees = (sessions: ReadonlyArray<SessionFacts>, synced: ReadonlySet<string>, options: TreeOptions): TreePlan => {
  const { cutoffCreated, cutoffUpdated } = sessionWindow(options.now, options.days, options.graceHours)
  const children = childrenIndex(sessions)
  const roots = rootsOf(sessions)
    .filter((r) => options.directory === undefined || r.directory === options.directory)
    .slice()
    .sort(byCreatedThenId)
  const eligible: Array<SessionTree> = []
  let protectedTrees = 0
  for (const root of roots) {
    if (!(root.timeCreated < cutoffCreated)) continue
    const tree = treeOf(root, children)
    if (!tree.every((s) => s.timeUpdated < cutoffUpdated)) continue
    if (tree.some((s) => s.workspaceId !== null || synced.has(s.id))) {
      protectedTrees++
      continue
    }
    eligible.push({ root: root.id, ids: tree.map((s) => s.id).reverse() })
  }
  const taken = options.limit === undefined ? eligible : eligible.slice(0, options.limit)
  return { cutoffCreated, cutoffUpdated, trees: taken, protectedTrees, remainingRoots: eligible.length - taken.length }
}
