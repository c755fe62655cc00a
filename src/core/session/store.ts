/**
 * The session store: what one machine knows of each opencode session (its parent, title, whether it
 * belongs to the context agent, whether it is compacting, when it was last told), one record per id
 * in a persistent map (effect's `HashMap`: a write costs O(log n) and shares the rest), with the one
 * rule that merges what an `info` says into a record, the walks up its tree, and its bounds. The pool
 * engine (its `sessions`, core/engine/state.ts) and the notification machine (core/notify/machine.ts)
 * each hold one: they are fed different events and bound them by different rules (docs/DECISIONS.md
 * 258). Pure.
 */
import { HashMap, Option } from "effect"
import { climb, type Climb, type ParentOf } from "./climb.js"
import { isContextSession } from "./title.js"
import type { SessionFacts } from "./facts.js"

/** What the store keeps of one session. */
export interface SessionRecord {
  /** Its parent; undefined for a root (or a session whose parent was never told). */
  readonly parent: string | undefined
  /** Its title as shown (SHOWN_MAX characters at most). */
  readonly title: string | undefined
  /** It belongs to the context agent (once told, for good: a later info without the mark keeps it). */
  readonly context: boolean
  /** Its last info said it was compacting. */
  readonly compacting: boolean
  /** When it was last recorded. */
  readonly seenAt: number
}

/** Session id → its record. */
export type SessionStore = HashMap.HashMap<string, SessionRecord>

/** A store that knows no session. */
export const emptySessions: SessionStore = HashMap.empty()

/** The record of `id`, or undefined when it is not known. */
export const sessionOf = (store: SessionStore, id: string): SessionRecord | undefined => Option.getOrUndefined(HashMap.get(store, id))

/** Whether `id` is known. */
export const knowsSession = (store: SessionStore, id: string): boolean => HashMap.has(store, id)

/** How many sessions are known. */
export const sessionCount = (store: SessionStore): number => HashMap.size(store)

/** `id`'s parent when one is known. */
export const parentLink = (store: SessionStore, id: string): string | undefined => sessionOf(store, id)?.parent

/** Whether `id` is known to have a parent (it is nobody's root). */
export const hasParent = (store: SessionStore, id: string): boolean => sessionOf(store, id)?.parent !== undefined

/**
 * The record an `info` makes of a session told before as `old` (or never): a field the info leaves
 * out keeps its value (the parent, the title), a session never is its own parent, the context mark
 * once seen stays, compacting is as the info says.
 */
const merged = (old: SessionRecord | undefined, facts: SessionFacts, parent: string | undefined, now: number): SessionRecord => {
  const title = facts.title ?? old?.title
  return {
    parent,
    title,
    context: (old?.context ?? false) || isContextSession(facts.agent, title),
    compacting: facts.compacting ?? false,
    seenAt: now
  }
}

/** What a session's `info` says (`session.created`/`session.updated`, a lookup's answer), recorded at `now`. */
export const recordSession = (store: SessionStore, facts: SessionFacts, now: number): SessionStore => {
  const old = sessionOf(store, facts.id)
  const parent = facts.parent ?? old?.parent
  return HashMap.set(store, facts.id, merged(old, facts, parent === facts.id ? undefined : parent, now))
}

/**
 * A child session created under `parent` (a `session.created` with a parent), recorded at `now`: its
 * parent link as told, even a link to itself (the engine walks such a chain to TREE_DEPTH_MAX, as it
 * always has), the rest merged as `recordSession` merges it.
 */
export const recordChild = (store: SessionStore, facts: SessionFacts & { readonly parent: string }, now: number): SessionStore =>
  HashMap.set(store, facts.id, merged(sessionOf(store, facts.id), facts, facts.parent, now))

/** The store without `id`. */
export const forgetSession = (store: SessionStore, id: string): SessionStore => HashMap.remove(store, id)

/** The sessions `keep` keeps (the store itself when it keeps them all). */
export const keepSessions = (store: SessionStore, keep: (id: string, record: SessionRecord) => boolean): SessionStore => {
  let out = store
  for (const [id, record] of store) if (!keep(id, record)) out = HashMap.remove(out, id)
  return out
}

/**
 * The store kept to `max` sessions: when it holds more, the oldest fifth of `max` by `seenAt` goes at
 * once, so a flood of new sessions costs one sort per `max / 5` of them.
 */
export const boundSessions = (store: SessionStore, max: number): SessionStore => {
  if (HashMap.size(store) <= max) return store
  const byAge = Array.from(store).sort((a, b) => a[1].seenAt - b[1].seenAt)
  let out = store
  for (const [id] of byAge.slice(0, Math.ceil(max / 5))) out = HashMap.remove(out, id)
  return out
}

/** The walk's view of the store where an unknown session cannot be placed: `undefined` for it, `null` for a root. */
export const knownParentOf =
  (store: SessionStore): ParentOf =>
  (id) => {
    const record = sessionOf(store, id)
    return record === undefined ? undefined : (record.parent ?? null)
  }

/** The walk's view of the store where every session without a parent link is a root (the engine knows only children). */
export const linkedParentOf =
  (store: SessionStore): ParentOf =>
  (id) =>
    parentLink(store, id) ?? null

/** The walk up from `session` over the sessions known: to its root, an unknown session, or TREE_DEPTH_MAX levels. */
export const climbKnown = (store: SessionStore, session: string): Climb => climb(session, knownParentOf(store))

/** `session` and its known ancestors up to TREE_DEPTH_MAX levels, nearest first (a session without a parent link is a root). */
export const lineageOf = (store: SessionStore, session: string): ReadonlyArray<string> => climb(session, linkedParentOf(store)).path

/**
 * Where a session sits (SPEC §10.1): its root and whether its tree is the context agent's (it or a
 * session above it is a context session, or the chain has no root: a cycle or deeper than
 * TREE_DEPTH_MAX, where every session has a parent), or the first session on the way up not known.
 */
export type Place =
  | { readonly _tag: "Known"; readonly root: string; readonly self: SessionRecord; readonly context: boolean }
  | { readonly _tag: "Unknown"; readonly missing: string }

export const placeOf = (store: SessionStore, session: string): Place => {
  const { path, end } = climbKnown(store, session)
  if (end._tag === "Unknown") return { _tag: "Unknown", missing: end.missing }
  const self = sessionOf(store, session)!
  if (end._tag === "TooDeep") return { _tag: "Known", root: end.next, self, context: true }
  return { _tag: "Known", root: end.root, self, context: path.some((id) => sessionOf(store, id)!.context) }
}
