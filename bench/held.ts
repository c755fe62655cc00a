/**
 * Replay with many claims held (`npm run bench:held [-- --claims N --rounds R]`).
 *
 * Three generated traces of the same number of lines, each replayed in a fresh process, alternating:
 *  - prompt: every spawn is released on the next line (at most one claim open), the reference;
 *  - held: N spawns in a row, none released (all young, so every spawn's sweep and routing see all of them);
 *  - bound: N claims spawned and bound, with sampled activity on their sessions, sweeps and status lines,
 *    spread over longer than the reaper's hang timings (every claim's deadline comes due now and then).
 * It prints lines/s for each and the per-round ratios held/prompt and bound/prompt (target ≥ 0.5). The
 * prompt trace's lines are half spawns and half (cheaper) releases, the held trace's all spawns; so a
 * second, separately timed pass also gives the rate of the spawn lines alone in each trace.
 */
import { formatDecision } from "../src/core/trace/format.js"
import { feed, startReplay } from "../src/core/trace/replay.js"
import { arg, argValue, rng } from "./common.js"

const CLAIMS = arg("claims", 40_000)
const ROUNDS = arg("rounds", 3)
const T0 = 1_796_115_600_000
const POOL = JSON.stringify({ at: T0, type: "pool", slots: [{ model: "zen/alpha", weight: 3 }, { model: "zen/beta", weight: 2 }, { model: "go/gamma", weight: 1 }] })

/** N lines: spawn, release, spawn, release, ... (one claim open at a time). */
export const promptTrace = (n: number): Array<string> => {
  const out = [POOL]
  for (let i = 0; out.length < n + 1; i++) {
    const at = T0 + 1 + i * 5
    out.push(i % 2 === 0 ? JSON.stringify({ at, type: "spawn", claim: `c${i}`, base: "explore", session: "ses_parent" }) : JSON.stringify({ at, type: "release", claim: `c${i - 1}`, ok: true }))
  }
  return out
}

/** N spawns 5 ms apart, none released: 40,000 of them span 200 s, younger than the 5-min hang age. */
export const heldTrace = (n: number): Array<string> => {
  const out = [POOL]
  for (let i = 0; i < n; i++) out.push(JSON.stringify({ at: T0 + 1 + i * 5, type: "spawn", claim: `c${i}`, base: "explore", session: "ses_parent" }))
  return out
}

/**
 * N lines over ~2 h with about N/4 claims held: spawns bound at once, activity on random held sessions
 * (most stay healthy, the silent ones are aborted as hung), sweeps and status lines.
 */
export const boundTrace = (n: number): Array<string> => {
  const rand = rng(7)
  const out = [POOL]
  const open: Array<string> = []
  let at = T0
  const step = Math.max(1, Math.floor(7_200_000 / n))
  for (let i = 0; out.length < n + 1; i++) {
    at += step
    const r = rand()
    if (r < 0.25 || open.length === 0) {
      out.push(JSON.stringify({ at, type: "spawn", claim: `c${i}`, base: "implement", session: "ses_parent", abort: "ok" }))
      out.push(JSON.stringify({ at, type: "bind", claim: `c${i}`, session: `s${i}` }))
      open.push(`s${i}`)
    } else if (r < 0.95) {
      out.push(JSON.stringify({ at, type: "activity", session: open[Math.floor(rand() * open.length)]! }))
    } else if (r < 0.99) {
      out.push(JSON.stringify({ at, type: "sweep", abort: "ok" }))
    } else {
      out.push(JSON.stringify({ at, type: "status" }))
    }
  }
  return out.slice(0, n + 1)
}

const replay = (lines: ReadonlyArray<string>): { bytes: number; decisions: number } => {
  let cursor = startReplay()
  let bytes = 0
  let decisions = 0
  for (const l of lines) {
    const r = feed(cursor, l)
    if (r._tag !== "Ok") throw new Error(r.message)
    cursor = r.cursor
    for (const d of r.decisions) {
      bytes += formatDecision(d).length
      decisions++
    }
  }
  return { bytes, decisions }
}

/** Time spent in spawn lines only (each line timed; a separate pass, the timers cost a little). */
const spawnTime = (lines: ReadonlyArray<string>): { ms: number; spawns: number } => {
  let cursor = startReplay()
  let ms = 0
  let spawns = 0
  for (const l of lines) {
    const isSpawn = l.includes('"type":"spawn"')
    const t0 = performance.now()
    const r = feed(cursor, l)
    if (r._tag !== "Ok") throw new Error(r.message)
    cursor = r.cursor
    for (const d of r.decisions) formatDecision(d)
    if (!isSpawn) continue
    ms += performance.now() - t0
    spawns++
  }
  return { ms, spawns }
}

const TRACES: Record<string, (n: number) => Array<string>> = { prompt: promptTrace, held: heldTrace, bound: boundTrace }

const child = (kind: string): void => {
  const lines = TRACES[kind]!(CLAIMS)
  replay(TRACES[kind]!(Math.min(CLAIMS, 20_000))) // warm-up: the same kind of trace
  const t0 = process.hrtime.bigint()
  const r = replay(lines)
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  const spawn = spawnTime(lines)
  process.stdout.write(JSON.stringify({ ms, lines: lines.length, ...r, spawnMs: spawn.ms, spawns: spawn.spawns }))
}

const median = (xs: ReadonlyArray<number>): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const main = async (): Promise<void> => {
  const { execFileSync } = await import("node:child_process")
  const timeoutMs = arg("timeout", 300) * 1000
  const measure = (kind: string): { ms: number; lines: number; decisions: number; spawnMs: number; spawns: number } | undefined => {
    try {
      return JSON.parse(execFileSync(process.execPath, [process.argv[1]!, "--child", kind, "--claims", String(CLAIMS)], { encoding: "utf8", timeout: timeoutMs, maxBuffer: 1 << 20 }))
    } catch {
      return undefined
    }
  }
  const kinds = (argValue("kinds") ?? "prompt,held,bound").split(",")
  const ms: Record<string, Array<number>> = {}
  const perSpawn: Record<string, Array<number>> = {}
  const info: Record<string, { lines: number; decisions: number }> = {}
  for (let i = 0; i < ROUNDS; i++) {
    for (const k of kinds) {
      const r = measure(k)
      ;(ms[k] ??= []).push(r === undefined ? Number.NaN : r.ms)
      ;(perSpawn[k] ??= []).push(r === undefined ? Number.NaN : (r.spawnMs * 1000) / r.spawns)
      if (r !== undefined) info[k] = r
    }
  }
  console.log(`held-claims replay bench: ${CLAIMS.toLocaleString("en-US")} lines per trace, ${ROUNDS} rounds (each measurement in a fresh process), node ${process.version}`)
  for (const k of kinds) {
    const xs = ms[k]!
    const m = median(xs)
    const rate = Number.isNaN(m) ? `over ${timeoutMs / 1000} s (killed)` : `${Math.round((CLAIMS / m) * 1000).toLocaleString("en-US")} lines/s`
    console.log(`${k.padEnd(6)} ${rate}  (median ${m.toFixed(0)} ms; rounds ${xs.map((x) => x.toFixed(0)).join(", ")}; ${info[k]?.decisions ?? "?"} decisions)`)
  }
  for (const k of kinds) {
    if (k === "prompt" || ms.prompt === undefined) continue
    const ratio = median(ms.prompt.map((p, i) => p / ms[k]![i]!))
    console.log(`ratio ${k}/prompt per line (median of per-round ratios): ${Number.isNaN(ratio) ? "-" : ratio.toFixed(2)}  (target >= 0.50)`)
  }
  for (const k of kinds) {
    const xs = perSpawn[k]!
    console.log(`spawn lines in ${k.padEnd(6)} ${median(xs).toFixed(1)} µs each (rounds ${xs.map((x) => x.toFixed(1)).join(", ")})`)
  }
  for (const k of kinds) {
    if (k === "prompt" || perSpawn.prompt === undefined) continue
    const ratio = median(perSpawn.prompt.map((p, i) => p / perSpawn[k]![i]!))
    console.log(`ratio ${k}/prompt per spawn line (median of per-round ratios): ${Number.isNaN(ratio) ? "-" : ratio.toFixed(2)}`)
  }
}

const childIndex = process.argv.indexOf("--child")
if (childIndex >= 0) child(process.argv[childIndex + 1]!)
else await main()
