/**
 * The notification decision per opencode event (`npm run bench:notify [-- --events N --sessions S --rounds R]`).
 *
 * The plugin runs it on every bus event, so it must stay far below a millisecond: the target is
 * ≤ 0.05 ms at p99 over what an empty handler costs in the same run. A generated stream shaped like a
 * busy opencode (mostly `message.part.updated`, then status changes, session updates, asks and
 * replies, user messages) over S sessions is fed through exactly what the event hook does first:
 * `notifyInputs(event)` then `notifyStep` for each input. Each event is timed alone with
 * `process.hrtime.bigint()`; the empty handler (reading the event's type) is timed the same way, so the
 * timer's own cost is in both.
 */
import { initialNotifyState, notifyStep, type NotifyState } from "../src/core/notify/machine.js"
import { notifyInputs } from "../src/plugin/notifyEvents.js"
import { arg, rng } from "./common.js"

const EVENTS = arg("events", 200_000)
const SESSIONS = arg("sessions", 2_000)
const ROUNDS = arg("rounds", 3)
const TARGET_MS = 0.05
const CONFIG = { sounds: true, fade: true }

const stream = (): Array<{ readonly type: string; readonly properties: Record<string, unknown> }> => {
  const rand = rng(11)
  const out: Array<{ readonly type: string; readonly properties: Record<string, unknown> }> = []
  const id = (i: number) => `ses_${i.toString(36).padStart(8, "0")}`
  for (let i = 0; i < SESSIONS; i++) {
    const parentID = i % 4 === 0 ? undefined : id(i - (i % 4))
    out.push({ type: "session.created", properties: { sessionID: id(i), info: { id: id(i), title: `Session ${i} — some work`, ...(parentID === undefined ? {} : { parentID, agent: "explore-1" }), time: { created: i } } } })
  }
  let ask = 0
  while (out.length < EVENTS) {
    const s = id(Math.floor(rand() * SESSIONS))
    const r = rand()
    if (r < 0.7) out.push({ type: "message.part.updated", properties: { part: { id: "prt", sessionID: s, messageID: "msg", type: "text", text: "…" } } })
    else if (r < 0.8) out.push({ type: "session.status", properties: { sessionID: s, status: { type: "busy" } } })
    else if (r < 0.86) out.push({ type: "session.idle", properties: { sessionID: s } })
    else if (r < 0.93) out.push({ type: "session.updated", properties: { sessionID: s, info: { id: s, title: "Updated title", time: { created: 1, updated: out.length } } } })
    else if (r < 0.95) out.push({ type: "message.updated", properties: { sessionID: s, info: { id: "msg", role: "user", sessionID: s } } })
    else if (r < 0.97) out.push({ type: "question.asked", properties: { id: `que_${ask++}`, sessionID: s, questions: [{ question: "Should the migration be reversible?", header: "h", options: [] }] } })
    else if (r < 0.99) out.push({ type: "question.replied", properties: { sessionID: s, requestID: `que_${Math.max(0, ask - 1)}`, answers: [["A"]] } })
    else out.push({ type: "session.error", properties: { sessionID: s, error: { name: "APIError", data: { message: "Rate limit exceeded\nmore" } } } })
  }
  return out
}

const percentile = (sorted: Float64Array, p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!

const events = stream()

/** Per-event times (ms) of `handle` over the whole stream. */
const measure = (handle: (e: unknown, at: number) => void): Float64Array => {
  const times = new Float64Array(events.length)
  for (let i = 0; i < events.length; i++) {
    const e = events[i]
    const t0 = process.hrtime.bigint()
    handle(e, 1_796_115_600_000 + i * 20)
    times[i] = Number(process.hrtime.bigint() - t0) / 1e6
  }
  return times.sort()
}

let sink = 0
const empty = (e: unknown) => {
  sink += (e as { type: string }).type.length
}

let state: NotifyState = initialNotifyState
let effects = 0
const decide = (e: unknown, at: number) => {
  for (const input of notifyInputs(e)) {
    const step = notifyStep(state, input, at, CONFIG)
    state = step.state
    effects += step.effects.length
  }
}

console.log(`notification decision: ${events.length} events over ${SESSIONS} sessions, ${ROUNDS} rounds (target: p99 ≤ empty p99 + ${TARGET_MS} ms)`)
let worst = 0
for (let round = 1; round <= ROUNDS; round++) {
  state = initialNotifyState
  const base = measure(empty)
  const real = measure(decide)
  const over = percentile(real, 0.99) - percentile(base, 0.99)
  worst = Math.max(worst, over)
  console.log(
    `round ${round}: empty p50 ${percentile(base, 0.5).toFixed(4)} p99 ${percentile(base, 0.99).toFixed(4)} ms | decision p50 ${percentile(real, 0.5).toFixed(4)} p99 ${percentile(real, 0.99).toFixed(4)} p99.9 ${percentile(real, 0.999).toFixed(4)} ms | p99 over empty ${over.toFixed(4)} ms (${(over / TARGET_MS).toFixed(2)}× the budget)`
  )
}
console.log(`effects ${effects}, sink ${sink}`)
console.log(worst <= TARGET_MS ? `ok: worst p99 over empty ${worst.toFixed(4)} ms ≤ ${TARGET_MS} ms` : `MISSED: worst p99 over empty ${worst.toFixed(4)} ms > ${TARGET_MS} ms`)
process.exitCode = worst <= TARGET_MS ? 0 : 1
