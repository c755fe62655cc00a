/**
 * The session tree one plugin process knows (SPEC §8.2, §10.1): parents, each owner's newest
 * children, the questions and permissions pending in each session, the sessions busy since their last
 * idle, and the one walk up the tree that roots, blocked sessions and ancestors are read with.
 * Immutable: every change returns a new tree (the unchanged maps shared), so an engine state that
 * holds these fields keeps them as they are.
 */
import { filterMap, setIn } from "../maps.js"

/** How far a walk climbs: a session and at most this many sessions above it. A deeper chain is a cycle or not a real tree. */
export const TREE_DEPTH_MAX = 64
/** Children remembered per owner (newest last). */
export const CHILD_RING = 8
/** How long a child stays a candidate for binding, and an owner's ring is kept after its newest child. */
export const CHILD_MEMORY_MS = 1_800_000

/** A child session as its `session.created` told it. */
export interface Child {
  readonly id: string
  readonly createdAt: number
  readonly agent: string | undefined
}

export interface SessionTree {
  /** Child → parent, from `session.created`. */
  readonly parents: ReadonlyMap<string, string>
  /** Owner session → its newest children (newest last, at most CHILD_RING). */
  readonly children: ReadonlyMap<string, ReadonlyArray<Child>>
  /** Session → ids of questions and permissions asked in it and not answered yet. */
  readonly asks: ReadonlyMap<string, ReadonlySet<string>>
  /** Sessions seen busy since their last idle. */
  readonly busy: ReadonlySet<string>
}

/** A tree that knows no session. */
export const emptyTree = (): SessionTree => ({ parents: new Map(), children: new Map(), asks: new Map(), busy: new Set() })

/** A session's parent as a walk reads it: the parent's id, `null` for a root, `undefined` for a session not known. */
export type ParentOf = (session: string) => string | null | undefined

/** Where a walk up from a session ended. */
export type ClimbEnd =
  | { readonly _tag: "Root"; readonly root: string }
  /** A session on the way is not known: where it sits cannot be told yet. */
  | { readonly _tag: "Unknown"; readonly missing: string }
  /** TREE_DEPTH_MAX levels up and still a parent (a cycle, or deeper than any real tree): there is no root. */
  | { readonly _tag: "TooDeep"; readonly next: string }

export interface Climb {
  /** The known sessions walked, the start first. */
  readonly path: ReadonlyArray<string>
  readonly end: ClimbEnd
}

/** The one walk up a session tree: `session`, its parent, its parent's parent, up to a root, an unknown session or TREE_DEPTH_MAX levels. */
export const climb = (session: string, parentOf: ParentOf): Climb => {
  const path: Array<string> = []
  let id = session
  for (let level = 0; ; level++) {
    const parent = parentOf(id)
    if (parent === undefined) return { path, end: { _tag: "Unknown", missing: id } }
    path.push(id)
    if (parent === null) return { path, end: { _tag: "Root", root: id } }
    if (level === TREE_DEPTH_MAX) return { path, end: { _tag: "TooDeep", next: parent } }
    id = parent
  }
}

/** The walk's view of a tree whose every session is known: one without a recorded parent is a root. */
export const parentIn =
  (parents: ReadonlyMap<string, string>): ParentOf =>
  (session) =>
    parents.get(session) ?? null

/** `session` and its ancestors up to TREE_DEPTH_MAX levels, nearest first. */
export const lineage = (tree: Pick<SessionTree, "parents">, session: string): ReadonlyArray<string> => climb(session, parentIn(tree.parents)).path

/** Whether a session is known to have a parent (it is nobody's root). */
export const isChild = (tree: Pick<SessionTree, "parents">, session: string): boolean => tree.parents.has(session)

/**
 * Every session held blocked (SPEC §8.2 step 2): those with a pending question or permission, and
 * their ancestors. Costs the pending asks, not the sessions known.
 */
export const blockedSessions = (tree: Pick<SessionTree, "asks" | "parents">): ReadonlySet<string> => {
  const out = new Set<string>()
  const parentOf = parentIn(tree.parents)
  for (const [asked, set] of tree.asks) {
    if (set.size === 0) continue
    for (const s of climb(asked, parentOf).path) out.add(s)
  }
  return out
}


/** A child created under `parent`: its parent link, and the newest place in the parent's ring. */
export const withChild = <T extends SessionTree>(tree: T, parent: string, child: Child): T => {
  const ring = [...(tree.children.get(parent) ?? []), child]
  while (ring.length > CHILD_RING) ring.shift()
  return { ...tree, parents: setIn(tree.parents, child.id, parent), children: setIn(tree.children, parent, ring) }
}

/** The ask ids of waits for a heavy-work permit (issue 21): `permit:<request id>`. */
export const PERMIT_ASK = "permit:"

/** A question or permission `id` asked in `session`. */
export const withAsk = <T extends SessionTree>(tree: T, session: string, id: string): T => ({
  ...tree,
  asks: setIn(tree.asks, session, new Set([...(tree.asks.get(session) ?? []), id]))
})

/** The answer to ask `id` in `session`; `"*"` answers every ask of the session. */
export const withAnswer = <T extends SessionTree>(tree: T, session: string, id: string): T => {
  const open = new Set(tree.asks.get(session) ?? [])
  // `*` answers the person's asks; a wait for a heavy-work permit (issue 21) ends only by its own id
  if (id !== "*") open.delete(id)
  else for (const a of open) if (!a.startsWith(PERMIT_ASK)) open.delete(a)
  return { ...tree, asks: setIn(tree.asks, session, open) }
}

/** `session` went busy (the same tree when it already was). */
export const withBusy = <T extends SessionTree>(tree: T, session: string): T =>
  tree.busy.has(session) ? tree : { ...tree, busy: new Set([...tree.busy, session]) }

/** `session` is no longer busy (the same tree when it was not). */
export const withoutBusy = <T extends SessionTree>(tree: T, session: string): T => {
  if (!tree.busy.has(session)) return tree
  const busy = new Set(tree.busy)
  busy.delete(session)
  return { ...tree, busy }
}

/**
 * The tree without what can no longer matter at `now`: parent links and busy marks of sessions not
 * `remembered`, rings whose newest child is older than CHILD_MEMORY_MS unless the owner `holds`
 * something, and sessions whose asks were all answered.
 */
export const pruneTree = <T extends SessionTree>(tree: T, now: number, remembered: (session: string) => boolean, holds: (owner: string) => boolean): T => ({
  ...tree,
  parents: filterMap(tree.parents, (_p, s) => remembered(s)),
  children: filterMap(tree.children, (ring, owner) => {
    const newest = ring.at(-1)
    return (newest !== undefined && now - newest.createdAt <= CHILD_MEMORY_MS) || holds(owner)
  }),
  asks: filterMap(tree.asks, (set) => set.size > 0),
  busy: new Set([...tree.busy].filter(remembered))
})
