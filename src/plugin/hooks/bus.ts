/**
 * opencode's event bus: each event decoded once (core/bus/decode.ts); the pool engine takes its events
 * first (a limit's cooldown written before anything else), the notification machine its inputs in the
 * same turn (synchronously decided, so concurrent events keep their order). The engine's events: a
 * retry status after the error body of its session still being read (quota sensing, FAILURE_WAIT_MS at
 * most), an abort or error ending the session's permit waits.
 * Never throws.
 */
import { Effect } from "effect"
import { decodeBusEvent, type BusEvent } from "../../core/bus/decode.js"
import type { EngineEvent } from "../../core/engine/step.js"
import { field } from "../../core/extract.js"
import type { NotifyEngineService } from "../../services/notify/NotifyEngine.js"
import type { PermitGateService } from "../../services/permits/PermitGate.js"
import type { PoolEngineService } from "../../services/pool/PoolEngine.js"
import type { FailureReadsService } from "../../services/quota/FailureReads.js"
import { notifyInputsOf } from "../notifyEvents.js"
import type { Parts, Runner } from "./runner.js"

const NONE: ReadonlyArray<EngineEvent> = []

/** A decoded bus event → the engine's events. */
export const engineEventsOf = (e: BusEvent | undefined): ReadonlyArray<EngineEvent> => {
  switch (e?.type) {
    case "session": {
      const { id, parent, agent, title } = e.info
      return e.created && parent !== undefined ? [{ type: "child", id, parent, agent, title }] : NONE
    }
    case "message":
      return [e.role === "assistant" ? { type: "activity", session: e.session, assistant: true } : { type: "activity", session: e.session }]
    case "assistantError":
      return [{ type: "error", session: e.session, error: e.error, model: e.model }]
    case "part": {
      const activity: EngineEvent = { type: "activity", session: e.session }
      return e.signal === "output" ? [{ type: "output", session: e.session }, activity] : [activity]
    }
    case "retry":
      return [{ type: "retry", session: e.session, message: e.message, next: e.next, provider: e.provider }]
    case "busy":
    case "idle":
      return [{ type: e.type, session: e.session }]
    case "sessionError":
      return e.error === undefined ? NONE : [{ type: "error", session: e.session, error: e.error.copy }]
    case "question":
    case "permission":
      return [{ type: "ask", session: e.session, id: e.id }]
    case "answered":
      return [{ type: "answered", session: e.session, id: e.id ?? "*" }]
    default:
      return NONE
  }
}

export interface BusServices {
  readonly engine: PoolEngineService
  readonly notifications: NotifyEngineService
  readonly permitGate: PermitGateService
  readonly failures: FailureReadsService
}

export const busHooks = (r: Runner, s: BusServices): Parts => {
  /** The events applied in order, each retry after the failure read of its session. */
  const applyAll = (events: ReadonlyArray<EngineEvent>) => {
    const apply = Effect.forEach(events, s.engine.apply)
    return events.some((e) => e.type === "retry")
      ? Effect.zipRight(
          Effect.forEach(events, (e) => (e.type === "retry" ? s.failures.awaited(e.session) : Effect.void), { discard: true }),
          apply
        )
      : apply
  }
  return {
    event: async (input) => {
      try {
        // decoded once; each machine takes its own events from it
        const bus = decodeBusEvent(field(input, "event"))
        // the pool engine first (a limit's cooldown is written before anything else is done), then the
        // notification decision, started in the same turn: it is synchronous, so concurrent events keep their order
        const events = engineEventsOf(bus)
        const engineRun = events.length > 0 ? r.run(applyAll(events), "event") : undefined
        const inputs = notifyInputsOf(bus)
        const notified = inputs.length > 0 ? r.run(Effect.forEach(inputs, s.notifications.apply, { discard: true }), "notification") : undefined
        if (engineRun !== undefined) {
          await engineRun
          // an abort or error of a session ends its permit waits at once and releases what it holds
          for (const e of events) if (e.type === "error") void r.run(s.permitGate.sessionEnded(e.session), "heavy-work permit")
        }
        await notified
      } catch {
        // never escapes
      }
    }
  }
}
