/**
 * What the notification rules read from opencode's bus events (SPEC §10.1): the one decoder's
 * normalised events (core/bus/decode.ts, pure and total over hostile input, texts cut before the core
 * cleans and caps them) mapped to the notification machine's inputs.
 */
import type { NotifyInput } from "../core/notify/machine.js"
import { decodeBusEvent, type BusEvent } from "../core/bus/decode.js"
import { factsOf } from "../core/session/facts.js"

const NONE: ReadonlyArray<NotifyInput> = []

/** A decoded bus event → the notification inputs. */
export const notifyInputsOf = (e: BusEvent | undefined): ReadonlyArray<NotifyInput> => {
  switch (e?.type) {
    case "session":
      return [{ type: "session", ...factsOf(e.info) }]
    case "deleted":
      return [{ type: "deleted", id: e.id }]
    case "busy":
    case "idle":
      return [{ type: e.type, session: e.session }]
    case "sessionError":
      return [{ type: "error", session: e.session, name: e.error?.name, message: e.error?.message }]
    case "question":
      return [{ type: "question", session: e.session, id: e.id, texts: e.texts }]
    case "permission":
      return [{ type: "permission", session: e.session, id: e.id, permission: e.permission, pattern: e.pattern }]
    case "answered":
      return [{ type: "answered", session: e.session, id: e.id }]
    case "message":
      return e.role === "user" ? [{ type: "userMessage", session: e.session }] : NONE
    default:
      return NONE
  }
}

/** One opencode bus event → the notification inputs. */
export const notifyInputs = (event: unknown): ReadonlyArray<NotifyInput> => notifyInputsOf(decodeBusEvent(event))
