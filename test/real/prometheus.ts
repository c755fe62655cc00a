/**
 * A real, throwaway Prometheus for tests (issue 36): Debian's `prometheus` started on loopback at a free
 * port, with a scrape config written here (one job, `ocpool`, scraping the given targets every second)
 * and its TSDB in a temp dir; queried through its HTTP API. Its pid and dir are tracked
 * (test/real/procs.ts), so a crashed run leaves nothing.
 */
import { spawn, spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort, sleep, stopTree, trackDir, trackPid, untrackPid } from "./procs.js"

export const PROMETHEUS = "/usr/bin/prometheus"
export const PROMTOOL = "/usr/bin/promtool"
const MISSING = "Prometheus not found (prometheus, promtool): install the Debian package prometheus (apt-get install -y prometheus)"

/** Fails in one line naming the package when Prometheus or promtool is missing. */
export const needPrometheus = (): void => {
  if (!existsSync(PROMETHEUS) || !existsSync(PROMTOOL)) throw new Error(MISSING)
}

/** `promtool <args>` with `input` on its standard input: its exit code and what it printed. */
export const promtool = (args: ReadonlyArray<string>, input?: string) => {
  needPrometheus()
  const r = spawnSync(PROMTOOL, args, { input, encoding: "utf8", timeout: 60_000 })
  return { code: r.status, out: `${r.stdout}${r.stderr}` }
}

export interface Sample {
  readonly metric: Record<string, string>
  readonly value: number
}

export interface PrometheusServer {
  readonly url: string
  /** An instant query's vector, each series' labels and value. */
  query(promql: string): Promise<ReadonlyArray<Sample>>
  /** The scrape targets' health (`up`, `down`, `unknown`) and last error. */
  targets(): Promise<ReadonlyArray<{ readonly health: string; readonly lastError: string; readonly scrapeUrl: string }>>
  log(): string
  stop(): Promise<void>
}

/** Starts Prometheus scraping `targets` (`host:port`) every second; resolves once its API answers. */
export const startPrometheus = async (targets: ReadonlyArray<string>): Promise<PrometheusServer> => {
  needPrometheus()
  const dir = mkdtempSync(join(tmpdir(), "ocpool-prometheus-"))
  trackDir(dir)
  const port = await freePort()
  const config = join(dir, "prometheus.yml")
  writeFileSync(
    config,
    ["global:", "  scrape_interval: 1s", "  scrape_timeout: 1s", "scrape_configs:", "  - job_name: ocpool", "    static_configs:", `      - targets: [${targets.map((t) => `"${t}"`).join(", ")}]`, ""].join("\n")
  )
  let log = ""
  const child = spawn(PROMETHEUS, [`--config.file=${config}`, `--storage.tsdb.path=${join(dir, "data")}`, `--web.listen-address=127.0.0.1:${port}`, "--log.level=warn"], {
    stdio: ["ignore", "pipe", "pipe"]
  })
  trackPid(child.pid)
  child.stdout.on("data", (b: Buffer) => (log += b.toString()))
  child.stderr.on("data", (b: Buffer) => (log += b.toString()))
  const url = `http://127.0.0.1:${port}`
  const api = async <A>(path: string): Promise<A> => {
    const r = await fetch(`${url}${path}`)
    const body = (await r.json()) as { status: string; data: A; error?: string }
    if (body.status !== "success") throw new Error(`prometheus ${path}: ${body.error ?? r.status}`)
    return body.data
  }
  const server: PrometheusServer = {
    url,
    query: async (promql) => {
      const data = await api<{ result: Array<{ metric: Record<string, string>; value: [number, string] }> }>(`/api/v1/query?query=${encodeURIComponent(promql)}`)
      return data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }))
    },
    targets: async () => (await api<{ activeTargets: Array<{ health: string; lastError: string; scrapeUrl: string }> }>("/api/v1/targets")).activeTargets,
    log: () => log,
    stop: async () => {
      await stopTree(child)
      untrackPid(child.pid)
    }
  }
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`prometheus exited ${child.exitCode}: ${log}`)
    try {
      const r = await fetch(`${url}/-/ready`)
      if (r.ok) return server
    } catch {
      // not listening yet
    }
    await sleep(100)
  }
  await server.stop()
  throw new Error(`prometheus did not become ready in 30 s: ${log}`)
}
