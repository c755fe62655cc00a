/**
 * The live view's "last decisions" (issue 24): the tail of a recorded `<trace>.decisions.jsonl` as one
 * short line per decision, newest last. The recorded lines are formatDecision's JSON (a route's
 * compared loads are not in them), so each type is summarised from its printed fields. Pure; text from
 * the file is made printable by the view.
 */
import { printable } from "../printable.js"
import { isEpochMs } from "../readLimits.js"
import { clockSeconds } from "../time.js"

type Json = Readonly<Record<string, unknown>>

const clock = (at: unknown): string => (isEpochMs(at) ? clockSeconds(at) : "--:--:--")
const str = (v: unknown): string => (typeof v === "string" ? v : typeof v === "number" || typeof v === "boolean" ? String(v) : "?")
const list = (v: unknown): string => (Array.isArray(v) ? v.map(str).join(",") : str(v))

/** The claim's tool-call part (`ses_…:call_7` → `call_7`): the session id is long and the same for siblings. */
const short = (claim: unknown): string => {
  const c = str(claim)
  const i = c.lastIndexOf(":")
  return i >= 0 && i < c.length - 1 ? c.slice(i + 1) : c
}

const summary = (d: Json): string => {
  switch (d.type) {
    case "route":
      return `route ${short(d.claim)} ${str(d.base)} -> ${str(d.agent)} (${str(d.model)}) ${str(d.pass)} pass`
    case "refuse":
      return `refuse ${short(d.claim)} ${str(d.requested)}`
    case "cool":
      return `cool ${list(d.models)} ${str(d.reason)}${typeof d.strike === "number" && d.strike > 0 ? ` strike ${d.strike}` : ""} until ${clock(d.until)}Z`
    case "ignore":
      return `ignore ${str(d.reason)}`
    case "abort":
      return `abort ${short(d.claim)} ${d.ok === true ? "ok" : "failed"}`
    case "release":
      return `release ${short(d.claim)} ${str(d.reason)}${d.cooled === true ? " (cooled)" : ""}`
    case "switch":
      return `switch ${str(d.session)} ${str(d.from)} -> ${str(d.to)}`
    case "model":
      return `model ${str(d.session)} ${str(d.requested)} -> ${str(d.model)}`
    case "status": {
      const next = typeof d.next === "object" && d.next !== null ? (d.next as Json) : {}
      return `status next slot ${str(next.slot)} (${str(next.pass)})`
    }
    case "permit":
      return `permit ${str(d.act)} ${str(d.id)} ${str(d.budget)}`
    case "context_start":
    case "context_skip":
    case "context_done":
      return `${str(d.type).replace("_", " ")}${d.run === undefined ? "" : ` ${str(d.run)}`}${d.outcome === undefined ? "" : ` ${str(d.outcome)}`}${d.reason === undefined ? "" : ` (${str(d.reason)})`}`
    default:
      return str(d.type)
  }
}

/** One recorded decision line as `12:00:03 route call_7 explore -> explore-1 (a/x) first pass`; a line that is not a decision says so. */
export const decisionSummary = (line: string): string => {
  let d: unknown
  try {
    d = JSON.parse(line)
  } catch {
    return printable(`(not a decision: ${line.slice(0, 40)})`)
  }
  if (typeof d !== "object" || d === null || Array.isArray(d) || typeof (d as Json).type !== "string") return printable(`(not a decision: ${line.slice(0, 40)})`)
  return printable(`${clock((d as Json).at)} ${summary(d as Json)}`)
}

/** The last `n` decisions of a file's tail text (its first line may be cut: it is dropped unless the text is the whole file). */
export const recentDecisions = (tail: string, n: number, whole: boolean): ReadonlyArray<string> => {
  const lines = tail.split("\n")
  if (!whole) lines.shift()
  return lines.filter((l) => l.trim() !== "").slice(-n).map(decisionSummary)
}
