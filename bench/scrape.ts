/**
 * Scrape cost of `ocpool metrics` (`npm run bench:scrape`, not part of CI; issue 36): a state.db with
 * 32 live peer processes holding 14 claims each, 100 cooling models and a few hundred counters of two
 * hosts, read as the exporter reads it (one port kept open, no lock). A full scrape (read of every
 * record and the counters, the status view, the exposition) timed `--scrapes` times (2000) in
 * `--rounds` rounds (5) taken in turn with the reference: the read alone over the same port. Prints
 * each round's p50/p99 of both, the median round's figures and ratio; exits 1 when a scrape's p50 or
 * p99 is past the target (20 ms).
 */
import { Effect, Layer, ManagedRuntime } from "effect"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { count, observeWait, type Count } from "../src/core/metrics/counters.js"
import type { Cooldown } from "../src/core/pool/cooldown.js"
import { sharedStateLayer } from "../src/layers/state/sharedStateLayer.js"
import { SharedState } from "../src/services/state/SharedState.js"
import { StateDir } from "../src/services/state/StateDir.js"
import { SCRAPE_RECORDS, scrapeWith } from "../src/cli/metrics.js"
import { cliPool, openState, portOf, readThrough } from "../src/cli/stateView.js"
import { viewBudgets } from "../src/cli/statusRun.js"
import { arg, median, MODELS, PEERS, PER_PEER, quantile, spawnPeers, writePeerClaims } from "./common.js"

const N = arg("scrapes", 2000)
const ROUNDS = arg("rounds", 5)
const COOLING = 100
/** The target for one scrape, ms. */
const TARGET_MS = 20
const ms = (x: number) => `${x.toFixed(3)} ms`

delete process.env.OCPOOL_STATE_URL
const dir = mkdtempSync(join(tmpdir(), "ocpool-bench-scrape-"))
const stateDir = join(dir, "state")
const peers = await spawnPeers()
try {
  const now = Date.now()
  writePeerClaims(stateDir, peers, now)
  const cool: Array<Cooldown> = Array.from({ length: COOLING }, (_, i) => ({ model: `prov${i % 10}/model-${i}`, reason: i % 3 === 0 ? "quota" : "rate_limit", strikes: 1 + (i % 3), scope: "model", since: now, until: now + 3_600_000, source: "backoff" }))
  const counts: Array<Count> = [
    ...["explore", "general"].flatMap((b) => ["first", "second", "overflow"].map((p) => count("routes_total", [b, p], 100))),
    ...Array.from({ length: 10 }, (_, i) => ["rate_limit", "quota", "outage", "unavailable"].map((c) => count("limits_total", [`prov${i}`, c], 7))).flat(),
    ...["rate_limit", "quota", "outage", "hang"].map((r) => count("cooldowns_total", [r], 5)),
    ...["ok", "failed", "gave_up"].map((o) => count("aborts_total", [o])),
    ...["heavy", "gpu", "net"].flatMap((b) => [count("permit_requests_total", [b], 9), count("permit_grants_total", [b], 9), ...[0.5, 3, 20, 45, 100, 400, 900, 4000].flatMap((w) => observeWait(b, w))]),
    count("fail_opens_total", [], 2)
  ]
  const port = (host: string) => sharedStateLayer({ backend: "sqlite", lockWaitMs: 5_000 }).pipe(Layer.provide(Layer.succeed(StateDir, { dir: stateDir, trusted: true, pid: process.pid, host, startTime: null })))
  for (const host of [hostname(), "other-host"])
    await Effect.runPromise(Effect.flatMap(SharedState, (s) => s.commit(now, { cool: host === "other-host" ? [] : cool, uncool: [], counts })).pipe(Effect.provide(port(host)), Effect.scoped))

  const poolFile = join(dir, "pool.json")
  writeFileSync(poolFile, JSON.stringify({ slots: MODELS.map((model) => ({ model, weight: 4 })) }))
  const pool = cliPool(poolFile)
  const budgets = await Effect.runPromise(viewBudgets)
  const opened = await Effect.runPromise(openState(stateDir))
  // the exporter keeps one port open for every scrape (src/cli/metrics.ts)
  const runtime = ManagedRuntime.make(portOf(opened))
  const scrape = scrapeWith(opened, pool, budgets)
  const readOnly = Effect.suspend(() => readThrough(opened, SCRAPE_RECORDS, Date.now()))
  const time = async (work: () => Promise<unknown>): Promise<number> => {
    const t0 = process.hrtime.bigint()
    await work()
    return Number(process.hrtime.bigint() - t0) / 1e6
  }
  const first = await runtime.runPromise(scrape)
  const lines = first.split("\n").length - 1
  const samples = first.split("\n").filter((l) => l !== "" && !l.startsWith("#")).length
  for (let i = 0; i < 200; i++) await runtime.runPromise(scrape)

  const rows: Array<{ s50: number; s99: number; r50: number; r99: number }> = []
  for (let r = 0; r < ROUNDS; r++) {
    const full: Array<number> = []
    const read: Array<number> = []
    for (let i = 0; i < N; i++) full.push(await time(() => runtime.runPromise(scrape)))
    for (let i = 0; i < N; i++) read.push(await time(() => runtime.runPromise(readOnly)))
    rows.push({ s50: quantile(full, 0.5), s99: quantile(full, 0.99), r50: quantile(read, 0.5), r99: quantile(read, 0.99) })
  }
  await runtime.dispose()

  console.log(`scrape bench: ${ROUNDS} rounds of ${N} scrapes, ${PEERS} live peers x ${PER_PEER} claims, ${COOLING} cooling models, ${counts.length} counters x 2 hosts; exposition ${lines} lines, ${samples} samples, ${first.length} bytes; node ${process.version}`)
  console.log("round  scrape p50 / p99 (read + view + exposition)   read alone p50 / p99   ratio p50 / p99")
  for (const [k, x] of rows.entries()) console.log(`${String(k + 1).padStart(5)}  ${ms(x.s50)} / ${ms(x.s99)}   ${ms(x.r50)} / ${ms(x.r99)}   ${(x.s50 / x.r50).toFixed(2)} / ${(x.s99 / x.r99).toFixed(2)}`)
  const p50 = median(rows.map((x) => x.s50))
  const p99 = median(rows.map((x) => x.s99))
  console.log(
    `scrape (median of ${ROUNDS} rounds): p50 ${ms(p50)}  p99 ${ms(p99)}  (target <= ${TARGET_MS} ms, issue 36); ratio to the read alone: p50 ${median(rows.map((x) => x.s50 / x.r50)).toFixed(2)}  p99 ${median(rows.map((x) => x.s99 / x.r99)).toFixed(2)}`
  )
  if (p50 > TARGET_MS || p99 > TARGET_MS) process.exitCode = 1
} finally {
  for (const p of peers) p.kill()
  rmSync(dir, { recursive: true, force: true })
}
