/**
 * The timeline of a spawn trace (issue 24, `ocpool replay --timeline`): its input lines and the
 * decisions they produced, folded one line at a time into the data `timelineHtml`/`timelineSvg` draw.
 * Streaming: the builder keeps the claims still open, one time per model and the output arrays, so a
 * trace of 100,000 lines costs one pass and no second copy of the trace. Pure: no I/O, no clock.
 *
 * What it draws:
 * - Lanes: one per slot ever seen (pool lines, `--pool`, route decisions), in slot order, labelled
 *   `N. model` with the model the slot had last; then `fallback` (switch and model decisions, and
 *   cooldowns of a model no slot runs: a root session's primary), `quota` (quota input lines),
 *   `context` (context_* decisions) and `refused` (refuse decisions), each only when something is on it.
 * - Bars: one per route decision, on its slot's lane, from the route's `at` to its release's `at`
 *   (`open`, to the trace's last `at`, when the trace ends with the claim held). The outcome, from the
 *   release's reason:
 *   - `done`: `limit` when the model is cooling at the release (`cooled`) and a limit or retry line on
 *     the claim's own bound session cooled its model while it ran (an abort that failed, then the task
 *     ended); otherwise `ok`. A cooldown another claim caused does not make a finished claim `limit`.
 *   - `signal` (the abort a limit or retry line asked for): `limit` when a cooldown other than `hang`
 *     named its model while it ran or its own session's signal cooled it (the machine emits `signal`
 *     only after such a cooldown, so in practice always); otherwise `aborted`. This includes a hang
 *     abort in flight that a signal re-originated (abort-in-flight.jsonl: the machine says `signal`).
 *   - `hung`: `spinning` when a sweep listed the claim as `spinning` (the machine releases a spinning
 *     claim as `hung` with the `hang` cooldown, like a silent one); otherwise `hung`.
 *   - `gave_up` (three failed aborts): `aborted`.
 *   - `failed` (the task failed, or ended while a failed abort was in flight): `failed`.
 *   - `unbound` (no child session bound within its time to live: the work never started): `failed`.
 *   - A claim id spawned again while its claim is held (the machine drops the old claim): `failed`
 *     at the new spawn, said in its explanation.
 * - Cools: one per cool decision and model, shaded on the slot lanes that run that model when the
 *   decision is made (`fallback` when none does), from `at` to `until`, with reason, strike and scope.
 * - Marks: an abort on its claim's lane (`abort` when it succeeded, `abort-failed` when not); switch
 *   and model decisions on `fallback`; quota lines on `quota`; refusals on `refused`; context runs on
 *   `context`.
 * Every bar, cool and mark carries the `--explain` sentences of its decisions (`explainDecision`).
 */
import { entriesFromJson, resolveMaxSlots, validateEntries } from "../pool/pool.js"
import type { QuotaLevel } from "../quota/low.js"
import { isoTime } from "../time.js"
import type { Decision, ReleaseReason } from "../trace/decision.js"
import { explainDecision } from "../trace/format.js"
import type { TraceInput } from "../trace/input.js"
import type { Bar, BarOutcome, Cool, Lane, Mark, Timeline } from "./timelineModel.js"

export interface TimelineBuilder {
  /** One trace line: its decoded input (`undefined` for a blank line) and the decisions it produced, in order. */
  add(input: TraceInput | undefined, decisions: ReadonlyArray<Decision>): void
  /** The timeline so far; claims still held become `open` bars ending at the last `at`. */
  finish(): Timeline
}

export interface TimelineOptions {
  /** `--pool FILE`'s slots, applied before the first line (as the replay does). */
  readonly pool?: ReadonlyArray<{ readonly index: number; readonly model: string }> | undefined
}

/** A claim still held. */
interface OpenClaim {
  readonly claim: string
  readonly lane: string
  readonly start: number
  readonly base: string
  readonly agent: string
  readonly model: string
  readonly pass: string
  session: string | undefined
  readonly explain: Array<string>
  /** Listed as `spinning` by a sweep. */
  spinning: boolean
  /** A limit or retry line on its own session cooled its model. */
  signalled: boolean
  /** Its position in `bars`. */
  readonly index: number
}

const SPECIAL_LANES: ReadonlyArray<{ readonly id: Lane["kind"] }> = [{ id: "fallback" }, { id: "quota" }, { id: "context" }, { id: "refused" }]

/** How a released claim ended (rules in the module comment). */
export const barOutcome = (
  reason: ReleaseReason,
  facts: { readonly cooled: boolean; readonly signalled: boolean; readonly limitCooled: boolean; readonly spinning: boolean }
): BarOutcome => {
  switch (reason) {
    case "done":
      return facts.cooled && facts.signalled ? "limit" : "ok"
    case "signal":
      return facts.signalled || facts.limitCooled ? "limit" : "aborted"
    case "hung":
      return facts.spinning ? "spinning" : "hung"
    case "gave_up":
      return "aborted"
    case "failed":
    case "unbound":
      return "failed"
  }
}

/** `requests 3/100`, `tokens 1200` (no limit known). */
const levelText = (name: string, level: QuotaLevel | undefined): string | undefined =>
  level === undefined ? undefined : `${name} ${level.remaining}${level.limit === undefined ? "" : `/${level.limit}`}`

const levelSentence = (name: string, level: QuotaLevel | undefined): string | undefined =>
  level === undefined
    ? undefined
    : `${name}: ${level.remaining}${level.limit === undefined ? "" : ` of ${level.limit}`} left${level.resetAt === undefined ? "" : ` (resets ${isoTime(level.resetAt)})`}`

const contextLabel = (d: Extract<Decision, { type: "context_start" | "context_skip" | "context_done" }>): string => {
  switch (d.type) {
    case "context_start":
      return `${d.kind} ${d.run}`
    case "context_skip":
      return `skip (${d.reason})`
    case "context_done":
      return `${d.run} ${d.outcome}`
  }
}

const barOf = (c: OpenClaim, endAt: number, outcome: BarOutcome): Bar => ({
  claim: c.claim,
  lane: c.lane,
  start: c.start,
  end: Math.max(c.start, endAt),
  outcome,
  base: c.base,
  agent: c.agent,
  model: c.model,
  pass: c.pass,
  ...(c.session === undefined ? {} : { session: c.session }),
  explain: c.explain.join("\n")
})

/** A streaming timeline of one trace; `title` is shown as given (the trace's file name). */
export const timelineBuilder = (title: string, options: TimelineOptions = {}): TimelineBuilder => {
  let lines = 0
  let decisionCount = 0
  let start: number | undefined
  let end: number | undefined
  /** Each slot's model now (the last pool line's slots; a route confirms its slot). */
  let slotModels = new Map<number, string>()
  /** Every slot ever seen, with the model it had last: the lanes. */
  const laneModels = new Map<number, string>()
  const used = new Set<Lane["kind"]>()
  const open = new Map<string, OpenClaim>()
  /** The bound session of each open claim, for signals on it. */
  const bySession = new Map<string, OpenClaim>()
  /** The last time a cooldown other than `hang` named each model. */
  const lastLimitCool = new Map<string, number>()
  const bars: Array<Bar | undefined> = []
  const cools: Array<Cool> = []
  const marks: Array<Mark> = []

  const seen = (at: number): void => {
    if (start === undefined || at < start) start = at
    if (end === undefined || at > end) end = at
  }

  const setSlots = (slots: ReadonlyArray<{ readonly index: number; readonly model: string }>): void => {
    slotModels = new Map()
    for (const s of slots) {
      slotModels.set(s.index, s.model)
      laneModels.set(s.index, s.model)
    }
  }
  if (options.pool !== undefined) setSlots(options.pool)

  const close = (c: OpenClaim, endAt: number, outcome: BarOutcome): void => {
    open.delete(c.claim)
    if (c.session !== undefined && bySession.get(c.session) === c) bySession.delete(c.session)
    bars[c.index] = barOf(c, endAt, outcome)
  }

  const mark = (lane: Lane["kind"] | string, kind: Mark["kind"], at: number, label: string, explain: string): void => {
    if (lane === "fallback" || lane === "quota" || lane === "context" || lane === "refused") used.add(lane)
    marks.push({ at, lane, kind, label, explain })
  }

  const decide = (d: Decision): void => {
    switch (d.type) {
      case "route": {
        const prior = open.get(d.claim)
        if (prior !== undefined) {
          prior.explain.push(`${d.claim}: spawned again while held; the earlier claim is dropped.`)
          close(prior, d.at, "failed")
        }
        slotModels.set(d.slot, d.model)
        laneModels.set(d.slot, d.model)
        const c: OpenClaim = {
          claim: d.claim,
          lane: `slot-${d.slot}`,
          start: d.at,
          base: d.base,
          agent: d.agent,
          model: d.model,
          pass: d.pass,
          session: undefined,
          explain: [explainDecision(d)],
          spinning: false,
          signalled: false,
          index: bars.length
        }
        bars.push(undefined)
        open.set(d.claim, c)
        return
      }
      case "release": {
        const c = open.get(d.claim)
        if (c === undefined) return
        c.explain.push(explainDecision(d))
        const limitAt = lastLimitCool.get(c.model)
        close(c, d.at, barOutcome(d.reason, { cooled: d.cooled, signalled: c.signalled, limitCooled: limitAt !== undefined && limitAt >= c.start, spinning: c.spinning }))
        return
      }
      case "abort": {
        const c = open.get(d.claim)
        const explain = explainDecision(d)
        if (c === undefined) return
        c.explain.push(explain)
        mark(c.lane, d.ok ? "abort" : "abort-failed", d.at, d.ok ? "abort" : "abort failed", explain)
        return
      }
      case "cool": {
        const explain = explainDecision(d)
        for (const model of d.models) {
          if (d.reason !== "hang") lastLimitCool.set(model, d.at)
          const lanes: Array<string> = []
          for (const [slot, m] of slotModels) if (m === model) lanes.push(`slot-${slot}`)
          if (lanes.length === 0) {
            lanes.push("fallback")
            used.add("fallback")
          }
          cools.push({ model, lanes, start: d.at, end: Math.max(d.at, d.until), reason: d.reason, strike: d.strike, scope: d.scope, explain })
        }
        return
      }
      case "switch":
        return mark("fallback", "switch", d.at, `${d.from} -> ${d.to}`, explainDecision(d))
      case "model":
        return mark("fallback", "model", d.at, `${d.requested} -> ${d.model}`, explainDecision(d))
      case "refuse":
        return mark("refused", "refuse", d.at, d.requested, explainDecision(d))
      case "context_start":
        return mark("context", "context-start", d.at, contextLabel(d), explainDecision(d))
      case "context_skip":
        return mark("context", "context-skip", d.at, contextLabel(d), explainDecision(d))
      case "context_done":
        return mark("context", "context-done", d.at, contextLabel(d), explainDecision(d))
      case "ignore":
      case "status":
      case "permit":
        return
    }
  }

  return {
    add(input, decisions) {
      lines++
      if (input !== undefined) {
        seen(input.at)
        switch (input.type) {
          case "pool": {
            // only valid pool lines reach here (the machine refuses the others): the same reading as the machine's
            const got = entriesFromJson({ slots: input.slots })
            if (!("unusable" in got)) {
              const result = validateEntries(got.entries, resolveMaxSlots(input.maxSlots).maxSlots)
              if (result._tag === "Usable") setSlots(result.slots)
            }
            break
          }
          case "bind": {
            const c = open.get(input.claim)
            if (c !== undefined) {
              if (c.session !== undefined && bySession.get(c.session) === c) bySession.delete(c.session)
              c.session = input.session
              bySession.set(input.session, c)
            }
            break
          }
          case "sweep":
            if (input.spinning !== undefined) {
              for (const key of input.spinning) {
                const c = open.get(key)
                if (c !== undefined) c.spinning = true
              }
            }
            break
          case "limit":
          case "retry": {
            const c = input.session === undefined ? undefined : bySession.get(input.session)
            if (c !== undefined && decisions.some((d) => d.type === "cool" && d.models.includes(c.model))) c.signalled = true
            break
          }
          default:
            break
        }
      }
      for (const d of decisions) {
        decisionCount++
        seen(d.at)
        decide(d)
      }
      if (input !== undefined && input.type === "quota") {
        const label = [levelText("requests", input.requests), levelText("tokens", input.tokens)].filter((x) => x !== undefined).join(", ")
        const stated = [levelSentence("requests", input.requests), levelSentence("tokens", input.tokens)].filter((x) => x !== undefined)
        const explain = [
          `quota of ${input.model}${stated.length === 0 ? ": nothing stated" : `: ${stated.join("; ")}`}.`,
          ...decisions.filter((d) => d.type === "cool").map(explainDecision)
        ].join("\n")
        mark("quota", "quota", input.at, label === "" ? input.model : `${input.model} ${label}`, explain)
      }
    },
    finish() {
      const last = end ?? 0
      const finished = bars.slice()
      for (const c of open.values()) finished[c.index] = barOf(c, last, "open")
      const lanes: Array<Lane> = [...laneModels.entries()]
        .sort(([a], [b]) => a - b)
        .map(([slot, model]) => ({ id: `slot-${slot}`, label: `${slot}. ${model}`, kind: "slot", slot }))
      for (const { id } of SPECIAL_LANES) if (used.has(id)) lanes.push({ id, label: id, kind: id })
      // every bar is closed or open, so none is left undefined
      return { title, start: start ?? 0, end: last, lanes, bars: finished as Array<Bar>, cools: [...cools], marks: [...marks], lines, decisions: decisionCount }
    }
  }
}
