/**
 * Fleet mode keeps this machine's caps when the server is away (issue 32): a host's own claims and
 * permits are written through to its state database, so a decision that falls back while PostgreSQL
 * is down sees this machine's holders. The repro: host A's `ocpool run -- sleep` holds the only
 * permit, PostgreSQL stops, and a second `ocpool run` on the same host waits for it instead of being
 * granted at once. A throwaway cluster (test/real/pgCluster.ts) and the built CLI.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { spawn, spawnSync } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { startPgCluster } from "./pgCluster.js"

const cli = join(new URL("../../", import.meta.url).pathname, "bin/ocpool.js")
const cluster = await startPgCluster()
afterAll(() => cluster.stop())

describe("fleet mode during an outage (issue 32)", () => {
  it("US-52 PostgreSQL stopped while a permit is held: the second ocpool run on the same host waits for the holder, then runs", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ocpool-outage-"))
    const env = { ...process.env, OCPOOL_STATE_URL: cluster.url, OCPOOL_STATE_DIR: join(dir, "state"), OCPOOL_PERMITS: "1", OCPOOL_HOST_ID: "host-a", NO_COLOR: "1" }
    const mark = join(dir, "second-ran")
    const first = spawn(process.execPath, [cli, "run", "--", "sh", "-c", "echo held; sleep 6"], { env, stdio: ["ignore", "pipe", "pipe"] })
    await new Promise<void>((resolve) => first.stdout!.once("data", () => resolve()))
    await cluster.stopOnly()
    try {
      const t0 = Date.now()
      const second = spawnSync(process.execPath, [cli, "run", "--wait", "2s", "--", "sh", "-c", `date +%s%N > ${mark}`], { env, encoding: "utf8", timeout: 60_000 })
      // not granted while the holder's sleep runs: the state directory's database knows this host's holder
      expect(second.status).toBe(75)
      expect(Date.now() - t0).toBeGreaterThanOrEqual(2_000)
      const firstExit = await new Promise<number | null>((resolve) => first.once("exit", (code) => resolve(code)))
      expect(firstExit).toBe(0)
      const third = spawnSync(process.execPath, [cli, "run", "--wait", "10s", "--", "true"], { env, encoding: "utf8", timeout: 60_000 })
      expect(third.status).toBe(0)
    } finally {
      first.kill("SIGKILL")
      await cluster.start()
    }
  }, 120_000)
})
