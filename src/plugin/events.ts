/** One opencode bus event → the engine's programs (SPEC §6.4, §7.1, §8.2). */
import { Effect } from "effect"
import { asString, isRecord } from "../core/json.js"
import type { Engine } from "./engine.js"
import type { PoolServices } from "./services.js"

const isObj = isRecord
const str = asString

/** One bus event → the engine (SPEC §6.4, §7.1, §8.2). Unknown shapes are ignored. */
export const onEvent = (engine: Engine, event: unknown): Effect.Effect<void, never, PoolServices> =>
  Effect.gen(function* () {
    if (!isObj(event)) return
    const type = str(event.type)
    const p = isObj(event.properties) ? event.properties : {}
    switch (type) {
      case "session.created": {
        const info = isObj(p.info) ? p.info : {}
        const id = str(info.id)
        const parent = str(info.parentID)
        if (id !== undefined && parent !== undefined) yield* engine.childCreated(id, parent, str(info.agent), str(info.title))
        return
      }
      case "message.updated": {
        const info = isObj(p.info) ? p.info : {}
        const session = str(info.sessionID)
        if (session === undefined) return
        if (info.role === "assistant" && info.error !== undefined && info.error !== null) {
          const provider = str(info.providerID)
          const model = str(info.modelID)
          yield* engine.onError(session, info.error, provider !== undefined && model !== undefined ? `${provider}/${model}` : undefined)
          return
        }
        yield* engine.activity(session)
        return
      }
      case "message.part.updated": {
        const part = isObj(p.part) ? p.part : {}
        const session = str(part.sessionID)
        if (session === undefined || part.type === "retry") return
        if (part.type === "text" || part.type === "reasoning" || part.type === "tool") yield* engine.output(session)
        yield* engine.activity(session)
        return
      }
      case "session.status": {
        const session = str(p.sessionID)
        const status = isObj(p.status) ? p.status : {}
        if (session === undefined) return
        if (status.type === "retry") {
          const action = isObj(status.action) ? status.action : {}
          const next = typeof status.next === "number" ? status.next : 0
          yield* engine.onRetry(session, str(status.message) ?? "", next, str(action.provider))
        } else if (status.type === "busy") {
          yield* engine.markBusy(session)
        } else if (status.type === "idle") {
          yield* engine.idle(session)
        }
        return
      }
      case "session.idle": {
        const session = str(p.sessionID)
        if (session !== undefined) yield* engine.idle(session)
        return
      }
      case "session.error": {
        const session = str(p.sessionID)
        if (session !== undefined && p.error !== undefined) yield* engine.onError(session, p.error, undefined)
        return
      }
      case "permission.asked":
      case "question.asked": {
        const session = str(p.sessionID)
        const id = str(p.id)
        if (session !== undefined && id !== undefined) yield* engine.ask(session, id, true)
        return
      }
      case "permission.replied":
      case "question.replied":
      case "question.rejected": {
        const session = str(p.sessionID)
        const id = str(p.requestID) ?? str(p.permissionID) ?? "*"
        if (session !== undefined) yield* engine.answered(session, id)
        return
      }
      default:
        return
    }
  })
