/**
 * opencode's event bus: each event decoded once (core/bus/decode.ts); the notification machine takes
 * its inputs first (synchronously decided, so concurrent events keep their order), then the pool engine
 * its events: a retry status after the error body of its session still being read (quota sensing,
 * FAILURE_WAIT_MS at most), each switch to a fallback notified, an abort or error ending the session's
 * permit waits. Never throws.
 */
import { Effect } from "effect"
import { decodeBusEvent } from "../../core/bus/decode.js"
import type { EngineEvent } from "../../core/engine/step.js"
import { field } from "../../core/extract.js"
import type { NotifyEngineService } from "../../services/notify/NotifyEngine.js"
import type { PermitGateService } from "../../services/permits/PermitGate.js"
import type { PoolEngineService } from "../../services/pool/PoolEngine.js"
import type { FailureReadsService } from "../../services/quota/FailureReads.js"
import { engineEventsOf } from "../events.js"
import { notifyInputsOf } from "../notifyEvents.js"
import { announceSwitches } from "./fallback.js"
import type { Parts } from "./merge.js"
import type { Runner } from "./runner.js"

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
        const event = field(input, "event")
        // the notification decision first: it is synchronous, so concurrent events keep their order
        // decoded once; each machine takes its own events from it
        const bus = decodeBusEvent(event)
        const inputs = notifyInputsOf(bus)
        const notified = inputs.length > 0 ? r.run(Effect.forEach(inputs, s.notifications.apply, { discard: true }), "notification") : undefined
        const events = engineEventsOf(bus)
        if (events.length > 0) {
          const applied = await r.run(applyAll(events), "event")
          await announceSwitches(r, s.notifications, applied ?? [])
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
