/**
 * The fleet in the CLI's views (issue 22 item 4), on a real throwaway PostgreSQL (test/real/pgCluster.ts):
 * the built `ocpool status`, `status --json`, `permits`, `permits --json` and `doctor` with
 * OCPOOL_STATE_URL pointing at a server where two other hosts committed claims and a permit through the
 * port (host-x live, host-y whose lease ran out), then at a port nothing listens on. The password is
 * never printed. Needs `npm run build` first.
 */
import { describe, expect, it } from "@effect/vitest"
import { afterAll } from "vitest"
import { Effect, Layer } from "effect"
import { spawnSync } from "node:child_process"
import { chmodSync, mkdirSync, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { PermitEntry } from "../../src/core/permits/types.js"
import { sharedStateLayer } from "../../src/layers/state/sharedStateLayer.js"
import { startTimeOf } from "../../src/layers/state/proc.js"
import { SharedState } from "../../src/services/state/SharedState.js"
import { StateDir } from "../../src/services/state/StateDir.js"
import { cli } from "../cli/builtCli.js"
import { makeClaim } from "../helpers.js"
import { startPgCluster } from "./pgCluster.js"

const PASSWORD = "s3cret-pw"
const cluster = await startPgCluster({ password: PASSWORD })
afterAll(() => cluster.stop())

const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), "ocpool-fleetviews-"))
  chmodSync(d, 0o700)
  return d
}
const home = tmp()
const stateDir = join(home, "state")
mkdirSync(stateDir, { mode: 0o700 })
const masked = cluster.url.replace(`:${PASSWORD}@`, ":***@")
const deadUrl = cluster.url.replace(/:(\d+)\//, ":1/")
const deadMasked = deadUrl.replace(`:${PASSWORD}@`, ":***@")

/** The built CLI as host-a, reading `url`. */
const ocpool = (args: ReadonlyArray<string>, url: string) => {
  const r = spawnSync(process.execPath, [cli, ...args], {
    encoding: "utf8",
    timeout: 60_000,
    env: {
      ...process.env,
      OCPOOL_STATE_URL: url,
      OCPOOL_HOST_ID: "host-a",
      OCPOOL_STATE_DIR: stateDir,
      OCPOOL_PERMITS: "1",
      XDG_CONFIG_HOME: join(home, "config"),
      XDG_STATE_HOME: join(home, "xstate"),
      XDG_DATA_HOME: join(home, "data")
    }
  })
  expect(`${r.stdout}${r.stderr}`).not.toContain(PASSWORD)
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

/** Commits `claims` (and `permits`) as process `pid` of `host`, through the port over the cluster's default schema. */
const commitAs = (host: string, pid: number, keys: ReadonlyArray<string>, permits: ReadonlyArray<PermitEntry> = []) => {
  const now = Date.now()
  const port = sharedStateLayer({ backend: "postgres", url: cluster.url, schema: "ocpool", leaseMs: 300_000, lockWaitMs: 10_000 }).pipe(
    Layer.provide(Layer.succeed(StateDir, { dir: tmp(), trusted: true, pid, host, startTime: null }))
  )
  return Effect.flatMap(SharedState, (s) =>
    s.commit(now, {
      ...(keys.length === 0 ? {} : { claims: { claims: keys.map((k) => makeClaim(k, "zen/alpha", "explore", now)), reaped: 0 } }),
      cool: [],
      uncool: [],
      permits: { put: permits, remove: [] }
    })
  ).pipe(Effect.provide(port), Effect.scoped)
}

const heldBy = (host: string, pid: number): PermitEntry => ({
  id: "p-feed0001",
  token: "t-feed0001",
  budget: "heavy",
  weight: 1,
  reason: "npm test",
  holder: { host, pid, startToken: null, via: "run" },
  seq: 1,
  requestedAt: Date.now() - 5_000,
  grantedAt: Date.now() - 4_000
})

interface FleetJson {
  readonly reachable: boolean
  readonly url: string
  readonly schema: string
  readonly host: string
  readonly schemaVersion?: number
  readonly reason?: string
  readonly hosts?: ReadonlyArray<{ readonly host: string; readonly live: boolean; readonly claims: number; readonly permits: number }>
}

describe("the fleet in ocpool status, permits and doctor", () => {
  it.live("US-52 with OCPOOL_STATE_URL the views show every host (live, or lease expired with when), their claims and permits, the URL masked", () =>
    Effect.gen(function* () {
      yield* commitAs("host-x", 4242, ["x:1", "x:2"], [heldBy("host-x", 4242)])
      // host-y waits for a permit; its lease ran out 40 s ago (a holder with permits stays on record until they are freed)
      yield* commitAs("host-y", 5151, [], [{ ...heldBy("host-y", 5151), id: "p-feed0002", token: "t-feed0002", seq: 2, grantedAt: undefined }])
      const t = Date.now()
      yield* Effect.promise(() =>
        cluster.psql(
          `INSERT INTO ocpool.holders (host, pid, start_token, lease_until, seen_at) VALUES ('host-y', 5151, NULL, ${t - 40_000}, ${t - 70_000}) ON CONFLICT (host, pid) DO UPDATE SET lease_until = EXCLUDED.lease_until`
        )
      )

      const text = ocpool(["status"], cluster.url)
      expect(text.code).toBe(0)
      expect(text.stdout).toContain(`fleet: postgres ${masked} schema ocpool, this host host-a, round trip `)
      expect(text.stdout).toMatch(/^ {2}host-x {2}live \(1\/1 process\), lease until \d\d:\d\d:\d\dZ {2}2 claims {2}1 permit$/m)
      expect(text.stdout).toMatch(/^ {2}host-y {2}lease expired \d\d:\d\d:\d\dZ \(4\ds ago\) {2}0 claims {2}1 permit$/m)
      expect(text.stdout).toContain("process 4242@host-x: 2 claims")
      expect(text.stdout).not.toContain("@host-y")

      const json = JSON.parse(ocpool(["status", "--json"], cluster.url).stdout) as { fleet: FleetJson; processes: ReadonlyArray<{ pid: number; host: string; claims: number }> }
      expect(json.fleet).toMatchObject({ reachable: true, url: masked, schema: "ocpool", host: "host-a", schemaVersion: 5 })
      expect(json.fleet.hosts!.filter((h) => h.host !== "host-a").map((h) => [h.host, h.live, h.claims, h.permits])).toEqual([
        ["host-x", true, 2, 1],
        ["host-y", false, 0, 1]
      ])
      expect(json.processes).toContainEqual({ pid: 4242, host: "host-x", claims: 2, reaped: 0 })

      const permits = ocpool(["permits"], cluster.url)
      expect(permits.code).toBe(0)
      expect(permits.stdout).toMatch(/p-feed0001 {2}pid 4242 on host-x {2}via run/)
      expect(permits.stdout).toMatch(/1\. p-feed0002 {2}pid 5151 on host-y {2}via run .* \[requester gone\]/)
      expect(permits.stdout).toMatch(/^ {2}host-x {2}live .* {2}1 permit$/m)
      const permitsJson = JSON.parse(ocpool(["permits", "--json"], cluster.url).stdout) as { budgets: ReadonlyArray<{ name: string; holders: ReadonlyArray<{ id: string; host: string }> }>; fleet: FleetJson }
      expect(permitsJson.budgets.find((b) => b.name === "heavy")!.holders.map((h) => [h.id, h.host])).toEqual([["p-feed0001", "host-x"]])
      expect(permitsJson.fleet.hosts!.find((h) => h.host === "host-x")).toMatchObject({ live: true, permits: 1 })

      const doctor = ocpool(["doctor", "--json"], cluster.url)
      const report = JSON.parse(doctor.stdout) as { checks: ReadonlyArray<{ id: string; status: string; detail: string }>; ok: boolean }
      const backend = report.checks.find((c) => c.id === "state-backend")!
      expect(backend.status).toBe("ok")
      expect(backend.detail).toMatch(new RegExp(`^postgres ${masked.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} schema ocpool; round trip \\d+(\\.\\d)? ms; schema version 5 \\(expected 5\\); host host-a; `))
      expect(doctor.code).toBe(report.ok ? 0 : 1)
      expect(ocpool(["doctor"], cluster.url).stdout).toMatch(/^ok {3}state-backend postgres /m)
    })
  )

  it.live("US-52 with the server away: one line says so (masked URL, reason), the rest is the state directory's; doctor warns; exit codes as for warnings", () =>
    Effect.gen(function* () {
      // a live local process of host-a with a claim in the state directory
      const files = sharedStateLayer({ backend: "sqlite", lockWaitMs: 1_000 }).pipe(
        Layer.provide(Layer.succeed(StateDir, { dir: stateDir, trusted: true, pid: process.pid, host: "host-a", startTime: startTimeOf(process.pid) }))
      )
      const now = Date.now()
      yield* Effect.flatMap(SharedState, (s) => s.commit(now, { claims: { claims: [makeClaim("local:1", "zen/alpha", "explore", now)], reaped: 0 }, cool: [], uncool: [] })).pipe(
        Effect.provide(files),
        Effect.scoped
      )

      const text = ocpool(["status"], deadUrl)
      expect(text.code).toBe(0)
      expect(text.stdout).toMatch(new RegExp(`^fleet: server unreachable, showing this host \\(postgres ${deadMasked.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} schema ocpool did not answer: .+\\)$`, "m"))
      expect(text.stdout).toContain(`process ${process.pid}@host-a: 1 claim`)
      expect(text.stdout).not.toContain("host-x")

      const json = JSON.parse(ocpool(["status", "--json"], deadUrl).stdout) as { fleet: FleetJson }
      expect(json.fleet).toMatchObject({ reachable: false, url: deadMasked, schema: "ocpool" })
      expect(json.fleet.reason).toMatch(/ECONNREFUSED/)

      const permits = ocpool(["permits"], deadUrl)
      expect(permits.code).toBe(0)
      expect(permits.stdout).toContain(`fleet: server unreachable, showing this host (postgres ${deadMasked} schema ocpool did not answer: `)

      const doctor = ocpool(["doctor", "--json"], deadUrl)
      const report = JSON.parse(doctor.stdout) as { checks: ReadonlyArray<{ id: string; status: string; detail: string }>; ok: boolean }
      const backend = report.checks.find((c) => c.id === "state-backend")!
      expect(backend.status).toBe("warn")
      expect(backend.detail).toContain(`postgres ${deadMasked} schema ocpool did not answer (`)
      expect(doctor.code).toBe(report.ok ? 0 : 1)
    })
  )
})
