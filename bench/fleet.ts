/**
 * Fleet mode's cost (`npm run bench:fleet`, not part of CI; issue 22). On a throwaway PostgreSQL on
 * loopback (bench/fleetCluster.ts; or the server of `OCPOOL_BENCH_PG_URL`, in a schema of its own that is
 * dropped at the end):
 * 1. one host's pick through the plugin's route path (`tool.execute.before` of a task for explore, in
 *    process, over `makeHooks(liveLayer(...))` with the PostgreSQL backend), interleaved with one
 *    `SELECT 1` round trip on a `pg` Client measured in the same run; target pick p50 ≤ 15× SELECT-1 p50.
 *    Reported beside it: 3 hosts picking at once (3 worker processes, different `OCPOOL_HOST_ID` and state
 *    dirs) and the file backend's pick (same hooks, `state` unset).
 * 2. the fallback when the server is down (the cluster stopped: connections refused) with `lockWaitMs`
 *    L = 250: every pick ≤ L + 1 ms. Reported beside it: a server that accepts and never answers (the
 *    case where L is what bounds the wait).
 * 3. plugin start, server down vs files, in fresh worker processes: from building the hooks until the
 *    config hook returns and until the first spawn returns; target median(postgres down) ≤
 *    median(files) × 1.1 + 2 ms.
 * `--quick` runs fewer samples. Exits 1 when a target is missed.
 */
import { spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import * as Pg from "pg"
import { FLEET_RETRY_MS } from "../src/core/state/fleet.js"
import { arg, argValue, flag, median, quantile } from "./common.js"
import { closedPort, startBenchCluster, type BenchCluster } from "./fleetCluster.js"
import { buildHooks, type Backend } from "./fleetHooks.js"

const QUICK = flag("quick")
const PICKS = arg("picks", QUICK ? 300 : 1000)
const WARMUP = QUICK ? 50 : 150
const HOST_PICKS = arg("host-picks", QUICK ? 200 : 400)
const HOSTS = 3
const HOLD = 3
const DOWN_PICKS = QUICK ? 100 : 300
const DOWN_SETS = QUICK ? 3 : 6
const HUNG_SETS = QUICK ? 2 : 4
const STARTS = arg("starts", QUICK ? 8 : 20)
const HUNG_STARTS = QUICK ? 3 : 9
const LOCK_WAIT_MS = 250
/** Part 1 is measured with a wait long enough that no pick falls back to files under the machine's load. */
const UP_LOCK_WAIT_MS = 60_000
const PICK_RATIO_MAX = 15
const FALLBACK_SLACK_MS = 1
const START_FACTOR = 1.1
const START_SLACK_MS = 2

const SELF = fileURLToPath(import.meta.url)
const ms = (x: number, digits = 3) => `${x.toFixed(digits)} ms`
const loadavg = () => readFileSync("/proc/loadavg", "utf8").trim().split(" ").slice(0, 3).join(" ")
const nowMs = () => Number(process.hrtime.bigint()) / 1e6
const sleep = (t: number) => new Promise((r) => setTimeout(r, Math.max(0, t)))

// the trace is not recorded here (the plugin records it only when asked)
delete process.env.OCPOOL_TRACE

// ---------------------------------------------------------------------------------------------- workers

/** `--worker pick`: one host of the 3; builds its hooks, warms up, says ready, picks on "go", prints its samples. */
const pickWorker = async (): Promise<void> => {
  const url = argValue("url")!
  const schema = argValue("schema")!
  const stateDir = argValue("state-dir")!
  const picks = arg("picks", 100)
  const hooks = await buildHooks(stateDir, { backend: "postgres", url, schema }, UP_LOCK_WAIT_MS, `h${process.env.OCPOOL_HOST_ID ?? "?"}`)
  for (let i = 0; i < 30; i++) {
    await hooks.pick()
    await hooks.trim(HOLD)
  }
  process.stdout.write("ready\n")
  await new Promise<void>((resolve) => createInterface({ input: process.stdin }).once("line", () => resolve()))
  const samples: Array<number> = []
  let unrouted = 0
  for (let i = 0; i < picks; i++) {
    const p = await hooks.pick()
    samples.push(p.ms)
    if (!p.routed) unrouted++
    await hooks.trim(HOLD)
  }
  await hooks.trim(0)
  const fallbacks = await hooks.fallbacks()
  await hooks.dispose()
  process.stdout.write(`${JSON.stringify({ samples, unrouted, fallbacks })}\n`)
}

/** `--worker start`: one plugin start in a fresh process; times to the config hook's and the first spawn's return. */
const startWorker = async (): Promise<void> => {
  const stateDir = argValue("state-dir")!
  const url = argValue("url")
  const backend: Backend = url === undefined ? { backend: "sqlite" } : { backend: "postgres", url, schema: argValue("schema")! }
  const t0 = nowMs()
  const hooks = await buildHooks(stateDir, backend, LOCK_WAIT_MS, "start")
  const built = nowMs() - t0
  await hooks.config()
  const configured = nowMs() - t0
  const p = await hooks.pick()
  const spawned = nowMs() - t0
  const fallbacks = await hooks.fallbacks()
  await hooks.dispose()
  process.stdout.write(`${JSON.stringify({ built, configured, spawned, routed: p.routed, fallbacks })}\n`)
}

/** Runs this bundle as a worker; resolves with its last stdout line as JSON. */
const worker = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = process.env, onReady?: () => void) => {
  const child = spawn(process.execPath, [SELF, "--worker", ...args], { stdio: ["pipe", "pipe", "pipe"], env })
  let out = ""
  let err = ""
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    out += d
    if (onReady !== undefined && out.includes("ready\n")) {
      const ready = onReady
      onReady = undefined
      ready()
    }
  })
  child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d))
  const done = new Promise<unknown>((resolve, reject) => {
    child.once("exit", (code) => {
      const last = out.trim().split("\n").at(-1) ?? ""
      if (code === 0 && last.startsWith("{")) resolve(JSON.parse(last))
      else reject(new Error(`worker ${args[0]} exited ${code}: ${(err.trim() || out.trim()).split("\n").slice(-3).join(" | ")}`))
    })
  })
  return { child, done }
}

// ------------------------------------------------------------------------------------------------- main

interface Row {
  readonly what: string
  readonly xs: ReadonlyArray<number>
}

const table = (rows: ReadonlyArray<Row>) => {
  const w = Math.max(...rows.map((r) => r.what.length))
  console.log(`${"".padEnd(w)}  ${"p50".padStart(10)}  ${"p99".padStart(10)}  ${"max".padStart(10)}  ${"n".padStart(5)}`)
  for (const r of rows)
    console.log(`${r.what.padEnd(w)}  ${ms(quantile(r.xs, 0.5)).padStart(10)}  ${ms(quantile(r.xs, 0.99)).padStart(10)}  ${ms(Math.max(...r.xs)).padStart(10)}  ${String(r.xs.length).padStart(5)}`)
}

/** A TCP server on loopback that accepts connections and never answers (a hung PostgreSQL). */
const hungServer = async (): Promise<{ readonly port: number; readonly close: () => void }> => {
  const sockets = new Set<Socket>()
  const srv = createServer((s) => {
    sockets.add(s)
    s.on("error", () => undefined)
    s.on("close", () => sockets.delete(s))
  })
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve))
  const addr = srv.address()
  const port = typeof addr === "object" && addr !== null ? addr.port : 0
  return {
    port,
    close: () => {
      for (const s of sockets) s.destroy()
      srv.close()
    }
  }
}

const withPort = (url: string, port: number) => {
  const u = new URL(url)
  u.port = String(port)
  return u.toString()
}

const main = async (): Promise<void> => {
  const failures: Array<string> = []
  const notes: Array<string> = []
  const loadStart = loadavg()
  const external = process.env.OCPOOL_BENCH_PG_URL
  let cluster: BenchCluster | undefined
  const dir = mkdtempSync(join(tmpdir(), "ocpool-bench-fleet-"))
  const stateDirOf = (name: string) => {
    const d = join(dir, name)
    mkdirSync(d, { recursive: true, mode: 0o700 })
    return d
  }
  const schema = external === undefined ? "bench_fleet" : `bench_fleet_${process.pid}`
  const children = new Set<ReturnType<typeof spawn>>()
  let phaseAt = nowMs()
  const phases: Array<string> = []
  const phase = (name: string) => {
    phases.push(`${name} ${((nowMs() - phaseAt) / 1000).toFixed(1)} s`)
    phaseAt = nowMs()
  }
  try {
    let url: string
    if (external !== undefined && external !== "") url = external
    else {
      const t0 = nowMs()
      cluster = await startBenchCluster()
      url = cluster.url
      notes.push(`throwaway cluster up in ${(nowMs() - t0).toFixed(0)} ms`)
    }
    phase("cluster")
    const client = new Pg.Client({ connectionString: url, options: `-c search_path=${schema}`, application_name: "ocpool-bench" })
    await client.connect()
    const version = (await client.query<{ server_version: string }>("SHOW server_version")).rows[0]?.server_version ?? "?"
    const pool = new Pg.Pool({ connectionString: url, options: `-c search_path=${schema}`, max: 1 })
    pool.on("error", () => undefined)

    // 1. one host's pick on the server, interleaved with SELECT 1 on a Client and on a Pool
    const up = await buildHooks(stateDirOf("host0"), { backend: "postgres", url, schema }, UP_LOCK_WAIT_MS, "h0")
    const pick: Array<number> = []
    const sel: Array<number> = []
    const selPool: Array<number> = []
    let unrouted = 0
    for (let i = 0; i < PICKS + WARMUP; i++) {
      const p = await up.pick()
      await up.trim(HOLD)
      let t0 = nowMs()
      await client.query("SELECT 1")
      const s = nowMs() - t0
      t0 = nowMs()
      await pool.query("SELECT 1")
      const sp = nowMs() - t0
      if (i < WARMUP) continue
      pick.push(p.ms)
      sel.push(s)
      selPool.push(sp)
      if (!p.routed) unrouted++
    }
    await up.trim(0)
    const upFallbacks = await up.fallbacks()
    await up.dispose()
    phase("1 host")
    if (upFallbacks > 0) failures.push(`${upFallbacks} picks of the 1-host run were made on files (the server did not answer within ${UP_LOCK_WAIT_MS} ms)`)

    // 1b. the file backend's pick, same hooks, `state` unset
    const files = await buildHooks(stateDirOf("files"), { backend: "sqlite" }, LOCK_WAIT_MS, "f")
    const filePick: Array<number> = []
    for (let i = 0; i < PICKS + WARMUP; i++) {
      const p = await files.pick()
      await files.trim(HOLD)
      if (i >= WARMUP) filePick.push(p.ms)
      if (!p.routed) unrouted++
    }
    await files.trim(0)
    await files.dispose()
    phase("files")

    // 1c. 3 hosts picking at once: worker processes, each its own host id and state dir
    const hosts: Array<{ done: Promise<unknown>; go: () => void }> = []
    let ready = 0
    let allReady: () => void = () => undefined
    const readyAll = new Promise<void>((resolve) => (allReady = resolve))
    for (let h = 1; h <= HOSTS; h++) {
      const w = worker(["pick", "--url", url, "--schema", schema, "--state-dir", stateDirOf(`host${h}`), "--picks", String(HOST_PICKS)], { ...process.env, OCPOOL_HOST_ID: `bench-host-${h}` }, () => {
        if (++ready === HOSTS) allReady()
      })
      children.add(w.child)
      hosts.push({ done: w.done, go: () => w.child.stdin.write("go\n") })
    }
    await Promise.race([readyAll, ...hosts.map((h) => h.done)])
    for (const h of hosts) h.go()
    const results = (await Promise.all(hosts.map((h) => h.done))) as Array<{ samples: Array<number>; unrouted: number; fallbacks: number }>
    const contended = results.flatMap((r) => r.samples)
    unrouted += results.reduce((a, r) => a + r.unrouted, 0)
    const hostFallbacks = results.reduce((a, r) => a + r.fallbacks, 0)
    if (hostFallbacks > 0) failures.push(`${hostFallbacks} picks of the 3-host run were made on files`)
    phase(`${HOSTS} hosts`)

    await client.end()
    await pool.end()
    if (external !== undefined && external !== "") {
      const admin = new Pg.Client({ connectionString: url })
      await admin.connect()
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
      await admin.end()
    }

    // 2. the server down: connections refused (the cluster stopped, or a closed port)
    let downUrl: string
    if (cluster !== undefined) {
      await cluster.stopOnly()
      downUrl = url
    } else downUrl = withPort(url, await closedPort())
    const downFirst: Array<number> = []
    const downRest: Array<number> = []
    let downFallbacks = 0
    for (let s = 0; s < DOWN_SETS; s++) {
      const h = await buildHooks(stateDirOf(`down${s}`), { backend: "postgres", url: downUrl, schema }, LOCK_WAIT_MS, `d${s}`)
      const picks = s === 0 ? DOWN_PICKS : 1
      for (let i = 0; i < picks; i++) {
        const p = await h.pick()
        await h.trim(HOLD)
        ;(i === 0 ? downFirst : downRest).push(p.ms)
        if (!p.routed) unrouted++
      }
      await h.trim(0)
      downFallbacks += await h.fallbacks()
      await h.dispose()
    }
    const down = [...downFirst, ...downRest]
    if (downFallbacks === 0) failures.push("the server-down run counted no fallback: its picks did not try PostgreSQL")

    // 2b. a server that accepts connections and never answers: lockWaitMs is what should bound the wait. Plugin
    // start already meets it (a commit while the hooks are built) and later picks go straight to files until
    // FLEET_RETRY_MS has passed: the pick measured is the first one after that, when PostgreSQL is asked again.
    const hung = await hungServer()
    const hungUrl = withPort(url, hung.port)
    const hungPick: Array<number> = []
    let hungFallbacks = 0
    const hungAt = nowMs()
    try {
      const sets = await Promise.all(Array.from({ length: HUNG_SETS }, (_, s) => buildHooks(stateDirOf(`hung${s}`), { backend: "postgres", url: hungUrl, schema }, LOCK_WAIT_MS, `x${s}`)))
      await sleep(FLEET_RETRY_MS + 200 - (nowMs() - hungAt))
      for (const h of sets) {
        const p = await h.pick()
        hungPick.push(p.ms)
        if (!p.routed) unrouted++
      }
      for (const h of sets) {
        await h.trim(0)
        hungFallbacks += await h.fallbacks()
        await h.dispose()
      }
    } finally {
      hung.close()
    }
    phase("server down and hung")

    // 3. plugin start in fresh processes: postgres down vs files, alternating
    type Start = { built: number; configured: number; spawned: number }
    const starts: { file: Array<Start>; pg: Array<Start>; hung: Array<Start> } = { file: [], pg: [], hung: [] }
    let startFallbacks = 0
    const hung2 = await hungServer()
    for (let i = 0; i < STARTS; i++) {
      const kinds = [...(i % 2 === 0 ? (["file", "pg"] as const) : (["pg", "file"] as const)), ...(i < HUNG_STARTS ? (["hung"] as const) : [])]
      for (const kind of kinds) {
        const args = ["start", "--state-dir", stateDirOf(`start-${kind}-${i}`), ...(kind === "pg" ? ["--url", downUrl, "--schema", schema] : kind === "hung" ? ["--url", withPort(url, hung2.port), "--schema", schema] : [])]
        const w = worker(args)
        children.add(w.child)
        const r = (await w.done) as { built: number; configured: number; spawned: number; routed: boolean; fallbacks: number }
        children.delete(w.child)
        starts[kind].push(r)
        if (!r.routed) unrouted++
        if (kind === "pg") startFallbacks += r.fallbacks
      }
    }
    hung2.close()
    phase("plugin starts")

    // ------------------------------------------------------------------------------------------- report
    if (unrouted > 0) failures.push(`${unrouted} picks were not routed to a variant`)
    const loadEnd = loadavg()
    console.log(`fleet bench: PostgreSQL ${version} on 127.0.0.1 (${external !== undefined && external !== "" ? "OCPOOL_BENCH_PG_URL" : "throwaway cluster, fsync off"}), node ${process.version}${QUICK ? ", --quick" : ""}`)
    console.log(`load average (1/5/15 min): ${loadStart} at start, ${loadEnd} at end (2 cores); ${notes.join("; ")}`)
    console.log(`phases: ${phases.join(", ")}`)
    console.log(`picks hold at most ${HOLD} claims (older ones released, untimed); 4 models of weight 100`)
    console.log("")
    table([
      { what: "SELECT 1, pg Client (reference)", xs: sel },
      { what: "SELECT 1, pg Pool", xs: selPool },
      { what: "pick, postgres, 1 host", xs: pick },
      { what: `pick, postgres, ${HOSTS} hosts at once`, xs: contended },
      { what: "pick, files (state unset)", xs: filePick },
      { what: `pick, server down (refused), L=${LOCK_WAIT_MS}`, xs: down },
      { what: "  first pick of fresh hooks", xs: downFirst },
      { what: `pick, server hung (no answer), L=${LOCK_WAIT_MS}`, xs: hungPick }
    ])
    console.log("")
    const startCol = (xs: ReadonlyArray<{ built: number; configured: number; spawned: number }>) =>
      `${ms(median(xs.map((x) => x.built)), 1).padStart(10)}  ${ms(median(xs.map((x) => x.configured)), 1).padStart(12)}  ${ms(median(xs.map((x) => x.spawned)), 1).padStart(12)}`
    console.log(`plugin start, fresh process (medians of ${STARTS})   ${"hooks built".padStart(10)}  ${"config done".padStart(12)}  ${"first spawn".padStart(12)}`)
    console.log(`  files                                     ${startCol(starts.file)}`)
    console.log(`  postgres, server down (refused)           ${startCol(starts.pg)}`)
    console.log(`  postgres, server hung (${String(starts.hung.length).padStart(2)} runs)          ${startCol(starts.hung)}`)
    console.log("")

    const p50 = quantile(pick, 0.5)
    const s50 = quantile(sel, 0.5)
    const ratio = p50 / s50
    console.log(`pick p50 / SELECT-1 p50 = ${ratio.toFixed(1)}  (target <= ${PICK_RATIO_MAX})   [vs pg Pool SELECT 1: ${(p50 / quantile(selPool, 0.5)).toFixed(1)}]`)
    if (ratio > PICK_RATIO_MAX) failures.push(`pick p50 ${ms(p50)} above ${PICK_RATIO_MAX}x SELECT-1 p50 (${ms(s50)})`)
    console.log(`postgres pick / file pick p50 = ${(p50 / quantile(filePick, 0.5)).toFixed(1)};  ${HOSTS} hosts / 1 host p50 = ${(quantile(contended, 0.5) / p50).toFixed(1)}`)
    const downMax = Math.max(...down)
    const fallbackLimit = LOCK_WAIT_MS + FALLBACK_SLACK_MS
    console.log(`server down: max pick ${ms(downMax)}  (target <= L + ${FALLBACK_SLACK_MS} = ${fallbackLimit} ms); fallbacks counted ${downFallbacks}`)
    if (downMax > fallbackLimit) failures.push(`a pick with the server down took ${ms(downMax)}, above ${fallbackLimit} ms`)
    // a server that accepts and never answers costs the whole wait, then the pick on files still has to be made
    const hungMax = Math.max(...hungPick)
    const hungLimit = fallbackLimit + quantile(filePick, 0.99)
    console.log(`server hung: max pick ${ms(hungMax)} (L + ${ms(hungMax - LOCK_WAIT_MS)}; target <= L + ${FALLBACK_SLACK_MS} ms + the file pick's p99 = ${ms(hungLimit)}); fallbacks counted ${hungFallbacks}`)
    if (hungMax > hungLimit) failures.push(`a pick with the server hung took ${ms(hungMax)}, above ${ms(hungLimit)}`)
    if (hungFallbacks === 0) failures.push("the hung-server run counted no fallback")
    for (const key of ["configured", "spawned"] as const) {
      const f = median(starts.file.map((x) => x[key]))
      const g = median(starts.pg.map((x) => x[key]))
      const limit = f * START_FACTOR + START_SLACK_MS
      console.log(`start to ${key === "configured" ? "config done" : "first spawn"}: postgres down ${ms(g, 1)} vs files ${ms(f, 1)}  (target <= files x ${START_FACTOR} + ${START_SLACK_MS} ms = ${ms(limit, 1)})`)
      if (g > limit) failures.push(`plugin start to ${key} with the server down ${ms(g, 1)} above ${ms(limit, 1)}`)
      // hung: the first spawn cannot know the server will not answer, and waits L once
      const h = median(starts.hung.map((x) => x[key]))
      const hungStartLimit = key === "spawned" ? limit + LOCK_WAIT_MS : limit
      if (h > hungStartLimit) failures.push(`plugin start to ${key} with the server hung ${ms(h, 1)} above ${ms(hungStartLimit, 1)}`)
    }
    if (startFallbacks === 0) notes.push("the server-down starts counted no fallback (their first spawn went to files without asking)")
  } finally {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL")
    await cluster?.stop()
    rmSync(dir, { recursive: true, force: true })
  }
  for (const f of failures) console.log(`FAIL: ${f}`)
  if (failures.length > 0) process.exit(1)
}

const role = argValue("worker")
if (role === "pick" || role === "start") {
  await (role === "pick" ? pickWorker() : startWorker())
  process.exit(0) // the pool's and the heartbeat's timers are not waited for
} else
  await main().catch((e: unknown) => {
    console.error(`bench:fleet: ${e instanceof Error ? e.message : String(e)}`)
    process.exit(1)
  })
