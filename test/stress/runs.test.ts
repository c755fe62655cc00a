/**
 * `ocpool run` under contention (issue 32, `npm run test:stress`): 60 concurrent runs of the built CLI
 * on a budget of 2 while 4 CPU burners load the machine, each command recording its start and end:
 * every command runs exactly once, never more than 2 at once, every runner exits with its command's
 * code. Then again with 15 random SIGKILLs of runners (queued or running): no other runner is
 * affected, commands still never overlap beyond 2, and no permit is left held afterwards.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawn, spawnSync, type ChildProcess } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { permitEntriesIn } from "../support/stateDb.js"

const root = new URL("../../", import.meta.url).pathname
const cli = join(root, "bin/ocpool.js")
const RUNS = 60
const CAPACITY = 2
const KILLS = 15
const BURNERS = 4

interface Ran {
  readonly i: number
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

/** Each command's recorded start and end (ns), from its marks file. */
const marksOf = (dir: string, i: number): { readonly starts: ReadonlyArray<bigint>; readonly ends: ReadonlyArray<bigint> } => {
  const file = join(dir, `marks.${i}`)
  const lines = existsSync(file) ? readFileSync(file, "utf8").split("\n").filter((l) => l !== "") : []
  return { starts: lines.filter((l) => l.startsWith("start ")).map((l) => BigInt(l.slice(6))), ends: lines.filter((l) => l.startsWith("end ")).map((l) => BigInt(l.slice(4))) }
}

/** The most commands running at one instant. */
const maxOverlap = (spans: ReadonlyArray<readonly [bigint, bigint]>): number => {
  const events = spans.flatMap(([s, e]) => [[s, 1] as const, [e, -1] as const]).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]))
  let now = 0
  let most = 0
  for (const [, d] of events) {
    now += d
    most = Math.max(most, now)
  }
  return most
}

const burners = (): Array<ChildProcess> => Array.from({ length: BURNERS }, () => spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "ignore" }))

const runAll = async (dir: string, kills: ReadonlySet<number>): Promise<ReadonlyArray<Ran>> => {
  const env = { ...process.env, OCPOOL_PERMITS: String(CAPACITY), OCPOOL_STATE_DIR: join(dir, "state"), OCPOOL_STATE_URL: "", NO_COLOR: "1" }
  return Promise.all(
    Array.from({ length: RUNS }, (_, i) => {
      const mark = join(dir, `marks.${i}`)
      // the command records when it starts and ends (ns), holds a moment, and exits with its own code
      const command = `echo start $(date +%s%N) >> ${mark}; sleep 0.1; echo end $(date +%s%N) >> ${mark}; exit ${i % 4}`
      const child = spawn(process.execPath, [cli, "run", "--", "sh", "-c", command], { env, stdio: "ignore" })
      if (kills.has(i)) setTimeout(() => child.kill("SIGKILL"), 200 + ((i * 7919) % 4_000))
      return new Promise<Ran>((resolve) => child.once("exit", (code, signal) => resolve({ i, code, signal })))
    })
  )
}

describe("ocpool run under contention (issue 32)", () => {
  it("US-51 60 runs on a budget of 2 with 4 CPU burners: each command once, never more than 2 at once, each runner exits with its command's code; then with 15 SIGKILLs: no other runner affected, nothing left held", async () => {
    if (!existsSync(join(root, "dist/cli.js"))) spawnSync(process.execPath, [join(root, "scripts/build.mjs")], { cwd: root, stdio: "inherit" })
    const load = burners()
    try {
      // 1. no kills
      const quiet = mkdtempSync(join(tmpdir(), "ocpool-runs-"))
      const ran = await runAll(quiet, new Set())
      expect(ran.filter((r) => r.code !== r.i % 4).map((r) => `${r.i}: ${r.code ?? r.signal}`)).toEqual([])
      const marks = ran.map((r) => marksOf(quiet, r.i))
      expect(marks.filter((m) => m.starts.length !== 1 || m.ends.length !== 1).length).toBe(0)
      expect(maxOverlap(marks.map((m) => [m.starts[0]!, m.ends[0]!] as const))).toBeLessThanOrEqual(CAPACITY)
      expect(permitEntriesIn(join(quiet, "state"))).toEqual([])

      // 2. with SIGKILLs of runners, queued or running
      const rough = mkdtempSync(join(tmpdir(), "ocpool-runs-kill-"))
      const kills = new Set(Array.from({ length: KILLS }, (_, k) => (k * 4 + 1) % RUNS))
      const ran2 = await runAll(rough, kills)
      const survivors = ran2.filter((r) => !kills.has(r.i))
      expect(survivors.filter((r) => r.code !== r.i % 4).map((r) => `${r.i}: ${r.code ?? r.signal}`)).toEqual([])
      expect(ran2.filter((r) => kills.has(r.i) && r.signal === "SIGKILL").length).toBeGreaterThan(0)
      const marks2 = ran2.map((r) => marksOf(rough, r.i))
      // a survivor's command ran exactly once; a killed runner's at most once (a killed waiter's never)
      expect(survivors.filter((r) => marks2[r.i]!.starts.length !== 1).map((r) => r.i)).toEqual([])
      expect(marks2.filter((m) => m.starts.length > 1).length).toBe(0)
      // commands of killed runners that had started keep running to their end, holding their permit
      await new Promise((r) => setTimeout(r, 500))
      const spans = marks2.filter((m) => m.starts.length === 1).map((m) => [m.starts[0]!, m.ends[0] ?? BigInt(Date.now()) * 1_000_000n] as const)
      expect(maxOverlap(spans)).toBeLessThanOrEqual(CAPACITY)
      // nothing left held: the next run goes at once, and the table is empty afterwards
      const env = { ...process.env, OCPOOL_PERMITS: String(CAPACITY), OCPOOL_STATE_DIR: join(rough, "state"), OCPOOL_STATE_URL: "" }
      expect(spawnSync(process.execPath, [cli, "run", "--wait", "5s", "--", "true"], { env, encoding: "utf8", timeout: 60_000 }).status).toBe(0)
      expect(permitEntriesIn(join(rough, "state"))).toEqual([])
    } finally {
      for (const b of load) b.kill("SIGKILL")
    }
  }, 600_000)
})
