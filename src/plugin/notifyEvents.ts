/**
 * What the notification rules read from opencode's bus events (SPEC §10.1). Pure and total, like
 * `events.ts`: every read is guarded (`extract.ts`), so a hostile event gives nothing rather than an
 * exception; texts are cut before the core cleans and caps them.
 */
import type { NotifyInput } from "../core/notify/machine.js"
import { sessionFacts } from "../core/session/facts.js"
import { at, cut, field, items, text } from "../core/extract.js"

const NONE: ReadonlyArray<NotifyInput> = []
/** Question texts read per ask (the headline is the first that is not blank). */
const QUESTIONS_MAX = 16
/** Characters kept of a text that is cleaned and capped later (titles, questions, errors). */
const SHOWN_MAX = 4_096

const questionTexts = (questions: unknown): ReadonlyArray<string> =>
  items(questions, QUESTIONS_MAX).flatMap((q) => {
    const t = cut(field(q, "question"), SHOWN_MAX)
    return t === undefined ? [] : [t]
  })

/** The message of an opencode error object: `data.message`, else `message`. */
const errorMessage = (error: unknown): string | undefined => cut(at(error, "data", "message"), SHOWN_MAX) ?? cut(field(error, "message"), SHOWN_MAX)

/** One opencode bus event → the notification inputs. */
export const notifyInputs = (event: unknown): ReadonlyArray<NotifyInput> => {
  const p = field(event, "properties")
  switch (text(field(event, "type"))) {
    case "session.created":
    case "session.updated": {
      const facts = sessionFacts(field(p, "info"))
      return facts === undefined ? NONE : [{ type: "session", ...facts }]
    }
    case "session.deleted": {
      const id = text(at(p, "info", "id")) ?? text(field(p, "sessionID"))
      return id === undefined ? NONE : [{ type: "deleted", id }]
    }
    case "session.status": {
      const session = text(field(p, "sessionID"))
      if (session === undefined) return NONE
      const type = at(p, "status", "type")
      return type === "busy" ? [{ type: "busy", session }] : type === "idle" ? [{ type: "idle", session }] : NONE
    }
    case "session.idle": {
      const session = text(field(p, "sessionID"))
      return session === undefined ? NONE : [{ type: "idle", session }]
    }
    case "session.error": {
      const session = text(field(p, "sessionID"))
      if (session === undefined) return NONE
      const error = field(p, "error")
      return [{ type: "error", session, name: text(field(error, "name")), message: errorMessage(error) }]
    }
    case "question.asked": {
      const session = text(field(p, "sessionID"))
      const id = text(field(p, "id"))
      return session === undefined || id === undefined ? NONE : [{ type: "question", session, id, texts: questionTexts(field(p, "questions")) }]
    }
    case "permission.asked": {
      const session = text(field(p, "sessionID"))
      const id = text(field(p, "id"))
      if (session === undefined || id === undefined) return NONE
      return [
        {
          type: "permission",
          session,
          id,
          permission: cut(field(p, "permission"), SHOWN_MAX),
          pattern: cut(items(field(p, "patterns"), 1)[0], SHOWN_MAX)
        }
      ]
    }
    case "permission.replied":
    case "question.replied":
    case "question.rejected": {
      const session = text(field(p, "sessionID"))
      return session === undefined ? NONE : [{ type: "answered", session, id: text(field(p, "requestID")) ?? text(field(p, "permissionID")) }]
    }
    case "message.updated": {
      const info = field(p, "info")
      if (field(info, "role") !== "user") return NONE
      const session = text(field(info, "sessionID"))
      return session === undefined ? NONE : [{ type: "userMessage", session }]
    }
    default:
      return NONE
  }
}
