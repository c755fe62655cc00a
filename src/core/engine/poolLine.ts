/**
 * The pool (SPEC §4): the slots resolved from the pool sources, with the reaper's timing and the
 * fallback models, become the machine's `pool` line; the sources' warnings are logged.
 */
import { local, type Handlers } from "./turn.js"

export const poolHandlers: Handlers<"pool"> = {
  pool: local((turn, event) => {
    turn.set("origin", event.origin)
    turn.set("poolWarnings", event.warnings)
    for (const w of event.warnings) turn.log("warn", w)
    const t = turn.state.timing
    turn.apply({
      at: turn.at,
      type: "pool",
      slots: event.slots.map((s) => ({ model: s.model, weight: s.weight })),
      ...(event.slots.length > 4 ? { maxSlots: event.slots.length } : {}),
      hangMinAgeMs: t.hangMinAgeMs,
      hangSilenceMs: t.hangSilenceMs,
      ...(event.fallbacks === undefined || event.fallbacks.length === 0 ? {} : { fallbacks: event.fallbacks })
    })
  })
}
