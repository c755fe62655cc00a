/**
 * `ocpool metrics` scraped by a real Prometheus (issue 36): Debian's `prometheus` (test/real/prometheus.ts)
 * scrapes the built exporter every second while a plugin engine, booted from sources over a SQLite state
 * directory, routes, cools and takes permits; the values read back through Prometheus's query API equal
 * what the engine decided (its recorded decisions). Then the fleet: two hosts' fleet drivers on one real
 * PostgreSQL (test/real/pgCluster.ts) and one exporter that shows both, labelled by host. `promtool check
 * metrics` accepts every exposition (the shipped rules and hostile labels: promtool.real.test.ts). Needs `npm run build`.
 */
import { describe, expect, it } from "@effect/vitest"
import { afterAll } from "vitest"
import { spawn, spawnSync, type ChildProcess } from "node:child_process"
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { POOL2, boot, childCreated, event, settle, type Booted } from "../plugin/boot.js"
import { cli, root } from "../cli/builtCli.js"
import { startPgCluster, type PgCluster } from "./pgCluster.js"
import { freePort, sleep, stopTree, trackPid, untrackPid } from "./procs.js"
import { needPrometheus, promtool, startPrometheus, type PrometheusServer, type Sample } from "./prometheus.js"

needPrometheus()

const tmp = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix))
  chmodSync(d, 0o700)
  return d
}

/** The environment of a CLI or driver run: its own config, state and data homes. */
const envOf = (home: string, more: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  ...process.env,
  XDG_CONFIG_HOME: join(home, "config"),
  XDG_STATE_HOME: join(home, "xstate"),
  XDG_DATA_HOME: join(home, "data"),
  OCPOOL_PERMITS: "1",
  ...more
})

/** The pool the exporter resolves (its slots' caps and loads): the same slots the engine routes to. */
const writePool = (home: string, slots: ReadonlyArray<{ readonly model: string; readonly weight: number }>) => {
  mkdirSync(join(home, "config", "opencode-pool"), { recursive: true })
  writeFileSync(join(home, "config", "opencode-pool", "pool.json"), JSON.stringify({ slots }))
}

/** `ocpool metrics --listen` as a child process; resolves once it said it serves. */
const startExporter = async (env: NodeJS.ProcessEnv, args: ReadonlyArray<string> = []): Promise<{ readonly target: string; readonly child: ChildProcess; readonly out: () => string }> => {
  const port = await freePort()
  const child = spawn(process.execPath, [cli, "metrics", "--listen", `127.0.0.1:${port}`, ...args], { env, stdio: ["ignore", "pipe", "pipe"] })
  trackPid(child.pid)
  let out = ""
  child.stdout!.on("data", (b: Buffer) => (out += b.toString()))
  child.stderr!.on("data", (b: Buffer) => (out += b.toString()))
  for (let i = 0; i < 200 && !out.includes("serving"); i++) {
    if (child.exitCode !== null) throw new Error(`ocpool metrics exited ${child.exitCode}: ${out}`)
    await sleep(50)
  }
  expect(out).toContain(`ocpool metrics: serving http://127.0.0.1:${port}/metrics`)
  return { target: `127.0.0.1:${port}`, child, out: () => out }
}

const stopExporter = async (e: { readonly child: ChildProcess }) => {
  await stopTree(e.child)
  untrackPid(e.child.pid)
}

/** `ocpool metrics --once`: one exposition, which promtool must accept. */
const once = (env: NodeJS.ProcessEnv, args: ReadonlyArray<string> = []): string => {
  const r = spawnSync(process.execPath, [cli, "metrics", "--once", ...args], { env, encoding: "utf8", timeout: 60_000 })
  expect(r.stderr).toBe("")
  expect(r.status).toBe(0)
  const checked = promtool(["check", "metrics"], r.stdout)
  expect(checked.out).not.toMatch(/error/i)
  expect(checked.code, checked.out).toBe(0)
  return r.stdout
}

/** Polls `promql` until `expected(samples)` holds (Prometheus scrapes every second), at most 30 s. */
const eventually = async (prom: PrometheusServer, promql: string, holds: (s: ReadonlyArray<Sample>) => boolean): Promise<ReadonlyArray<Sample>> => {
  let last: ReadonlyArray<Sample> = []
  for (let i = 0; i < 150; i++) {
    last = await prom.query(promql)
    if (holds(last)) return last
    await sleep(200)
  }
  throw new Error(`${promql} never held; last ${JSON.stringify(last)}; targets ${JSON.stringify(await prom.targets())}; ${prom.log()}`)
}

/** `{label: value}` of a vector, for comparing with what the engine decided. */
const byLabel = (samples: ReadonlyArray<Sample>, label: string): Record<string, number> => Object.fromEntries(samples.map((s) => [s.metric[label] ?? "", s.value]))

const tally = <A>(xs: ReadonlyArray<A>, key: (x: A) => string): Record<string, number> => {
  const out: Record<string, number> = {}
  for (const x of xs) out[key(x)] = (out[key(x)] ?? 0) + 1
  return out
}

const bash = (session: string, call: string, command: string) => ({ input: { tool: "bash", sessionID: session, callID: call }, output: { args: { command, description: "run" } } })
const rateLimited = (message: string) => ({ name: "APIError", data: { message, statusCode: 429, isRetryable: true, responseHeaders: {} } })

describe("ocpool metrics scraped by a real Prometheus (issue 36)", () => {
  it("US-53 while the engine routes, cools and takes permits, Prometheus reads back what the engine decided: routes, limits by provider and class, permit waits", async () => {
    const home = tmp("ocpool-metrics-real-")
    const stateDir = join(home, "state")
    const trace = join(home, "trace.jsonl")
    writePool(home, POOL2.slots)
    const env = envOf(home)
    const saved = process.env.XDG_CONFIG_HOME
    process.env.XDG_CONFIG_HOME = join(home, "plugin-config")
    let b: Booted | undefined
    const exporter = await startExporter(env, ["--state-dir", stateDir])
    const prom = await startPrometheus([exporter.target])
    try {
      b = await boot({ models: POOL2, permits: { heavy: 1 }, stateDir, trace })
      // six spawns from one root: three on each slot (two first-pass, then second-pass)
      const agents: Array<string> = []
      for (let i = 1; i <= 6; i++) {
        const output = { args: { description: "d", prompt: "p", subagent_type: "explore" } as Record<string, unknown> }
        await b.hooks["tool.execute.before"]!({ tool: "task", sessionID: "ses_root", callID: `call_${i}` }, output)
        agents.push(output.args.subagent_type as string)
        await childCreated(b, `ses_child_${i}`, "ses_root", output.args.subagent_type as string)
      }
      // a 429 on a child of each slot: a rate limit and a quota
      await event(b, "session.error", { sessionID: "ses_child_1", error: rateLimited("Rate limit exceeded, retry after 120 seconds") })
      await event(b, "session.error", { sessionID: "ses_child_2", error: rateLimited("You exceeded your current quota, please check your plan and billing details") })
      await settle(b)
      // two heavy commands: the second waits for the first
      const first = bash("ses_a", "call_h1", "npm test")
      const second = bash("ses_b", "call_h2", "cargo build --release")
      await b.hooks["tool.execute.before"]!(first.input as never, first.output as never)
      const waiting = b.hooks["tool.execute.before"]!(second.input as never, second.output as never)
      await sleep(1_500)
      await b.hooks["tool.execute.after"]!({ ...first.input, args: first.output.args } as never, { title: "run", output: "ok\n", metadata: {} } as never)
      await waiting
      await b.hooks["tool.execute.after"]!({ ...second.input, args: second.output.args } as never, { title: "run", output: "ok\n", metadata: {} } as never)

      // what the engine decided, as it recorded it
      const decisions = readFileSync(`${trace}.decisions.jsonl`, "utf8")
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l) as Record<string, unknown>)
      const routes = decisions.filter((d) => d.type === "route")
      const cools = decisions.filter((d) => d.type === "cool")
      const grants = decisions.filter((d) => d.type === "permit" && d.act === "grant")
      expect(routes).toHaveLength(6)
      expect(cools.map((c) => c.reason).sort()).toEqual(["quota", "rate_limit"])
      expect(grants).toHaveLength(2)

      const up = await eventually(prom, 'up{job="ocpool"}', (s) => s.length === 1 && s[0]!.value === 1)
      expect(up).toHaveLength(1)
      const routed = await eventually(prom, "sum by (pass) (ocpool_routes_total)", (s) => s.reduce((n, x) => n + x.value, 0) === 6)
      expect(byLabel(routed, "pass")).toEqual(tally(routes, (r) => String(r.pass)))
      const limits = await eventually(prom, "ocpool_limits_total", (s) => s.length === 2)
      expect(Object.fromEntries(limits.map((s) => [`${s.metric.provider} ${s.metric.class}`, s.value]))).toEqual(
        tally(cools, (c) => `${String((c.models as Array<string>)[0]).split("/")[0]} ${String(c.reason)}`)
      )
      for (const s of limits) expect(s.metric.host).toBeTruthy()
      const cooldowns = await eventually(prom, "sum by (reason) (ocpool_cooldowns_total)", (s) => s.length === 2)
      expect(byLabel(cooldowns, "reason")).toEqual(tally(cools, (c) => String(c.reason)))
      // the permit waits: every grant counted, their waits summed, the 1.5 s wait in its bucket
      const waits = grants.map((g) => Number(g.waitedMs) / 1000)
      const count = await eventually(prom, 'ocpool_permit_wait_seconds_count{budget="heavy"}', (s) => s.length === 1 && s[0]!.value === grants.length)
      expect(count[0]!.value).toBe(2)
      const sum = await prom.query('ocpool_permit_wait_seconds_sum{budget="heavy"}')
      expect(sum[0]!.value).toBeCloseTo(waits.reduce((a, x) => a + x, 0), 3)
      expect(Math.max(...waits)).toBeGreaterThan(1.4)
      const within5 = await prom.query('ocpool_permit_wait_seconds_bucket{budget="heavy",le="5"}')
      expect(within5[0]!.value).toBe(2)
      const within1 = await prom.query('ocpool_permit_wait_seconds_bucket{budget="heavy",le="1"}')
      expect(within1[0]!.value).toBe(1)
      expect((await prom.query('ocpool_permit_requests_total{budget="heavy"}'))[0]!.value).toBe(2)
      // gauges read at scrape time: both slots cool, each with its reason and seconds left
      const cooling = await eventually(prom, "ocpool_cooling_seconds", (s) => s.length === 2)
      expect(Object.fromEntries(cooling.map((s) => [s.metric.model, s.metric.reason]))).toEqual(Object.fromEntries(cools.map((c) => [(c.models as Array<string>)[0], c.reason])))
      for (const s of cooling) expect(s.value).toBeGreaterThan(0)
      expect(byLabel(await prom.query("ocpool_slot_cap"), "model")).toEqual({ "zen/alpha": 2, "go/gamma": 2 })
      expect((await prom.query('ocpool_permits_capacity{budget="heavy"}'))[0]!.value).toBe(1)
      // what Prometheus scraped is an exposition promtool accepts
      once(env, ["--state-dir", stateDir])
    } finally {
      await b?.hooks.dispose?.()
      await prom.stop()
      await stopExporter(exporter)
      if (saved === undefined) delete process.env.XDG_CONFIG_HOME
      else process.env.XDG_CONFIG_HOME = saved
    }
  }, 120_000)
})

describe("ocpool metrics over a fleet (issue 36, real PostgreSQL)", () => {
  let cluster: PgCluster | undefined
  afterAll(() => cluster?.stop())
  const driver = join(root, "dist/dev-fleet-drive.js")

  const drive = (host: string, home: string, config: string, args: ReadonlyArray<string>) =>
    new Promise<{ code: number | null; lines: Array<Record<string, unknown>>; err: string }>((resolve, reject) => {
      const p = spawn(process.execPath, [driver, "--config", config, ...args], { env: envOf(home, { OCPOOL_HOST_ID: host }), stdio: ["ignore", "pipe", "pipe"] })
      let out = ""
      let err = ""
      p.stdout.on("data", (d: Buffer) => (out += d.toString()))
      p.stderr.on("data", (d: Buffer) => (err += d.toString()))
      p.on("error", reject)
      p.on("close", (code) => resolve({ code, err, lines: out.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as Record<string, unknown>) }))
    })

  it("US-53 two hosts' engines on one PostgreSQL: one exporter shows both hosts' counters and lease ages, labelled by host", async () => {
    cluster = await startPgCluster()
    const home = tmp("ocpool-metrics-fleet-")
    const slots = [{ model: "p/a", weight: 1 }, { model: "p/b", weight: 1 }]
    writePool(home, slots)
    const config = join(home, "options.json")
    writeFileSync(config, JSON.stringify({ state: { backend: "postgres", url: cluster.url }, stateDir: join(home, "state"), lockWaitMs: 60_000, models: { slots } }))
    const env = envOf(home, { OCPOOL_STATE_URL: cluster.url, OCPOOL_HOST_ID: "host-c" })
    // the schema first (the exporter reads it), then the drivers, scraped while they run
    const init = spawnSync(process.execPath, [cli, "fleet", "init", "--url", cluster.url], { env, encoding: "utf8", timeout: 60_000 })
    expect(init.status, init.stderr).toBe(0)
    const exporter = await startExporter(env)
    const prom = await startPrometheus([exporter.target])
    try {
      const startAt = Date.now() + 2_000
      const common = ["--picks", "60", "--hold", "2", "--pause-ms", "200", "--start-at", String(startAt)]
      const driving = Promise.all([
        drive("host-a", home, config, [...common, "--seed", "1", "--cool-after", "4", "--cool-model", "p/a", "--cool-ms", "60000"]),
        drive("host-b", home, config, [...common, "--seed", "2"])
      ])
      // while both hosts hold leases: a lease age each
      const leases = await eventually(prom, "ocpool_fleet_host_lease_age_seconds", (s) => ["host-a", "host-b"].every((h) => s.some((x) => x.metric.host === h)))
      for (const s of leases) expect(s.value).toBeGreaterThanOrEqual(0)
      const [a, b] = await driving
      for (const r of [a, b]) expect(r.code, r.err).toBe(0)
      const picks = (r: typeof a) => r.lines.filter((l) => l.ev === "pick").length
      const routed = await eventually(prom, "sum by (host) (ocpool_routes_total)", (s) => s.length === 2 && s.reduce((n, x) => n + x.value, 0) === picks(a) + picks(b))
      expect(byLabel(routed, "host")).toEqual({ "host-a": picks(a), "host-b": picks(b) })
      const limits = await eventually(prom, "ocpool_limits_total", (s) => s.length === 1)
      expect(limits[0]!.metric).toMatchObject({ host: "host-a", provider: "p", class: "rate_limit" })
      expect(limits[0]!.value).toBe(1)
      const cooling = await eventually(prom, "ocpool_cooling_seconds", (s) => s.length === 1)
      expect(cooling[0]!.metric).toMatchObject({ model: "p/a", reason: "rate_limit" })
      once(env)
    } finally {
      await prom.stop()
      await stopExporter(exporter)
    }
  }, 180_000)
})
