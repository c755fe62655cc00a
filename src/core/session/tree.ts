/**
 * The session tree one plugin process knows (SPEC §8.2, §10.1): its child sessions with their parents
 * (a session store, store.ts), each owner's newest children, the questions and permissions pending in
 * each session, the sessions busy since their last idle, and the walks up the tree (climb.ts) that
 * roots, blocked sessions and ancestors are read with.
 * Immutable: every change returns a new tree (the unchanged maps shared), so an engine state that
 * holds these fields keeps them as they are.
 */
import { filterMap, setIn } from "../maps.js"
import { climb, type ParentOf } from "./climb.js"
import { emptySessions, hasParent, keepSessions, lineageOf, linkedParentOf, recordChild, type SessionStore } from "./store.js"

export { climb, TREE_DEPTH_MAX, type Climb, type ClimbEnd, type ParentOf } from "./climb.js"

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
  /** The children told by `session.created`, each with its parent (store.ts). */
  readonly sessions: SessionStore
  /** Owner session → its newest children (newest last, at most CHILD_RING). */
  readonly children: ReadonlyMap<string, ReadonlyArray<Child>>
  /** Session → ids of questions and permissions asked in it and not answered yet. */
  readonly asks: ReadonlyMap<string, ReadonlySet<string>>
  /** Sessions seen busy since their last idle. */
  readonly busy: ReadonlySet<string>
}

/** A tree that knows no session. */
export const emptyTree = (): SessionTree => ({ sessions: emptySessions, children: new Map(), asks: new Map(), busy: new Set() })

/** `session` and its ancestors up to TREE_DEPTH_MAX levels, nearest first. */
export const lineage = (tree: Pick<SessionTree, "sessions">, session: string): ReadonlyArray<string> => lineageOf(tree.sessions, session)

/** Whether a session is known to have a parent (it is nobody's root). */
export const isChild = (tree: Pick<SessionTree, "sessions">, session: string): boolean => hasParent(tree.sessions, session)

/**
 * Every session held blocked (SPEC §8.2 step 2): those with a pending question or permission, and
 * their ancestors. Costs the pending asks, not the sessions known.
 */
export const blockedSessions = (tree: Pick<SessionTree, "asks" | "sessions">): ReadonlySet<string> => {
  const out = new Set<string>()
  const parentOf: ParentOf = linkedParentOf(tree.sessions)
  for (const [asked, set] of tree.asks) {
    if (set.size === 0) continue
    for (const s of climb(asked, parentOf).path) out.add(s)
  }
  return out
}

/** A child created under `parent` (its title as told, if any): its record with the parent link, and the newest place in the parent's ring. */
export const withChild = <T extends SessionTree>(tree: T, parent: string, child: Child, title?: string): T => {
  const ring = [...(tree.children.get(parent) ?? []), child]
  while (ring.length > CHILD_RING) ring.shift()
  const sessions = recordChild(tree.sessions, { id: child.id, parent, agent: child.agent, title }, child.createdAt)
  return { ...tree, sessions, children: setIn(tree.children, parent, ring) }
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
 * The tree without what can no longer matter at `now`: records and busy marks of sessions not
 * `remembered`, rings whose newest child is older than CHILD_MEMORY_MS unless the owner `holds`
 * something, and sessions whose asks were all answered.
 */
export const pruneTree = <T extends SessionTree>(tree: T, now: number, remembered: (session: string) => boolean, holds: (owner: string) => boolean): T => ({
  ...tree,
  sessions: keepSessions(tree.sessions, remembered),
  children: filterMap(tree.children, (ring, owner) => {
    const newest = ring.at(-1)
    return (newest !== undefined && now - newest.createdAt <= CHILD_MEMORY_MS) || holds(owner)
  }),
  asks: filterMap(tree.asks, (set) => set.size > 0),
  busy: new Set([...tree.busy].filter(remembered))
})
