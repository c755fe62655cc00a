/**
 * Routing overhead (`npm run bench:route`, not part of CI): the time from `tool.execute.before` entry
 * to the rewritten argument (sweep, lock, read of every peer, decision, publish), with 32 live peer
 * processes holding 14 claims each, next to a bare synchronous readdir + read + JSON.parse + lock +
 * publish of the same files, measured in the same run. Prints p50/p99 of both and the ratios.
 */
import { spawn, type ChildProcess } from "node:child_process"
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync, writeSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { encodeClaimFile } from "../src/core/claimFile.js"
import type { Claim } from "../src/core/claims.js"
import { parseSettings } from "../src/core/options.js"
import { AbortClientMemory } from "../src/layers/opencode/AbortClientMemory.js"
import { NotifierNone } from "../src/layers/notify/NotifierNone.js"
import { AppLogMemory } from "../src/layers/opencode/AppLogMemory.js"
import { startTimeOf } from "../src/layers/state/proc.js"
import { makeHooks } from "../src/plugin/hooks.js"
import { liveLayer } from "../src/plugin/live.js"
import { arg } from "./common.js"

const N = arg("spawns", 2000)
const PEERS = 32
const PER_PEER = 14
const MODELS = ["zen/a", "zen/b", "go/c", "go/d"]

const quantile = (xs: ReadonlyArray<number>, q: number): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!
}
const ms = (x: number) => `${x.toFixed(3)} ms`

const dir = mkdtempSync(join(tmpdir(), "ocpool-bench-route-"))
const stateDir = join(dir, "state")
const peers: Array<ChildProcess> = []
try {
  // 32 live peer processes, so the dead-holder checks (kill 0, /proc start time) run as in real use.
  for (let i = 0; i < PEERS; i++) peers.push(spawn("sleep", ["600"], { stdio: "ignore" }))
  await new Promise((r) => setTimeout(r, 200))
  const { settings } = parseSettings({ stateDir, reapMs: 3_600_000, models: { slots: MODELS.map((model) => ({ model, weight: 100 })) } }, {})
  const hooks = await makeHooks(liveLayer({ client: undefined, directory: dir }, settings, { log: AppLogMemory([]), abort: AbortClientMemory(["ok"], []), notifier: NotifierNone("not in this run") }), { settings, warnings: [] })
  const now = Date.now()
  for (const p of peers) {
    const claims: Array<Claim> = Array.from({ length: PER_PEER }, (_, k) => ({
      key: `ses_peer${p.pid}:call_${k}`,
      base: "explore",
      slot: 1 + (k % 4),
      model: MODELS[k % 4]!,
      acquiredAt: now,
      heartbeatAt: now,
      ownerSession: `ses_peer${p.pid}`,
      targetSession: `ses_child${p.pid}_${k}`,
      abortAttempts: 0,
      abortPending: false,
      abortOrigin: null,
      abortInFlight: false,
      endedInFlight: false
    }))
    writeFileSync(join(stateDir, `claims.${p.pid}.json`), encodeClaimFile({ pid: p.pid!, startTime: startTimeOf(p.pid!), host: hostname(), writtenAt: now, reaped: 0, claims }), { mode: 0o600 })
  }

  const route: Array<number> = []
  for (let i = 0; i < N + 200; i++) {
    const output = { args: { subagent_type: "explore" } as Record<string, unknown> }
    const t0 = process.hrtime.bigint()
    await hooks["tool.execute.before"]!({ tool: "task", sessionID: "ses_bench", callID: `c${i}` }, output)
    const t1 = process.hrtime.bigint()
    if (i >= 200) route.push(Number(t1 - t0) / 1e6)
    await hooks["tool.execute.after"]!({ tool: "task", sessionID: "ses_bench", callID: `c${i}`, args: {} }, { title: "", output: "", metadata: {} })
  }
  await hooks.dispose!()

  // The floor: the same file work, bare and synchronous.
  const bare: Array<number> = []
  const own = join(stateDir, "bench-own.json")
  for (let i = 0; i < N + 200; i++) {
    const t0 = process.hrtime.bigint()
    const fd = openSync(join(stateDir, "pool.lock"), "wx", 0o600)
    writeSync(fd, JSON.stringify({ pid: process.pid, at: Date.now() }))
    closeSync(fd)
    let n = 0
    for (const name of readdirSync(stateDir)) {
      if (!name.startsWith("claims.") || !name.endsWith(".json")) continue
      n += Object.keys((JSON.parse(readFileSync(join(stateDir, name), "utf8")) as { claims: object }).claims).length
    }
    writeFileSync(`${own}.tmp`, JSON.stringify({ n, at: Date.now() }), { mode: 0o600 })
    renameSync(`${own}.tmp`, own)
    unlinkSync(join(stateDir, "pool.lock"))
    const t1 = process.hrtime.bigint()
    if (i >= 200) bare.push(Number(t1 - t0) / 1e6)
  }

  const r50 = quantile(route, 0.5)
  const r99 = quantile(route, 0.99)
  const b50 = quantile(bare, 0.5)
  const b99 = quantile(bare, 0.99)
  console.log(`route bench: ${N} spawns, ${PEERS} live peers x ${PER_PEER} claims, node ${process.version}`)
  console.log(`routing (hook entry -> claim published): p50 ${ms(r50)}  p99 ${ms(r99)}`)
  console.log(`bare sync readdir+read+parse+lock+publish: p50 ${ms(b50)}  p99 ${ms(b99)}`)
  console.log(`ratio routing/bare: p50 ${(r50 / b50).toFixed(2)}  p99 ${(r99 / b99).toFixed(2)}  (target <= 3; moonshot p99 <= 1 ms)`)
} finally {
  for (const p of peers) p.kill()
  rmSync(dir, { recursive: true, force: true })
}
