/**
 * Replay throughput (`npm run bench:replay [-- --lines N --rounds R]`).
 *
 * Generates a spawn trace of N lines (default 1,000,000) with a realistic mix (spawns, binds, sampled
 * activity, releases, limits, retries, sweeps, status), then times, in the same process and in
 * alternating rounds:
 *  - the reference: JSON.parse and JSON.stringify of every line (the floor any replay has to pay);
 *  - the replay: decode + validate + state machine step + formatting of every decision.
 * It prints lines/s for both (median of the rounds) and their ratio, the figure the target is set on.
 */
import { formatDecision } from "../src/core/trace/format.js"
import { feed, startReplay } from "../src/core/trace/replay.js"
import { arg, rng } from "./common.js"

const LINES = arg("lines", 1_000_000)
const ROUNDS = arg("rounds", 5)

const generate = (n: number): Array<string> => {
  const rand = rng(42)
  const pick = <A>(xs: ReadonlyArray<A>): A => xs[Math.floor(rand() * xs.length)]!
  const models = ["zen/alpha", "zen/beta", "go/gamma", "or/nvidia/x:free"]
  const texts = ["Rate limit exceeded", "limit reached", "context limit reached", "503 Service Unavailable", "Resets in 35min", '{"name":"APIError","data":{"message":"Too Many Requests","statusCode":429}}']
  let at = 1_796_115_600_000
  const out: Array<string> = [JSON.stringify({ at, type: "pool", slots: models.map((model, i) => ({ model, weight: [3, 2, 1, 1][i] })) })]
  const open: Array<{ claim: string; session: string | null }> = []
  let seq = 0
  while (out.length < n) {
    at += Math.floor(rand() * 2_000)
    const r = rand()
    let line: Record<string, unknown>
    if ((r < 0.2 && open.length < 40) || open.length === 0) {
      const claim = `ses_parent${seq % 50}:call_${seq++}`
      open.push({ claim, session: null })
      line = { at, type: "spawn", claim, base: pick(["explore", "implement", "context"]), session: `ses_parent${seq % 50}` }
    } else if (r < 0.35) {
      const c = pick(open)
      c.session = `ses_child${seq++}`
      line = { at, type: "bind", claim: c.claim, session: c.session }
    } else if (r < 0.7) {
      const c = pick(open)
      line = { at, type: "activity", session: c.session ?? `ses_other${seq % 1000}` }
    } else if (r < 0.85) {
      const i = Math.floor(rand() * open.length)
      const [c] = open.splice(i, 1)
      line = { at, type: "release", claim: c!.claim, ok: rand() < 0.9 }
    } else if (r < 0.9) {
      const c = pick(open)
      line = { at, type: "limit", text: pick(texts), session: c.session ?? "ses_none", ...(rand() < 0.5 ? { status: 429, headers: { "retry-after": "30" } } : {}) }
    } else if (r < 0.93) {
      const c = pick(open)
      line = { at, type: "retry", session: c.session ?? "ses_none", message: pick(texts), next: at + pick([1_000, 3_000, 90_000]) }
    } else if (r < 0.98) {
      line = { at, type: "sweep" }
    } else {
      line = { at, type: "status" }
    }
    out.push(JSON.stringify(line))
  }
  return out
}

const reference = (lines: ReadonlyArray<string>): number => {
  let bytes = 0
  for (const l of lines) bytes += JSON.stringify(JSON.parse(l)).length
  return bytes
}

const replay = (lines: ReadonlyArray<string>): number => {
  let cursor = startReplay()
  let bytes = 0
  for (const l of lines) {
    const r = feed(cursor, l)
    if (r._tag !== "Ok") throw new Error(r.message)
    cursor = r.cursor
    for (const d of r.decisions) bytes += formatDecision(d).length
  }
  return bytes
}

const median = (xs: ReadonlyArray<number>): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const rate = (ms: number): string => `${Math.round((LINES / ms) * 1000).toLocaleString("en-US")} lines/s`

/** Child mode: time one path over the generated lines and print `{ms, bytes}`. */
const child = (kind: string): void => {
  const lines = generate(LINES)
  const run = kind === "reference" ? reference : replay
  run(lines.slice(0, 50_000)) // warm-up
  const t0 = process.hrtime.bigint()
  const bytes = run(lines)
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  process.stdout.write(JSON.stringify({ ms, bytes, heapMB: process.memoryUsage().heapUsed / 1e6 }))
}

/**
 * Each measurement runs in a fresh process, so one path's garbage never lands on the other's clock;
 * rounds alternate reference and replay back to back, and the ratio is taken per round.
 */
const main = async (): Promise<void> => {
  const { execFileSync } = await import("node:child_process")
  const measure = (kind: string): { ms: number; bytes: number; heapMB: number } =>
    JSON.parse(execFileSync(process.execPath, [process.argv[1]!, "--child", kind, "--lines", String(LINES)], { encoding: "utf8", maxBuffer: 1 << 20 }))
  const refMs: Array<number> = []
  const repMs: Array<number> = []
  let decisionsBytes = 0
  let heap = 0
  for (let i = 0; i < ROUNDS; i++) {
    refMs.push(measure("reference").ms)
    const r = measure("replay")
    repMs.push(r.ms)
    decisionsBytes = r.bytes
    heap = r.heapMB
  }
  const ref = median(refMs)
  const rep = median(repMs)
  const ratio = median(refMs.map((r, i) => r / repMs[i]!))
  console.log(`replay bench: ${LINES.toLocaleString("en-US")} lines, ${ROUNDS} rounds (each measurement in a fresh process), node ${process.version}, decisions ${(decisionsBytes / 1e6).toFixed(1)} MB`)
  console.log(`reference (JSON.parse + JSON.stringify): ${rate(ref)}  (median ${ref.toFixed(0)} ms; rounds ${refMs.map((m) => m.toFixed(0)).join(", ")})`)
  console.log(`replay (decode + step + format):         ${rate(rep)}  (median ${rep.toFixed(0)} ms; rounds ${repMs.map((m) => m.toFixed(0)).join(", ")})`)
  console.log(`ratio replay/reference (median of per-round ratios): ${ratio.toFixed(2)}  (target >= 0.30, excellent >= 0.50)`)
  console.log(`replay heap after the run (trace lines included): ${heap.toFixed(0)} MB`)
}

const childIndex = process.argv.indexOf("--child")
if (childIndex >= 0) child(process.argv[childIndex + 1]!)
else await main()
