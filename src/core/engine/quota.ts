/**
 * Quota sensing (issue 12, US-48): a provider response's rate-limit headers become the quota record
 * every process reads (the shell writes it, throttled) and, for a slot's model, a `quota` line; the
 * machine cools the model as `quota_low` when a stated quota is at the reserve, which writes the
 * shared cooldowns. Coaching reads the records (coach.ts).
 */
import { QUOTA_RESERVE_DEFAULT } from "../constants.js"
import { parseRateLimitHeaders, type QuotaDimension } from "../quota/headers.js"
import { isLow, type QuotaLevel } from "../quota/low.js"
import { recordOf } from "../quota/record.js"
import { claimsTargeting } from "../trace/claimTable.js"
import type { EngineEvent } from "./events.js"
import { quotaPlan } from "./sharedLines.js"
import { slotsOf, type EngineState } from "./state.js"
import { NONE, TRANSACT, type Handlers } from "./turn.js"

/** A parsed dimension as a line's level (absent fields left out, so the recorded line stays small). */
const levelOf = (d: QuotaDimension): QuotaLevel => ({
  remaining: d.remaining,
  ...(d.limit === undefined ? {} : { limit: d.limit }),
  ...(d.resetAt === undefined ? {} : { resetAt: d.resetAt })
})

/**
 * Whether a response may cool its model: a slot's model (the event's, else any claim's targeting the
 * session, as the live one depends on the time) with a stated dimension at the reserve. Whether a
 * dimension is low reads its remaining and limit only, never the time.
 */
const mayCool = (state: EngineState, event: Extract<EngineEvent, { type: "response" }>): boolean => {
  const slots = slotsOf(state)
  if (slots.length === 0) return false
  const models = event.model !== undefined ? [event.model] : event.session === undefined ? [] : claimsTargeting(state.machine.table, event.session).map((c) => c.model)
  if (!models.some((m) => slots.some((s) => s.model === m))) return false
  const observation = parseRateLimitHeaders(event.headers, state.machine.lastAt ?? 0)
  if (observation === undefined) return false
  return [observation.requests, observation.tokens].some((d) => d !== undefined && isLow(d, event.reserve))
}

export const quotaHandlers: Handlers<"response"> = {
  response: {
    needs: (state, event) => (mayCool(state, event) ? TRANSACT : NONE),
    run: (turn, event) => {
      const at = turn.at
      const observation = parseRateLimitHeaders(event.headers, at)
      if (observation === undefined || (observation.requests === undefined && observation.tokens === undefined)) return
      const model = event.model ?? (event.session === undefined ? undefined : turn.liveTarget(event.session)?.model)
      if (model === undefined) return
      turn.observed = { model, observation }
      const record = recordOf(model, observation, at)
      if (record !== undefined) turn.put("quotas", model, record)
      // only a slot's model can cool; other models' quota is only recorded
      if (!slotsOf(turn.state).some((s) => s.model === model)) return
      const line = {
        at,
        type: "quota",
        model,
        ...(observation.requests === undefined ? {} : { requests: levelOf(observation.requests) }),
        ...(observation.tokens === undefined ? {} : { tokens: levelOf(observation.tokens) }),
        ...(event.reserve === QUOTA_RESERVE_DEFAULT ? {} : { reserve: event.reserve })
      } as const
      turn.apply(quotaPlan(line) === undefined ? line : { ...line, ...turn.shared() })
    }
  }
}
