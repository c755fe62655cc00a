/**
 * opencode's bus events (the plugin's `event` hook) as one normalised union, read once for both
 * engines: the pool engine (SPEC §6.3, §6.4, §7.1, §8.2) and the notification machine (SPEC §10.1)
 * each map it to their own inputs. Pure and total: the event is untrusted data, so every read goes
 * through `extract.ts` (a throwing getter, a Proxy, a cycle, a huge string or a wrong type gives
 * nothing rather than an exception); texts a notification may show are cut before the core cleans and
 * caps them; an error is kept as a bounded plain copy, so recording and classifying it cannot throw.
 */
import { at, cut, field, finite, items, jsonCopy, text } from "../extract.js"
import { partSignal } from "../session/parts.js"
import { readSession, SHOWN_MAX, type SessionRead } from "../session/facts.js"

/** Question texts read per ask (the headline is the first that is not blank). */
const QUESTIONS_MAX = 16

/** An error object as read: a bounded plain copy, its `name`, and its message (`data.message`, else `message`). */
export interface ErrorRead {
  readonly copy: unknown
  readonly name: string | undefined
  readonly message: string | undefined
}

/** One opencode bus event, normalised. */
export type BusEvent =
  /** `session.created` (`created`) or `session.updated`. */
  | { readonly type: "session"; readonly created: boolean; readonly info: SessionRead }
  | { readonly type: "deleted"; readonly id: string }
  /** `message.updated` of a message that carries no assistant error. */
  | { readonly type: "message"; readonly session: string; readonly role: string | undefined }
  /** `message.updated` of an assistant message that failed; `model` is `provider/model` when both are readable. */
  | { readonly type: "assistantError"; readonly session: string; readonly error: unknown; readonly model: string | undefined }
  /** `message.part.updated` of a part that says something (session/parts.ts). */
  | { readonly type: "part"; readonly session: string; readonly signal: "activity" | "output" }
  /** `session.status` busy. */
  | { readonly type: "busy"; readonly session: string }
  /** `session.status` idle, or `session.idle`. */
  | { readonly type: "idle"; readonly session: string }
  /** `session.status` retry: opencode waits to retry a failed request until `next`. */
  | { readonly type: "retry"; readonly session: string; readonly message: string; readonly next: number; readonly provider: string | undefined }
  /** `session.error`; `error` absent when the event carries none. */
  | { readonly type: "sessionError"; readonly session: string; readonly error: ErrorRead | undefined }
  | { readonly type: "question"; readonly session: string; readonly id: string; readonly texts: ReadonlyArray<string> }
  | { readonly type: "permission"; readonly session: string; readonly id: string; readonly permission: string | undefined; readonly pattern: string | undefined }
  /** `question.replied`, `question.rejected`, `permission.replied`; `id` undefined when the event names no request. */
  | { readonly type: "answered"; readonly session: string; readonly id: string | undefined }

const errorRead = (error: unknown): ErrorRead => ({
  copy: jsonCopy(error),
  name: text(field(error, "name")),
  message: cut(at(error, "data", "message"), SHOWN_MAX) ?? cut(field(error, "message"), SHOWN_MAX)
})

const questionTexts = (questions: unknown): ReadonlyArray<string> =>
  items(questions, QUESTIONS_MAX).flatMap((q) => {
    const t = cut(field(q, "question"), SHOWN_MAX)
    return t === undefined ? [] : [t]
  })

/** `session.status`: busy, idle or retry. */
const statusEvent = (session: string, status: unknown): BusEvent | undefined => {
  switch (field(status, "type")) {
    case "busy":
      return { type: "busy", session }
    case "idle":
      return { type: "idle", session }
    case "retry":
      return { type: "retry", session, message: cut(field(status, "message")) ?? "", next: finite(field(status, "next")) ?? 0, provider: text(at(status, "action", "provider")) }
    default:
      return undefined
  }
}

/** `message.updated`: an assistant's failure, or any other message. */
const messageEvent = (info: unknown): BusEvent | undefined => {
  const session = text(field(info, "sessionID"))
  if (session === undefined) return undefined
  const role = field(info, "role")
  const error = field(info, "error")
  if (role === "assistant" && error !== undefined && error !== null) {
    const provider = text(field(info, "providerID"))
    const model = text(field(info, "modelID"))
    return { type: "assistantError", session, error: jsonCopy(error), model: provider !== undefined && model !== undefined ? `${provider}/${model}` : undefined }
  }
  return { type: "message", session, role: text(role) }
}

/** One opencode bus event, normalised; undefined for an event neither engine reads, or one missing what it needs. */
export const decodeBusEvent = (event: unknown): BusEvent | undefined => {
  const p = field(event, "properties")
  const type = text(field(event, "type"))
  switch (type) {
    case "session.created":
    case "session.updated": {
      const info = readSession(field(p, "info"))
      return info === undefined ? undefined : { type: "session", created: type === "session.created", info }
    }
    case "session.deleted": {
      const id = text(at(p, "info", "id")) ?? text(field(p, "sessionID"))
      return id === undefined ? undefined : { type: "deleted", id }
    }
    case "message.updated":
      return messageEvent(field(p, "info"))
    case "message.part.updated": {
      const part = field(p, "part")
      const session = text(field(part, "sessionID"))
      const signal = partSignal(field(part, "type"))
      return session === undefined || signal === "none" ? undefined : { type: "part", session, signal }
    }
    case "session.status": {
      const session = text(field(p, "sessionID"))
      return session === undefined ? undefined : statusEvent(session, field(p, "status"))
    }
    case "session.idle": {
      const session = text(field(p, "sessionID"))
      return session === undefined ? undefined : { type: "idle", session }
    }
    case "session.error": {
      const session = text(field(p, "sessionID"))
      if (session === undefined) return undefined
      const error = field(p, "error")
      return { type: "sessionError", session, error: error === undefined ? undefined : errorRead(error) }
    }
    case "question.asked": {
      const session = text(field(p, "sessionID"))
      const id = text(field(p, "id"))
      return session === undefined || id === undefined ? undefined : { type: "question", session, id, texts: questionTexts(field(p, "questions")) }
    }
    case "permission.asked": {
      const session = text(field(p, "sessionID"))
      const id = text(field(p, "id"))
      if (session === undefined || id === undefined) return undefined
      return { type: "permission", session, id, permission: cut(field(p, "permission"), SHOWN_MAX), pattern: cut(items(field(p, "patterns"), 1)[0], SHOWN_MAX) }
    }
    case "permission.replied":
    case "question.replied":
    case "question.rejected": {
      const session = text(field(p, "sessionID"))
      return session === undefined ? undefined : { type: "answered", session, id: text(field(p, "requestID")) ?? text(field(p, "permissionID")) }
    }
    default:
      return undefined
  }
}
