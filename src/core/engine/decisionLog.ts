/**
 * The engine's log lines for the machine's decisions (routes, refusals, cooling, switches, failed
 * aborts, reaped claims) (times as core/time.ts writes them). Pure text; the lines go out with the step's outcome.
 */
import type { Claim } from "../claims.js"
import { refusalLine } from "../spawn/handNamed.js"
import { getClaim } from "../trace/claimTable.js"
import type { Decision } from "../trace/decision.js"
import type { TraceState } from "../trace/machine.js"
import { slotsOf } from "./state.js"
import type { Turn } from "./turn.js"

import { clockTime, isoTime, wholeSeconds } from "../time.js"

/** The log line and notification text of a switch (issue 12). */
export const switchText = (from: string, to: string, until: number): string => `Switched to ${to}: ${from} hit its quota, resets ${clockTime(until)}`

const reapLine = (turn: Turn, c: Claim, outcome: "aborted" | "unbound" | "gave_up"): string => {
  const last = c.targetSession === null ? undefined : turn.state.sampled.get(c.targetSession)
  const silence = c.targetSession === null ? "-" : wholeSeconds(turn.at - Math.max(last ?? c.acquiredAt, c.acquiredAt))
  return `reaped claim=${c.key} session=${c.targetSession ?? "-"} model=${c.model} age=${wholeSeconds(turn.at - c.acquiredAt)} silence=${silence} outcome=${outcome}`
}

/** Logs one decision of the line just applied (`before`: the machine's state before it); a switch is also collected. */
export const logDecision = (turn: Turn, d: Decision, before: TraceState): void => {
  switch (d.type) {
    case "route": {
      const slots = slotsOf(turn.state)
      const pos = slots.findIndex((s) => s.index === d.slot)
      turn.log("info", `routed ${d.base} -> ${d.agent} slot=${d.slot} model=${d.model} load=${d.loads[pos]! + 1}/${2 * (slots[pos]?.weight ?? 0)} pass=${d.pass}`)
      return
    }
    case "refuse":
      turn.log("warn", refusalLine(d))
      return
    case "cool":
      for (const m of d.models) turn.cooled.add(m)
      turn.log("info", `cooling ${d.models.join(",")} ${d.reason} strike ${d.strike} for ${wholeSeconds(d.until - d.at)} until ${isoTime(d.until)}`)
      return
    case "switch": {
      const text = switchText(d.from, d.to, d.until)
      const original = turn.machine.episodes.get(d.session)?.original ?? d.from
      turn.switches.push({ session: d.session, original, from: d.from, to: d.to, via: d.via, agent: turn.state.primaries.get(d.session)?.agent, until: d.until, text })
      // the session's model changes when the "continue" message on the fallback is created (`message`):
      // until then a late report of the same failure still names the original, which switches nothing
      turn.log("info", text)
      return
    }
    case "model":
      turn.log("info", `session ${d.session}: message on ${d.requested} runs on ${d.model} while ${d.requested} cools`)
      return
    case "abort": {
      if (d.ok) return
      const c = getClaim(turn.machine.table, d.claim)
      if (c !== undefined) turn.log("warn", `abort failed claim=${d.claim} session=${d.session} attempt=${c.abortAttempts}/3: ${turn.abortReason ?? "failed"}`)
      return
    }
    case "release": {
      const c = getClaim(before.table, d.claim)
      if (c === undefined) return
      if (d.reason === "hung") turn.log("warn", reapLine(turn, c, "aborted"))
      else if (d.reason === "unbound") turn.log("warn", reapLine(turn, c, "unbound"))
      else if (d.reason === "gave_up") {
        turn.log("error", reapLine(turn, c, "gave_up"))
        turn.log("error", `abort gave up after 3 attempts: session ${c.targetSession ?? "-"} is still running; stop it by hand`)
      } else if (d.reason === "signal") turn.log("info", `released claim=${d.claim} after ${turn.state.signalled.get(d.claim) ?? "signal"}`)
      return
    }
    case "context_start":
      turn.log("info", `context map: ${d.kind} ${d.run} starts (${d.paths.length + d.more} ${d.paths.length + d.more === 1 ? "path" : "paths"}${d.requested ? ", asked for" : ""}${d.condense ? ", over budget: asked to condense" : ""})`)
      return
    case "context_skip":
      turn.log("debug", d.reason === "in_flight" ? `context map: ${d.run ?? "a run"} still in flight; ${d.pending} pending` : `context map: next run after ${isoTime(d.until ?? d.at)}; ${d.pending} pending`)
      return
    case "context_done":
      if (d.outcome === "ok") turn.log("info", `context map: ${d.run} updated the map`)
      else if (d.outcome === "unchanged") turn.log("warn", `context map: ${d.run} ended without changing the map (no map file was written)`)
      else turn.log("warn", `context map: ${d.run} failed${d.reason === undefined ? "" : ` (${d.reason})`}; ${d.requeued} ${d.requeued === 1 ? "path goes" : "paths go"} back in the queue`)
      return
    default:
      return
  }
}
