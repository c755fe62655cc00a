/** Signals (SPEC §7): limit errors and retry statuses, classified, cooled, and the pooled session stopped. */
import { Clock, Effect } from "effect"
import type { CooldownTable } from "../core/cooldown.js"
import { decideLimit, decideRetry, type SignalDecision } from "../core/signals.js"
import type { Context } from "./context.js"
import { SIGNAL_DEDUPE_MS } from "./state.js"

export const makeSignals = (ctx: Context, release: (key: string, ok: boolean) => Effect.Effect<void>) => {
  const { state, trace, cool, oneTimeWarnings, liveTarget, abortClaim } = ctx
  /** A classified signal on a session (SPEC §7.8): cool, then abort a pooled target, release on success. */
  const signal = (session: string | undefined, decide: (table: CooldownTable, now: number) => SignalDecision, text: string, record: Record<string, unknown>) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      if (session !== undefined) {
        const dedupeKey = `${session}\u0000${text}`
        const last = state.signals.get(dedupeKey)
        if (last !== undefined && now - last < SIGNAL_DEDUPE_MS) return
        state.signals.set(dedupeKey, now)
      }
      const target = session === undefined ? undefined : liveTarget(session, now)
      let decision: SignalDecision | undefined
      yield* cool((table) => {
        decision = decide(table, now)
        return decision._tag === "Cool" ? decision.plan : undefined
      }, now)
      if (decision === undefined || decision._tag === "Ignore") {
        yield* trace.input({ at: now, ...record } as { at: number; type: string })
        return
      }
      yield* oneTimeWarnings(decision, text, now)
      if (target === undefined) {
        yield* trace.input({ at: now, ...record } as { at: number; type: string })
        return
      }
      state.signalled.add(target.key)
      const ok = yield* abortClaim(target, "signal", decision.cls)
      yield* trace.input({ at: now, ...record, ...(ok ? {} : { abort: "fail" }) } as { at: number; type: string })
    })

  const onError = (session: string, error: unknown, model: string | undefined) =>
    Effect.gen(function* () {
      const e = (typeof error === "object" && error !== null ? error : {}) as { name?: unknown; data?: Record<string, unknown> }
      const now = yield* Clock.currentTimeMillis
      if (e.name === "MessageAbortedError") {
        const c = liveTarget(session, now)
        if (c !== undefined && !state.aborting.has(c.key)) yield* release(c.key, false)
        return
      }
      const text = JSON.stringify(error ?? null)
      const status = typeof e.data?.statusCode === "number" ? e.data.statusCode : undefined
      const headers = typeof e.data?.responseHeaders === "object" && e.data.responseHeaders !== null ? (e.data.responseHeaders as Record<string, unknown>) : undefined
      const metadata = e.data?.metadata as { provider?: unknown } | undefined
      const provider = typeof metadata?.provider === "string" ? metadata.provider : undefined
      const target = liveTarget(session, now)
      const attributed = model ?? target?.model
      yield* signal(
        session,
        (table, t) => decideLimit(state.slots, table, { text, status, headers, model: attributed, provider }, t),
        text,
        { type: "limit", text, ...(status === undefined ? {} : { status }), ...(headers === undefined ? {} : { headers }), ...(model === undefined ? {} : { model }), ...(provider === undefined ? {} : { provider }), session }
      )
    })

  const onRetry = (session: string, message: string, next: number, provider: string | undefined) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const target = liveTarget(session, now)
      yield* signal(
        session,
        (table, t) => decideRetry(state.slots, table, { message, next, provider, model: target?.model, pooled: target !== undefined }, t),
        message,
        { type: "retry", session, message, next, ...(provider === undefined ? {} : { provider }) }
      )
    })

  return { onError, onRetry }
}
