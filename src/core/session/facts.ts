/**
 * A session `info` object (`session.created` / `session.updated`, or opencode's `GET /session/<id>`)
 * as plain data: its place in its tree, title, agent and compaction, for the pool engine's binding
 * (SPEC §8.2) and the notification rules (SPEC §10.1). Pure and total: every read is guarded, so a
 * hostile object gives nothing rather than an exception.
 */
import { at, cut, field, text, TEXT_MAX } from "../extract.js"

/** Characters kept of a text a notification may show (titles, questions, errors); it is cleaned and capped later. */
export const SHOWN_MAX = 4_096

/** A session `info` object as read. */
export interface SessionRead {
  readonly id: string
  readonly parent: string | undefined
  readonly agent: string | undefined
  /** The whole title, for reading its agent mark; absent past TEXT_MAX characters. */
  readonly title: string | undefined
  /** The title's first SHOWN_MAX characters, for display. */
  readonly shown: string | undefined
  readonly compacting: boolean
}

/** A session `info` object as read, or undefined without an id. */
export const readSession = (info: unknown): SessionRead | undefined => {
  const id = text(field(info, "id"))
  if (id === undefined) return undefined
  const title = field(info, "title")
  const compacting = at(info, "time", "compacting")
  return {
    id,
    parent: text(field(info, "parentID")),
    agent: text(field(info, "agent"), TEXT_MAX),
    title: text(title, TEXT_MAX),
    shown: cut(title, SHOWN_MAX),
    compacting: typeof compacting === "number" && compacting > 0
  }
}

/** What the notification rules need of a session. */
export interface SessionFacts {
  readonly id: string
  readonly parent?: string | undefined
  readonly title?: string | undefined
  readonly agent?: string | undefined
  readonly compacting?: boolean | undefined
}

/** The notification rules' facts of a session read: the title as shown. */
export const factsOf = (s: SessionRead): SessionFacts => ({ id: s.id, parent: s.parent, title: s.shown, agent: s.agent, compacting: s.compacting })

/** A session `info` object as facts, or undefined without an id. */
export const sessionFacts = (info: unknown): SessionFacts | undefined => {
  const s = readSession(info)
  return s === undefined ? undefined : factsOf(s)
}
