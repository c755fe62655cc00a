/**
 * `ocpool metrics` in fleet mode (issue 36) on a real throwaway PostgreSQL (test/real/pgCluster.ts):
 * two hosts count through the port; one exporter, on a third host, shows both hosts' counters with
 * their `host` label, a lease gauge per host and the server reachable, the password nowhere; promtool
 * accepts the exposition.
 */
import { describe, expect, it } from "@effect/vitest"
import { afterAll, beforeAll } from "vitest"
import { Effect, Layer } from "effect"
import { spawnSync } from "node:child_process"
import { chmodSync, existsSync, mkdirSync, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { count, observeWait, type Count } from "../../src/core/metrics/counters.js"
import { sharedStateLayer } from "../../src/layers/state/sharedStateLayer.js"
import { SharedState } from "../../src/services/state/SharedState.js"
import { StateDir } from "../../src/services/state/StateDir.js"
import { cli, ensureBuilt } from "../cli/builtCli.js"
import { makeClaim } from "../helpers.js"
import { startPgCluster } from "./pgCluster.js"

const PROMTOOL = ["/usr/bin/promtool", "/usr/local/bin/promtool"].find(existsSync)
if (PROMTOOL === undefined) throw new Error("promtool not found: install the Debian package prometheus (apt-get install -y prometheus)")

const PASSWORD = "s3cret-pw"
const cluster = await startPgCluster({ password: PASSWORD })
afterAll(() => cluster.stop())
beforeAll(() => ensureBuilt("metrics --help"), 120_000)

const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), "ocpool-metricsfleet-"))
  chmodSync(d, 0o700)
  return d
}

/** `counts` and one claim committed as process `pid` of `host`, through the port over the cluster. */
const countAs = (host: string, pid: number, counts: ReadonlyArray<Count>) => {
  const now = Date.now()
  const port = sharedStateLayer({ backend: "postgres", url: cluster.url, schema: "ocpool", leaseMs: 300_000, lockWaitMs: 10_000 }).pipe(
    Layer.provide(Layer.succeed(StateDir, { dir: tmp(), trusted: true, pid, host, startTime: null }))
  )
  return Effect.runPromise(
    Effect.flatMap(SharedState, (s) => s.commit(now, { claims: { claims: [makeClaim(`k-${host}`, "zen/alpha", "explore", now)], reaped: 0 }, cool: [], uncool: [], counts })).pipe(Effect.provide(port), Effect.scoped)
  )
}

describe("ocpool metrics over PostgreSQL", () => {
  it("US-53 one exporter shows every host's counters (host label), a lease gauge per host, the server reachable; the password nowhere; promtool accepts it", async () => {
    await countAs("host-b", process.pid, [count("routes_total", ["explore", "first"], 2), count("limits_total", ["zen", "rate_limit"]), ...observeWait("heavy", 3)])
    await countAs("host-c", process.pid, [count("routes_total", ["explore", "first"]), count("fail_opens_total")])
    const home = tmp()
    mkdirSync(join(home, "state"), { mode: 0o700 })
    const r = spawnSync(process.execPath, [cli, "metrics", "--once"], {
      encoding: "utf8",
      timeout: 60_000,
      env: { ...process.env, OCPOOL_STATE_URL: cluster.url, OCPOOL_HOST_ID: "host-a", OCPOOL_STATE_DIR: join(home, "state"), XDG_CONFIG_HOME: join(home, "config") }
    })
    expect(r.stderr).toBe("")
    expect(r.status).toBe(0)
    expect(r.stdout).not.toContain(PASSWORD)
    expect(r.stdout).toContain('ocpool_routes_total{host="host-b",base="explore",pass="first"} 2\nocpool_routes_total{host="host-c",base="explore",pass="first"} 1\n')
    expect(r.stdout).toContain('ocpool_fail_opens_total{host="host-b"} 0\nocpool_fail_opens_total{host="host-c"} 1\n')
    expect(r.stdout).toContain('ocpool_permit_wait_seconds_bucket{host="host-b",budget="heavy",le="5"} 1\n')
    expect(r.stdout).toContain("ocpool_fleet_reachable 1\n")
    expect(r.stdout).toMatch(/ocpool_fleet_host_lease_age_seconds\{host="host-b"\} \d+(\.\d+)?\nocpool_fleet_host_lease_age_seconds\{host="host-c"\} \d+(\.\d+)?\n/)
    expect(r.stdout).toContain('ocpool_fleet_host_live{host="host-b"} 1\n')
    expect(r.stdout).toContain("ocpool_claims 2\n")
    const check = spawnSync(PROMTOOL, ["check", "metrics"], { input: r.stdout, encoding: "utf8", timeout: 30_000 })
    expect({ status: check.status, stdout: check.stdout, stderr: check.stderr }).toEqual({ status: 0, stdout: "", stderr: "" })
  })
})
