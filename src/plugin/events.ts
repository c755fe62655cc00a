/** One opencode bus event → the engine's programs (SPEC §6.4, §7.1, §8.2). */
import { Effect } from "effect"
import { asString, isRecord } from "../core/json.js"
import type { Engine } from "./engine.js"
import type { PoolServices } from "./services.js"

/** Unknown shapes are ignored. */
export const onEvent = (engine: Engine, event: unknown): Effect.Effect<void, never, PoolServices> =>
  Effect.gen(function* () {
    if (!isRecord(event)) return
    const type = asString(event.type)
    const p = isRecord(event.properties) ? event.properties : {}
    switch (type) {
      case "session.created": {
        const info = isRecord(p.info) ? p.info : {}
        const id = asString(info.id)
        const parent = asString(info.parentID)
        if (id !== undefined && parent !== undefined) yield* engine.childCreated(id, parent, asString(info.agent), asString(info.title))
        return
      }
      case "message.updated": {
        const info = isRecord(p.info) ? p.info : {}
        const session = asString(info.sessionID)
        if (session === undefined) return
        if (info.role === "assistant" && info.error !== undefined && info.error !== null) {
          const provider = asString(info.providerID)
          const model = asString(info.modelID)
          yield* engine.onError(session, info.error, provider !== undefined && model !== undefined ? `${provider}/${model}` : undefined)
          return
        }
        yield* engine.activity(session)
        return
      }
      case "message.part.updated": {
        const part = isRecord(p.part) ? p.part : {}
        const session = asString(part.sessionID)
        if (session === undefined || part.type === "retry") return
        if (part.type === "text" || part.type === "reasoning" || part.type === "tool") yield* engine.output(session)
        yield* engine.activity(session)
        return
      }
      case "session.status": {
        const session = asString(p.sessionID)
        const status = isRecord(p.status) ? p.status : {}
        if (session === undefined) return
        if (status.type === "retry") {
          const action = isRecord(status.action) ? status.action : {}
          const next = typeof status.next === "number" ? status.next : 0
          yield* engine.onRetry(session, asString(status.message) ?? "", next, asString(action.provider))
        } else if (status.type === "busy") {
          yield* engine.markBusy(session)
        } else if (status.type === "idle") {
          yield* engine.idle(session)
        }
        return
      }
      case "session.idle": {
        const session = asString(p.sessionID)
        if (session !== undefined) yield* engine.idle(session)
        return
      }
      case "session.error": {
        const session = asString(p.sessionID)
        if (session !== undefined && p.error !== undefined) yield* engine.onError(session, p.error, undefined)
        return
      }
      case "permission.asked":
      case "question.asked": {
        const session = asString(p.sessionID)
        const id = asString(p.id)
        if (session !== undefined && id !== undefined) yield* engine.ask(session, id, true)
        return
      }
      case "permission.replied":
      case "question.replied":
      case "question.rejected": {
        const session = asString(p.sessionID)
        const id = asString(p.requestID) ?? asString(p.permissionID) ?? "*"
        if (session !== undefined) yield* engine.answered(session, id)
        return
      }
      default:
        return
    }
  })
