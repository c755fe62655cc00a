/**
 * A session's place in its tree as the notification rules read it (SPEC §10.1), from a session `info`
 * object (`session.created` / `session.updated`, or opencode's `GET /session/<id>`). Pure and total: every
 * read is guarded, so a hostile object gives nothing rather than an exception.
 */
import { at, cut, field, text, TEXT_MAX } from "../extract.js"

/** What the notification rules need of a session. */
export interface SessionFacts {
  readonly id: string
  readonly parent?: string | undefined
  readonly title?: string | undefined
  readonly agent?: string | undefined
  readonly compacting?: boolean | undefined
}

/** Characters kept of a title that is cleaned and capped later. */
const SHOWN_MAX = 4_096

/** A session `info` object as facts, or undefined without an id. */
export const sessionFacts = (info: unknown): SessionFacts | undefined => {
  const id = text(field(info, "id"))
  if (id === undefined) return undefined
  const compacting = at(info, "time", "compacting")
  return {
    id,
    parent: text(field(info, "parentID")),
    title: cut(field(info, "title"), SHOWN_MAX),
    agent: text(field(info, "agent"), TEXT_MAX),
    compacting: typeof compacting === "number" && compacting > 0
  }
}
