/**
 * The plugin's heavy-command gate over the permits port (issue 21). A call that must wait is an `ask`
 * of its session to the pool engine while it waits (its claim is blocked, not hung; the answer is
 * activity, so the hang clock starts again from the grant). An abort or error of the session ends the
 * wait at once through a Deferred (opencode gives the hook no signal); the request is cancelled and the
 * command never runs. The layer's finalizer (dispose) cancels every wait and releases every permit.
 */
import { Deferred, Effect, Layer, Ref } from "effect"
import { waitedLine } from "../../core/permits/waited.js"
import { AppLog, needsLog } from "../../services/opencode/AppLog.js"
import { PermitGate, type HeavyCall } from "../../services/permits/PermitGate.js"
import { Permits, type PermitTicket } from "../../services/permits/Permits.js"
import { PoolEngine } from "../../services/pool/PoolEngine.js"
import { StateDir } from "../../services/state/StateDir.js"
import { pinLogs, pinned } from "../opencode/LoggerAppLog.js"
import { traced } from "../hotPath.js"

interface Entry {
  readonly session: string
  readonly ticket: PermitTicket
  /** Completed when the session ends while the call waits. */
  readonly ended: Deferred.Deferred<void>
  readonly held: boolean
  readonly waited?: { readonly ms: number; readonly before: number } | undefined
}

const keyOf = (session: string, call: string): string => `${session}\u0000${call}`
const askId = (ticket: PermitTicket): string => `permit:${ticket.id}`

export const PermitGateShell: Layer.Layer<PermitGate, never, Permits | PoolEngine | StateDir | AppLog> = Layer.scoped(
  PermitGate,
  Effect.gen(function* () {
    const permits = yield* Permits
    const engine = yield* PoolEngine
    const dir = yield* StateDir
    yield* needsLog
    const pin = yield* pinLogs
    const calls = yield* Ref.make(new Map<string, Entry>())

    const forget = (key: string) => Ref.update(calls, (m) => {
      const next = new Map(m)
      next.delete(key)
      return next
    })
    const put = (key: string, e: Entry) => Ref.update(calls, (m) => new Map(m).set(key, e))

    /** Ends an entry: a held permit is released, a queued request cancelled. */
    const end = (e: Entry) => (e.held ? permits.release(e.ticket) : permits.cancel(e.ticket, "dispose")).pipe(Effect.asVoid)

    yield* Effect.addFinalizer(() =>
      Effect.gen(function* () {
        const all = yield* Ref.get(calls)
        yield* Effect.forEach(all.values(), (e) => Effect.zipRight(Deferred.succeed(e.ended, undefined), end(e)), { discard: true })
      })
    )

    const before = traced("PermitGate.before")(function* (call: HeavyCall) {
      const key = keyOf(call.session, call.call)
      const holder = { host: dir.host, pid: dir.pid, startToken: dir.startTime, session: call.session, via: "plugin" as const }
      const { ticket, answer } = yield* permits.request({ budget: call.budget, weight: call.weight, reason: call.command, holder })
      const ended = yield* Deferred.make<void>()
      if (answer.state === "granted") {
        yield* put(key, { session: call.session, ticket, ended, held: true })
        return "run" as const
      }
      if (answer.state !== "queued") {
        yield* Effect.logWarning(`heavy-work permit for ${call.session}: not asked (${answer.state === "refused" ? answer.reason : answer.state}); the command runs without one`).pipe(Effect.annotateLogs("session", call.session))
        return "run" as const
      }
      yield* put(key, { session: call.session, ticket, ended, held: false })
      yield* Effect.logInfo(`heavy-work permit for ${call.session}: queued at ${answer.position} (${call.budget}, weight ${call.weight}): ${call.command}`).pipe(Effect.annotateLogs("session", call.session))
      yield* engine.apply({ type: "ask", session: call.session, id: askId(ticket) })
      const outcome = yield* Effect.raceFirst(
        permits.wait(ticket),
        Deferred.await(ended).pipe(Effect.as({ state: "ended" as const }))
      ).pipe(Effect.onInterrupt(() => permits.cancel(ticket, "dispose")))
      yield* engine.apply({ type: "answered", session: call.session, id: askId(ticket) })
      if (outcome.state === "granted") {
        yield* put(key, { session: call.session, ticket, ended, held: true, waited: { ms: outcome.waitedMs, before: outcome.before } })
        return "run" as const
      }
      yield* forget(key)
      if (outcome.state === "ended") {
        yield* permits.cancel(ticket, "aborted")
        yield* Effect.logInfo(`heavy-work permit for ${call.session}: wait ended, the session was aborted`).pipe(Effect.annotateLogs("session", call.session))
        return "ended" as const
      }
      yield* Effect.logWarning(`heavy-work permit for ${call.session}: ${outcome.state === "gone" ? `request gone (${outcome.cause})` : "no grant"}; the command runs without one`).pipe(Effect.annotateLogs("session", call.session))
      return "run" as const
    })

    const after = traced("PermitGate.after")(function* (session: string, call: string) {
      const key = keyOf(session, call)
      const e = (yield* Ref.get(calls)).get(key)
      if (e === undefined) return undefined
      yield* forget(key)
      yield* end(e)
      return e.waited === undefined ? undefined : waitedLine(e.ticket.budget, e.waited.ms, e.waited.before)
    })

    const sessionEnded = traced("PermitGate.sessionEnded")(function* (session: string) {
      const all = yield* Ref.get(calls)
      for (const [key, e] of all) {
        if (e.session !== session) continue
        if (e.held) {
          yield* forget(key)
          yield* permits.release(e.ticket)
        } else {
          // the waiting `before` cancels its own request and forgets it
          yield* Deferred.succeed(e.ended, undefined)
        }
      }
    })

    return pinned(pin, { before, after, sessionEnded })
  })
)

