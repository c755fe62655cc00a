/**
 * Coaching (issue 12, US-49): a GO / THROTTLE / STOP line for a root session's system prompt, from the
 * measured quota of its model and the state of the pool. Pure: the records, the cooling table and
 * `now` come in; the decision, its one-line text and its class (when to say it again) go out.
 */
import { isCooling, type CooldownTable } from "../pool/cooldown.js"
import type { Slot } from "../pool/pool.js"
import { isStale, type QuotaFigures, type QuotaRecord } from "./record.js"
import { clockTime as clock } from "../time.js"

export type Verdict = "GO" | "THROTTLE" | "STOP"

/** Below this fraction of its limit left, the root's model is running low: THROTTLE. */
export const COACH_LOW_FRACTION = 0.2

export interface CoachInput {
  /** `provider/model` the root session's request goes to. */
  readonly model: string
  /** The model's latest quota record, if any response stated one. */
  readonly quota: QuotaRecord | undefined
  readonly slots: ReadonlyArray<Slot>
  readonly cooldowns: CooldownTable
  /** Whether a fallback model that is not cooling is left for the root (none before fallback models exist). */
  readonly fallbackLeft: boolean
  readonly now: number
}

export interface Coaching {
  readonly verdict: Verdict
  /** The system line. */
  readonly line: string
  /** Changes when the verdict or a figure changes class (a tenth of the limit, the cooling count): say it again then. */
  readonly key: string
}

interface Dim {
  readonly name: "requests" | "tokens"
  readonly figures: QuotaFigures
}

const fraction = (f: QuotaFigures): number | undefined => (f.limit === undefined ? undefined : f.remaining / f.limit)

/** The tightest stated dimension: the smallest fraction left, else the smallest count. */
const tightest = (r: QuotaRecord | undefined, now: number): Dim | undefined => {
  if (r === undefined || isStale(r, now)) return undefined
  const dims: Array<Dim> = []
  if (r.requests !== undefined) dims.push({ name: "requests", figures: r.requests })
  if (r.tokens !== undefined) dims.push({ name: "tokens", figures: r.tokens })
  dims.sort((a, b) => (fraction(a.figures) ?? (a.figures.remaining === 0 ? 0 : 1)) - (fraction(b.figures) ?? (b.figures.remaining === 0 ? 0 : 1)))
  return dims[0]
}


const describeDim = (d: Dim): string => {
  const f = d.figures
  const left = f.limit === undefined ? `${f.remaining} ${d.name} left` : `${f.remaining}/${f.limit} ${d.name} left (${Math.floor((f.remaining * 100) / f.limit)}%)`
  return f.resetAt === undefined ? left : `${left}, resets ${clock(f.resetAt)}`
}

/** GO, THROTTLE or STOP, with the figures it rests on. */
export const coach = (input: CoachInput): Coaching => {
  const dim = tightest(input.quota, input.now)
  const own = input.cooldowns.get(input.model)
  const ownCooling = isCooling(own, input.now)
  const exhausted = ownCooling || (dim !== undefined && dim.figures.remaining === 0)
  const low = dim !== undefined && (fraction(dim.figures) ?? 1) <= COACH_LOW_FRACTION
  const cooling = input.slots.filter((s) => isCooling(input.cooldowns.get(s.model), input.now)).length
  const poolStrained = input.slots.length > 0 && cooling * 2 > input.slots.length
  const verdict: Verdict = exhausted && !input.fallbackLeft ? "STOP" : exhausted || low || poolStrained ? "THROTTLE" : "GO"
  const facts: Array<string> = []
  if (ownCooling && own !== undefined) facts.push(`${input.model} is cooling (${own.reason}) until ${clock(own.until)}`)
  else if (dim !== undefined) facts.push(`${input.model}: ${describeDim(dim)}`)
  else facts.push(`${input.model}: no quota stated`)
  facts.push(`pool: ${cooling} of ${input.slots.length} slot(s) cooling`)
  const advice =
    verdict === "STOP"
      ? "Stop starting new work: finish or save what is in hand and tell the user the quota is spent."
      : verdict === "THROTTLE"
        ? "Keep turns small, batch delegated work, and avoid large reads until the quota recovers."
        : "Work normally; delegate bulk reading to the pooled subagents."
  const band = dim === undefined ? "-" : dim.figures.limit === undefined ? String(Math.min(dim.figures.remaining, 1)) : String(Math.floor((fraction(dim.figures) ?? 0) * 10))
  return {
    verdict,
    line: `opencode-pool quota: ${verdict}. ${facts.join("; ")}. ${advice}`,
    key: `${verdict}|${ownCooling ? "cooling" : band}|${cooling}/${input.slots.length}`
  }
}
