/**
 * The one walk up a session tree (SPEC §8.2, §10.1): a session, its parent, its parent's parent, up to
 * a root, a session not known, or TREE_DEPTH_MAX levels. Both machines' stores (store.ts) and the
 * engine's tree (tree.ts) walk with it. Pure.
 */

/** How far a walk climbs: a session and at most this many sessions above it. A deeper chain is a cycle or not a real tree. */
export const TREE_DEPTH_MAX = 64

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
