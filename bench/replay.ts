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
import { arg } from "./common.js"
import { generate } from "./traceGen.js"

const LINES = arg("lines", 1_000_000)
const ROUNDS = arg("rounds", 5)

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
