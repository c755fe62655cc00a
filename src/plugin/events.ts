/** One opencode bus event → the engine's events (SPEC §6.4, §7.1, §8.2). Pure; unknown shapes give none. */
import type { EngineEvent } from "../core/engine/step.js"
import { asString, isRecord } from "../core/json.js"

const NONE: ReadonlyArray<EngineEvent> = []

export const engineEvents = (event: unknown): ReadonlyArray<EngineEvent> => {
  if (!isRecord(event)) return NONE
  const p = isRecord(event.properties) ? event.properties : {}
  switch (asString(event.type)) {
    case "session.created": {
      const info = isRecord(p.info) ? p.info : {}
      const id = asString(info.id)
      const parent = asString(info.parentID)
      return id !== undefined && parent !== undefined ? [{ type: "child", id, parent, agent: asString(info.agent), title: asString(info.title) }] : NONE
    }
    case "message.updated": {
      const info = isRecord(p.info) ? p.info : {}
      const session = asString(info.sessionID)
      if (session === undefined) return NONE
      if (info.role === "assistant" && info.error !== undefined && info.error !== null) {
        const provider = asString(info.providerID)
        const model = asString(info.modelID)
        return [{ type: "error", session, error: info.error, model: provider !== undefined && model !== undefined ? `${provider}/${model}` : undefined }]
      }
      return [{ type: "activity", session }]
    }
    case "message.part.updated": {
      const part = isRecord(p.part) ? p.part : {}
      const session = asString(part.sessionID)
      if (session === undefined || part.type === "retry") return NONE
      const activity: EngineEvent = { type: "activity", session }
      return part.type === "text" || part.type === "reasoning" || part.type === "tool" ? [{ type: "output", session }, activity] : [activity]
    }
    case "session.status": {
      const session = asString(p.sessionID)
      const status = isRecord(p.status) ? p.status : {}
      if (session === undefined) return NONE
      if (status.type === "retry") {
        const action = isRecord(status.action) ? status.action : {}
        return [{ type: "retry", session, message: asString(status.message) ?? "", next: typeof status.next === "number" ? status.next : 0, provider: asString(action.provider) }]
      }
      if (status.type === "busy") return [{ type: "busy", session }]
      if (status.type === "idle") return [{ type: "idle", session }]
      return NONE
    }
    case "session.idle": {
      const session = asString(p.sessionID)
      return session === undefined ? NONE : [{ type: "idle", session }]
    }
    case "session.error": {
      const session = asString(p.sessionID)
      return session !== undefined && p.error !== undefined ? [{ type: "error", session, error: p.error }] : NONE
    }
    case "permission.asked":
    case "question.asked": {
      const session = asString(p.sessionID)
      const id = asString(p.id)
      return session !== undefined && id !== undefined ? [{ type: "ask", session, id }] : NONE
    }
    case "permission.replied":
    case "question.replied":
    case "question.rejected": {
      const session = asString(p.sessionID)
      return session === undefined ? NONE : [{ type: "answered", session, id: asString(p.requestID) ?? asString(p.permissionID) ?? "*" }]
    }
    default:
      return NONE
  }
}
