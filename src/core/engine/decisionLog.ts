/**
 * The engine's log lines for the machine's decisions (routes, refusals, cooling, switches, failed
 * aborts, reaped claims), times as core/time.ts writes them. Pure text: it formats and decides nothing (what a decision makes the shell
 * write or do is collected by the turn, turn.ts); the lines go out with the step's outcome.
 */
import type { Claim } from "../pool/claims.js"
import { refusalLine } from "../spawn/handNamed.js"
import { getClaim } from "../trace/claimTable.js"
import type { Decision } from "../trace/decision.js"
import type { TraceState } from "../trace/machine.js"
import { clockTime, isoTime, wholeSeconds } from "../time.js"
import { logAbout, type EngineEvent, type LogAnnotations, type LogLevel, type LogLine } from "./events.js"
import { slotsOf, type EngineState } from "./state.js"

/** What a decision's line reads besides the decision: the engine state after the line, the turn's time, why an abort failed. */
export interface DecisionContext {
  readonly state: EngineState
  readonly at: number
  readonly abortReason: string | undefined
}

/** The log line and notification text of a switch (issue 12). */
export const switchText = (from: string, to: string, until: number): string => `Switched to ${to}: ${from} hit its quota, resets ${clockTime(until)}`

const reapLine = (turn: DecisionContext, c: Claim, outcome: "aborted" | "no_first_token" | "unbound" | "gave_up"): string => {
  const last = c.targetSession === null ? undefined : turn.state.sampled.get(c.targetSession)
  const silence = c.targetSession === null ? "-" : wholeSeconds(turn.at - Math.max(last ?? c.acquiredAt, c.acquiredAt))
  return `reaped claim=${c.key} session=${c.targetSession ?? "-"} model=${c.model} age=${wholeSeconds(turn.at - c.acquiredAt)} silence=${silence} outcome=${outcome}`
}

/** The log lines of one decision of the line just applied (`before`: the machine's state before it). */
export const decisionLines = (turn: DecisionContext, d: Decision, before: TraceState): ReadonlyArray<LogLine> => {
  const lines: Array<LogLine> = []
  const log = (level: LogLevel, message: string, annotations?: LogAnnotations) => void lines.push(annotations === undefined ? { level, message } : { level, message, annotations })
  logInto(log, turn, d, before)
  return lines
}

/** The annotations of a line about claim `c`: its key, its pooled session once bound, its model. */
const aboutClaim = (c: Claim): LogAnnotations => logAbout(c.key, c.targetSession, c.model)

const logInto = (log: (level: LogLevel, message: string, annotations?: LogAnnotations) => void, turn: DecisionContext, d: Decision, before: TraceState): void => {
  const machine = turn.state.machine
  switch (d.type) {
    case "route": {
      const slots = slotsOf(turn.state)
      const pos = slots.findIndex((s) => s.index === d.slot)
      log("info", `routed ${d.base} -> ${d.agent} slot=${d.slot} model=${d.model} load=${d.loads[pos]! + 1}/${2 * (slots[pos]?.weight ?? 0)} pass=${d.pass}`, logAbout(d.claim, undefined, d.model))
      return
    }
    case "refuse":
      log("warn", refusalLine(d), logAbout(d.claim, undefined, undefined))
      return
    case "cool":
      log("info", `cooling ${d.models.join(",")} ${d.reason} strike ${d.strike} for ${wholeSeconds(d.until - d.at)} until ${isoTime(d.until)}`, logAbout(undefined, undefined, d.models.join(",")))
      return
    case "switch":
      log("info", switchText(d.from, d.to, d.until), logAbout(undefined, d.session, d.to))
      return
    case "model":
      log("info", `session ${d.session}: message on ${d.requested} runs on ${d.model} while ${d.requested} cools`, logAbout(undefined, d.session, d.model))
      return
    case "abort": {
      if (d.ok) return
      const c = getClaim(machine.table, d.claim)
      if (c !== undefined) log("warn", `abort failed claim=${d.claim} session=${d.session} attempt=${c.abortAttempts}/3: ${turn.abortReason ?? "failed"}`, logAbout(d.claim, d.session, c.model))
      return
    }
    case "release": {
      const c = getClaim(before.table, d.claim)
      if (c === undefined) return
      // a claim aborted for its missing first token is released as `hung` too; its line says why
      if (d.reason === "hung") log("warn", reapLine(turn, c, c.abortOrigin === "first_token" ? "no_first_token" : "aborted"), aboutClaim(c))
      else if (d.reason === "unbound") log("warn", reapLine(turn, c, "unbound"), aboutClaim(c))
      else if (d.reason === "gave_up") {
        log("error", reapLine(turn, c, "gave_up"), aboutClaim(c))
        log("error", `abort gave up after 3 attempts: session ${c.targetSession ?? "-"} is still running; stop it by hand`, aboutClaim(c))
      } else if (d.reason === "signal") log("info", `released claim=${d.claim} after ${turn.state.signalled.get(d.claim) ?? "signal"}`, aboutClaim(c))
      return
    }
    case "context_start":
      log("info", `context map: ${d.kind} ${d.run} starts (${d.paths.length + d.more} ${d.paths.length + d.more === 1 ? "path" : "paths"}${d.requested ? ", asked for" : ""}${d.condense ? ", over budget: asked to condense" : ""})`)
      return
    case "context_skip":
      log("debug", d.reason === "in_flight" ? `context map: ${d.run ?? "a run"} still in flight; ${d.pending} pending` : `context map: next run after ${isoTime(d.until ?? d.at)}; ${d.pending} pending`)
      return
    case "context_done":
      if (d.outcome === "ok") log("info", `context map: ${d.run} updated the map`)
      else if (d.outcome === "unchanged") log("warn", `context map: ${d.run} ended without changing the map (no map file was written)`)
      else log("warn", `context map: ${d.run} failed${d.reason === undefined ? "" : ` (${d.reason})`}; ${d.requeued} ${d.requeued === 1 ? "path goes" : "paths go"} back in the queue`)
      return
    default:
      return
  }
}

/** The annotations of that line: the spawn's session, or the claim whose abort outcome failed. */
export const failureAbout = (event: EngineEvent): LogAnnotations =>
  event.type === "spawn" ? logAbout(undefined, event.owner, undefined) : event.type === "aborted" ? logAbout(event.claim, undefined, undefined) : {}

/** The log line's start when applying an event fails unexpectedly (docs/OPERATIONS.md). */
export const failureLabel = (event: EngineEvent): string =>
  event.type === "spawn" ? "routing failed, spawn unchanged" : event.type === "sweep" || event.type === "aborted" ? "reaper failed" : `${event.type} failed`
