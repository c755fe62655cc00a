/**
 * Concurrency stress (`npm run test:stress`): 8 Node processes on one state dir, 300 spawn/release
 * cycles each through the real file layers, the pool lock never failing open, one process SIGKILLed
 * midway. Afterwards: no non-overflow pick exceeded 2×weight, the killed process's claims are gone,
 * every file parses, no stale *.tmp remains.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { basename, join } from "node:path"
import * as esbuild from "esbuild"

const root = new URL("../../", import.meta.url).pathname
const WORKERS = 8
const CYCLES = Number(process.env.STRESS_CYCLES ?? 300)

interface Result {
  readonly id: string
  readonly picks: ReadonlyArray<{ slot: number; load: number; cap: number; pass: string; global: number | undefined }>
  readonly failOpens: number
}

describe("cross-process stress", () => {
  it("US-40 8 processes × 300 cycles on one state dir keep every non-overflow pick within 2×weight; a SIGKILLed process's claims are reclaimed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ocpool-stress-"))
    // inside the repository, so that the bundle finds node_modules (better-sqlite3 is loaded at run time)
    const bundle = join(root, "node_modules", ".ocpool-stress", `${basename(dir)}-worker.mjs`)
    await esbuild.build({
      entryPoints: [join(root, "test/stress/worker.ts")],
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      outfile: bundle,
      logLevel: "warning",
      banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" }
    })
    const stateDir = join(dir, "state")
    const victim = 3
    let killedPid = 0
    const runs = Array.from({ length: WORKERS }, (_, i) =>
      new Promise<Result | undefined>((resolve, reject) => {
        const child = spawn(process.execPath, [bundle, stateDir, String(CYCLES), String(i)], { stdio: ["ignore", "pipe", "pipe"] })
        let out = ""
        child.stdout.on("data", (d: Buffer) => (out += d.toString()))
        child.stderr.on("data", (d: Buffer) => {
          if (i === victim && d.toString().includes(`half ${i}`) && killedPid === 0) {
            killedPid = child.pid!
            child.kill("SIGKILL")
          }
        })
        const timer = setTimeout(() => child.kill("SIGKILL"), 240_000)
        child.on("exit", (code, signal) => {
          clearTimeout(timer)
          if (signal === "SIGKILL" && i === victim) return resolve(undefined)
          if (code !== 0) return reject(new Error(`worker ${i} exited ${code ?? signal}: ${out.slice(-500)}`))
          resolve(JSON.parse(out.trim().split("\n").at(-1)!) as Result)
        })
      })
    )
    const results = (await Promise.all(runs)).filter((r): r is Result => r !== undefined)
    expect(killedPid).toBeGreaterThan(0)
    expect(results).toHaveLength(WORKERS - 1)
    const picks = results.flatMap((r) => r.picks)
    expect(picks.length).toBe((WORKERS - 1) * CYCLES)
    expect(results.reduce((n, r) => n + r.failOpens, 0)).toBe(0)
    // `global` is the picked model's load over every process's files, read right after the publish,
    // still under the pool lock: without the lock two processes can both take the last place.
    expect(picks.every((p) => p.global !== undefined)).toBe(true)
    const over = picks.filter((p) => p.pass !== "overflow" && (p.load > p.cap || p.global! > p.cap))
    expect(over).toEqual([])
    expect(picks.some((p) => p.pass === "overflow")).toBe(true)
    // after the others finished (each routed after the kill), the dead holder's file is gone
    const files = readdirSync(stateDir)
    expect(files.filter((f) => f === `claims.${killedPid}.json`)).toEqual([])
    for (const f of files.filter((n) => n.endsWith(".json"))) expect(() => JSON.parse(readFileSync(join(stateDir, f), "utf8"))).not.toThrow()
    const now = Date.now()
    expect(files.filter((f) => f.endsWith(".tmp") && now - statSync(join(stateDir, f)).mtimeMs > 60_000)).toEqual([])
  }, 300_000)
})
