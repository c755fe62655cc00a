/** `ocpool metrics` (issue 36), run as the built CLI over a state directory written through the real SQLite port: --once, the server, its paths and methods, bad input, signals. */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { spawn, spawnSync, type ChildProcess } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { cli, ensureBuilt } from "./builtCli.js"
import { count } from "../../src/core/metrics/counters.js"
import { countInto, metricsStateDir } from "./metricsState.js"

const POOL = join(mkdtempSync(join(tmpdir(), "ocpool-metrics-pool-")), "pool.json")
writeFileSync(POOL, JSON.stringify({ slots: [{ model: "fakeA/pool-a", weight: 2 }, { model: "fakeB/pool-b", weight: 1 }] }))
const env = () => ({ ...process.env, XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), "ocpool-metrics-cfg-")), OCPOOL_STATE_DIR: "", OCPOOL_STATE_URL: "", OCPOOL_HOST_ID: "", NO_COLOR: "1" })
const ocpool = (args: ReadonlyArray<string>) => {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: "utf8", timeout: 30_000, env: env() })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

/** The exporter started on a free port: its process and base URL, once it printed its start line. */
const serve = (dir: string): Promise<{ child: ChildProcess; base: string; line: string; exit: Promise<number | null> }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, "metrics", "--listen", "127.0.0.1:0", "--state-dir", dir, "--pool", POOL], { env: env(), stdio: ["ignore", "pipe", "pipe"] })
    const exit = new Promise<number | null>((done) => child.on("exit", (code) => done(code)))
    let out = ""
    let err = ""
    child.stderr!.on("data", (b: Buffer) => (err += b.toString()))
    child.stdout!.on("data", (b: Buffer) => {
      out += b.toString()
      const m = /^ocpool metrics: serving (http:\/\/127\.0\.0\.1:\d+)\/metrics \(state sqlite (.*)\)\n/.exec(out)
      if (m !== null) resolve({ child, base: m[1]!, line: out.trimEnd(), exit })
    })
    child.on("exit", (code) => reject(new Error(`exited ${code} before serving: ${out}${err}`)))
  })

let dir = ""
beforeAll(async () => {
  ensureBuilt("metrics --help")
  dir = await metricsStateDir()
}, 120_000)

const children: Array<ChildProcess> = []
afterAll(() => children.forEach((c) => c.kill("SIGKILL")))

describe("ocpool metrics", () => {
  it("US-53 --once prints one exposition of the stored counts (cumulative buckets, every host), the gauges of the pool, exit 0", () => {
    const r = ocpool(["metrics", "--once", "--state-dir", dir, "--pool", POOL])
    expect(r.stderr).toBe("")
    expect(r.code).toBe(0)
    const host = /ocpool_routes_total\{host="([^"]*)",base="explore",pass="first"\} 2\n/.exec(r.stdout)?.[1]
    expect(host).toBeDefined()
    expect(r.stdout).toContain(`ocpool_limits_total{host="${host}",provider="openrouter",class="rate_limit"} 3\n`)
    expect(r.stdout).toContain(`ocpool_limits_total{host="${host}",provider="or \\"x\\"\\\\\\n\\\\x00\uFFFD",class="quota"} 1\n`)
    expect(r.stdout).toContain(`ocpool_fail_opens_total{host="${host}"} 1\n`)
    expect(r.stdout).toContain(`ocpool_permit_wait_seconds_bucket{host="${host}",budget="heavy",le="1"} 1\nocpool_permit_wait_seconds_bucket{host="${host}",budget="heavy",le="5"} 1\n`)
    expect(r.stdout).toContain(`ocpool_permit_wait_seconds_bucket{host="${host}",budget="heavy",le="60"} 2\n`)
    expect(r.stdout).toContain(`ocpool_permit_wait_seconds_bucket{host="${host}",budget="heavy",le="+Inf"} 3\nocpool_permit_wait_seconds_sum{host="${host}",budget="heavy"} 7242.5\nocpool_permit_wait_seconds_count{host="${host}",budget="heavy"} 3\n`)
    expect(r.stdout).toContain('ocpool_slot_load{slot="1",model="fakeA/pool-a"} 1\nocpool_slot_load{slot="2",model="fakeB/pool-b"} 0\n')
    expect(r.stdout).toMatch(/ocpool_cooling_seconds\{model="fakeB\/pool-b",reason="rate_limit"\} (89|90)(\.\d+)?\n/)
    expect(r.stdout).toContain("ocpool_claims 1\n")
  })

  it("US-53 --once on a state directory not made yet: the families, no counts, exit 0", () => {
    const r = ocpool(["metrics", "--once", "--state-dir", join(dir, "absent"), "--pool", POOL])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain("# TYPE ocpool_routes_total counter\n# HELP")
    expect(r.stdout).toContain("ocpool_claims 0\n")
  })

  it("US-53 serves /metrics (the format's content type, read afresh), / links it, other paths 404, other methods 405; SIGTERM closes it with 0", async () => {
    const s = await serve(dir)
    children.push(s.child)
    expect(s.line).toBe(`ocpool metrics: serving ${s.base}/metrics (state sqlite ${dir})`)
    const m = await fetch(`${s.base}/metrics`)
    expect(m.status).toBe(200)
    expect(m.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8")
    expect(await m.text()).toMatch(/ocpool_routes_total\{host="[^"]*",base="explore",pass="first"\} 2\n/)
    // a scrape reads afresh: counts written after the start are served
    await countInto(dir, [count("routes_total", ["explore", "first"])])
    expect(await (await fetch(`${s.base}/metrics?x=1`)).text()).toMatch(/ocpool_routes_total\{host="[^"]*",base="explore",pass="first"\} 3\n/)
    const index = await fetch(`${s.base}/`)
    expect(index.status).toBe(200)
    expect(await index.text()).toContain('<a href="/metrics">')
    expect((await fetch(`${s.base}/nope`)).status).toBe(404)
    const post = await fetch(`${s.base}/metrics`, { method: "POST", body: "x" })
    expect(post.status).toBe(405)
    expect(post.headers.get("allow")).toBe("GET, HEAD")
    const head = await fetch(`${s.base}/metrics`, { method: "HEAD" })
    expect(head.status).toBe(200)
    expect(await head.text()).toBe("")
    s.child.kill("SIGTERM")
    expect(await s.exit).toBe(0)
  }, 30_000)

  it("US-53 SIGINT closes it with 0 too", async () => {
    const s = await serve(dir)
    children.push(s.child)
    s.child.kill("SIGINT")
    expect(await s.exit).toBe(0)
  }, 30_000)

  it("US-53 a port in use: one line naming it and what to do, exit 2", async () => {
    const busy = createServer()
    await new Promise<void>((r) => busy.listen(0, "127.0.0.1", r))
    const port = (busy.address() as { port: number }).port
    try {
      const r = ocpool(["metrics", "--listen", `127.0.0.1:${port}`, "--state-dir", dir, "--pool", POOL])
      expect(r).toEqual({ code: 2, stdout: "", stderr: `ocpool: --listen 127.0.0.1:${port}: port ${port} is in use on 127.0.0.1 (another ocpool metrics or exporter?); stop it, or choose another port with --listen HOST:PORT\n` })
    } finally {
      busy.close()
    }
  })

  it("US-53 bad input is one line and exit 2: a malformed --listen, a state directory that is not one", () => {
    for (const bad of ["9464", "localhost:", "host:99999", "[zz]:1", "a b:1"]) {
      const r = ocpool(["metrics", "--listen", bad, "--state-dir", dir])
      expect(r.code).toBe(2)
      expect(r.stdout).toBe("")
      expect(r.stderr.split("\n")).toHaveLength(2)
      expect(r.stderr).toMatch(/^ocpool: --listen ".*": .* \(expected HOST:PORT, e\.g\. 127\.0\.0\.1:9464, \[::1\]:9464 or :9464 for every interface\)\n$/)
    }
    const r = ocpool(["metrics", "--once", "--state-dir", POOL])
    expect(r).toEqual({ code: 2, stdout: "", stderr: `ocpool: state dir ${POOL} unreadable: not a directory (name a readable directory with --state-dir)\n` })
  })
})
