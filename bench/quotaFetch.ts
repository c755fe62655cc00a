/**
 * The quota-sensing fetch wrapper's overhead per response (`npm run bench:quota [-- --calls N --rounds R --batch B]`).
 *
 * The plugin puts `quotaFetch` on every pooled provider, so every model response passes through it;
 * issue 12's target is ≤ 0.1 ms added at p99 over an unwrapped fetch. The "provider" is a stub: an async
 * function returning one prebuilt `Response` whose headers are a realistic set (content-type, date, a
 * dozen others, the six `x-ratelimit-*`), so the network is not measured, only what the wrapper adds.
 * Each call gets what the AI SDK passes: a URL, and an init with a JSON body whose `"model"` comes first
 * and headers carrying `x-session-affinity`. The wrapper runs exactly as in the plugin: it awaits the
 * stub, reads the rate-limit headers, the model and the session, and calls `report` synchronously (here
 * a sink that counts, never awaiting anything, as the plugin's does).
 *
 * Measured two ways, both with `process.hrtime.bigint()`, the unwrapped and the wrapped stub timed
 * alternately in the same round (so warm-up, GC and CPU frequency hit both alike):
 * - per call: each `await fetch(url, init)` timed alone (the awaited resolution included); the timer's
 *   own cost (printed: "timer pair p50") is in both sides. An unwrapped call is about as cheap as the
 *   timer, a wrapped one several times more; p50/p99/p99.9 of N calls; the budget is checked on p99.
 * - per batch: B calls awaited one after another, timed together, divided by B: the mean per call with
 *   the timer's cost spread out, p50/p99 over the N/B batches (a cross-check of the per-call figures).
 */
import { quotaFetch, type ResponseReport } from "../src/plugin/quotaFetch.js"
import { arg } from "./common.js"

const CALLS = arg("calls", 200_000)
const ROUNDS = arg("rounds", 3)
const BATCH = arg("batch", 100)
const TARGET_MS = 0.1

/** What a busy OpenAI-compatible provider answers with: 14 ordinary headers and the six rate-limit ones. */
const RESPONSE_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ["content-type", "text/event-stream; charset=utf-8"],
  ["date", "Tue, 01 Dec 2026 15:30:00 GMT"],
  ["cache-control", "no-cache, must-revalidate"],
  ["connection", "keep-alive"],
  ["transfer-encoding", "chunked"],
  ["server", "cloudflare"],
  ["cf-ray", "8f1a2b3c4d5e6f70-FRA"],
  ["cf-cache-status", "DYNAMIC"],
  ["strict-transport-security", "max-age=31536000; includeSubDomains; preload"],
  ["x-content-type-options", "nosniff"],
  ["x-request-id", "req_9b2f6c1e4a7d4f0e8c3b5a6d7e8f9012"],
  ["openai-organization", "user-abc123def456"],
  ["openai-processing-ms", "412"],
  ["openai-version", "2020-10-01"],
  ["alt-svc", 'h3=":443"; ma=86400'],
  ["vary", "Origin, Accept-Encoding"],
  ["x-ratelimit-limit-requests", "10000"],
  ["x-ratelimit-limit-tokens", "2000000"],
  ["x-ratelimit-remaining-requests", "9876"],
  ["x-ratelimit-remaining-tokens", "1987654"],
  ["x-ratelimit-reset-requests", "6m0s"],
  ["x-ratelimit-reset-tokens", "20ms"]
]

const response = new Response(null, { status: 200, headers: RESPONSE_HEADERS.map(([k, v]) => [k, v] as [string, string]) })
const stub = async (_input: string | URL | Request, _init?: RequestInit): Promise<Response> => response

const URL_ = "https://opencode.ai/zen/v1/chat/completions"
const BODY = JSON.stringify({
  model: "big-pickle",
  stream: true,
  messages: [
    { role: "system", content: "You are the explore subagent. ".repeat(40) },
    { role: "user", content: "Find where the retry loop decides to give up and list the files involved." }
  ],
  tools: Array.from({ length: 8 }, (_, i) => ({ type: "function", function: { name: `tool${i}`, description: "A tool. ".repeat(20), parameters: { type: "object" } } }))
})
const INIT: RequestInit = {
  method: "POST",
  body: BODY,
  headers: { "content-type": "application/json", authorization: "Bearer not-a-secret", "user-agent": "ai-sdk/openai-compatible", "x-session-affinity": "ses_3f2a1b0c9d8e7f6a5b4c3d2e1f" }
}

let reports = 0
let sink = 0
const report = (r: ResponseReport): void => {
  reports++
  sink += r.session === undefined ? 0 : r.session.length
}
const wrapped = quotaFetch("zen", report, stub)

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>

/** Per-call times (ms) of `calls` awaited calls, sorted. */
const perCall = async (f: Fetch, calls: number): Promise<Float64Array> => {
  const times = new Float64Array(calls)
  for (let i = 0; i < calls; i++) {
    const t0 = process.hrtime.bigint()
    const r = await f(URL_, INIT)
    times[i] = Number(process.hrtime.bigint() - t0) / 1e6
    sink += r.status
  }
  return times.sort()
}

/** Mean time per call (ms) of each batch of `batch` awaited calls, sorted. */
const perBatch = async (f: Fetch, calls: number, batch: number): Promise<Float64Array> => {
  const times = new Float64Array(Math.floor(calls / batch))
  for (let b = 0; b < times.length; b++) {
    const t0 = process.hrtime.bigint()
    for (let i = 0; i < batch; i++) sink += (await f(URL_, INIT)).status
    times[b] = Number(process.hrtime.bigint() - t0) / 1e6 / batch
  }
  return times.sort()
}

const percentile = (sorted: Float64Array, p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!
const ms = (x: number): string => x.toFixed(5)
const figures = (label: string, t: Float64Array): string => `${label} p50 ${ms(percentile(t, 0.5))} p99 ${ms(percentile(t, 0.99))} p99.9 ${ms(percentile(t, 0.999))} ms`

/** The timer's own cost: p50 (ms) of back-to-back `process.hrtime.bigint()` pairs. */
const timerCost = (): number => {
  const times = new Float64Array(100_000)
  for (let i = 0; i < times.length; i++) {
    const t0 = process.hrtime.bigint()
    times[i] = Number(process.hrtime.bigint() - t0) / 1e6
  }
  return percentile(times.sort(), 0.5)
}

// the wrapper really reads what the plugin reads: fail loudly rather than time a wrapper that reports nothing
await wrapped(URL_, INIT)
if (reports !== 1) throw new Error("quotaFetch did not report the stub's rate-limit headers")
// warm-up: both paths optimised before anything is timed
await perCall(stub, 20_000)
await perCall(wrapped, 20_000)

console.log(
  `quota-sensing fetch wrapper: ${CALLS} calls per side, ${ROUNDS} rounds, ${RESPONSE_HEADERS.length} response headers, ${BODY.length}-char body (target: wrapped p99 ≤ unwrapped p99 + ${TARGET_MS} ms); timer pair p50 ${ms(timerCost())} ms`
)
let worst = 0
for (let round = 1; round <= ROUNDS; round++) {
  const base = await perCall(stub, CALLS)
  const real = await perCall(wrapped, CALLS)
  const over = percentile(real, 0.99) - percentile(base, 0.99)
  worst = Math.max(worst, over)
  const baseB = await perBatch(stub, CALLS, BATCH)
  const realB = await perBatch(wrapped, CALLS, BATCH)
  console.log(
    `round ${round} per call: ${figures("unwrapped", base)} | ${figures("wrapped", real)} | added p50 ${ms(percentile(real, 0.5) - percentile(base, 0.5))} p99 ${ms(over)} ms (${(over / TARGET_MS).toFixed(2)}× the budget)`
  )
  console.log(
    `round ${round} per batch of ${BATCH} (mean per call): unwrapped p50 ${ms(percentile(baseB, 0.5))} p99 ${ms(percentile(baseB, 0.99))} ms | wrapped p50 ${ms(percentile(realB, 0.5))} p99 ${ms(percentile(realB, 0.99))} ms | added p50 ${ms(percentile(realB, 0.5) - percentile(baseB, 0.5))} ms`
  )
}
console.log(`reports ${reports}, sink ${sink}`)
console.log(worst <= TARGET_MS ? `ok: worst added p99 per call ${ms(worst)} ms ≤ ${TARGET_MS} ms` : `MISSED: worst added p99 per call ${ms(worst)} ms > ${TARGET_MS} ms`)
process.exitCode = worst <= TARGET_MS ? 0 : 1
