/**
 * Routing overhead (`npm run bench:route`, not part of CI): the time from `tool.execute.before` entry
 * to the rewritten argument (sweep, `BEGIN IMMEDIATE`, read of every peer's claims in state.db,
 * decision, publish, `COMMIT`), with 32 live peer processes holding 14 claims each, next to the file
 * pick it replaced (issue 32): a bare synchronous readdir + read + JSON.parse + lock + publish of the
 * same claims as files, measured in the same run. Prints p50/p99 of both and the ratios; exits 1 when
 * the pick costs more than half the file reference.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseSettings } from "../src/core/options.js"
import { AbortClientMemory } from "../src/layers/opencode/AbortClientMemory.js"
import { NotifierNone } from "../src/layers/notify/NotifierNone.js"
import { makeHooks } from "../src/plugin/hooks.js"
import { liveLayer } from "../src/plugin/live.js"
import { arg, bareFileWork, countingLog, MODELS, PEERS, PER_PEER, quantile, spawnPeers, writePeerClaims } from "./common.js"

const N = arg("spawns", 2000)
/** A pick on state.db against the file pick it replaced (issue 32). */
const PICK_RATIO_MAX = 0.5
const ms = (x: number) => `${x.toFixed(3)} ms`

const dir = mkdtempSync(join(tmpdir(), "ocpool-bench-route-"))
const stateDir = join(dir, "state")
const peers = await spawnPeers()
try {
  const { settings } = parseSettings({ stateDir, reapMs: 3_600_000, models: { slots: MODELS.map((model) => ({ model, weight: 100 })) } }, {})
  const log = countingLog()
  const hooks = await makeHooks(liveLayer({ client: undefined, directory: dir }, settings, { log: log.layer, abort: AbortClientMemory(["ok"], []), notifier: NotifierNone("not in this run") }), { settings, warnings: [] })
  writePeerClaims(stateDir, peers, Date.now())

  const route: Array<number> = []
  let unrouted = 0
  for (let i = 0; i < N + 200; i++) {
    const output = { args: { subagent_type: "explore" } as Record<string, unknown> }
    const t0 = process.hrtime.bigint()
    await hooks["tool.execute.before"]!({ tool: "task", sessionID: "ses_bench", callID: `c${i}` }, output)
    const t1 = process.hrtime.bigint()
    if (i >= 200) route.push(Number(t1 - t0) / 1e6)
    if (output.args.subagent_type === "explore") unrouted++
    await hooks["tool.execute.after"]!({ tool: "task", sessionID: "ses_bench", callID: `c${i}`, args: {} }, { title: "", output: "", metadata: {} })
  }
  await hooks.dispose!()

  // The floor: the same file work, bare and synchronous.
  const bare = bareFileWork(stateDir, N)

  const r50 = quantile(route, 0.5)
  const r99 = quantile(route, 0.99)
  const b50 = quantile(bare, 0.5)
  const b99 = quantile(bare, 0.99)
  console.log(`route bench: ${N} spawns, ${PEERS} live peers x ${PER_PEER} claims, node ${process.version}`)
  console.log(`routing (hook entry -> claim published): p50 ${ms(r50)}  p99 ${ms(r99)}`)
  console.log(`the file pick's reference (bare sync pool.lock + readdir + read + parse + publish of the claim files): p50 ${ms(b50)}  p99 ${ms(b99)}`)
  console.log(`ratio routing/file reference: p50 ${(r50 / b50).toFixed(2)}  p99 ${(r99 / b99).toFixed(2)}  (target <= ${PICK_RATIO_MAX}, issue 32: state.db)`)
  if (unrouted > 0 || log.counts.error > 0) console.log(`NOT ROUTED: ${unrouted} of ${N + 200} spawns kept their agent; ${log.counts.error} error lines`)
  if (r50 / b50 > PICK_RATIO_MAX || r99 / b99 > PICK_RATIO_MAX || unrouted > 0 || log.counts.error > 0) process.exitCode = 1
} finally {
  for (const p of peers) p.kill()
  rmSync(dir, { recursive: true, force: true })
}
