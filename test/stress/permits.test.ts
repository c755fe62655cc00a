/**
 * Cross-process permits stress (`npm run test:stress`, issue 21 "Done when"): 8 processes on one state
 * directory, budget `heavy` of 3 units, 400 requests with seeded random weights 1..3 through every
 * front end (4 plugin gates over the file backend, 2 loops of `ocpool run`, 2 official MCP clients of
 * `ocpool mcp`), one plugin process SIGKILLed while it holds a permit. Afterwards, from the traces every
 * process recorded (each permit line carries the entries it read under the lock; the machine is pure,
 * so stepping the line again gives that transaction's table): never more than 3 units held, FIFO with
 * head-of-line blocking in every step, no lost or duplicated grant, the dead holder's permit returned by
 * the first transaction that looked at it, every trace replays to its own decisions, nothing left over.
 */
import { describe, expect, it } from "@effect/vitest"
import { execFileSync, spawn } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { basename, join } from "node:path"
import * as esbuild from "esbuild"
import fc from "fast-check"
import { stepPermits } from "../../src/core/permits/machine.js"
import type { PermitDecision, PermitStep, PermitView } from "../../src/core/permits/types.js"
import type { PermitLine } from "../../src/core/trace/permitInput.js"
import { formatDecision } from "../../src/core/trace/format.js"
import { decodeLine, InputError } from "../../src/core/trace/input.js"
import { replayText } from "../../src/core/trace/replay.js"
import type { Step, WorkerReport } from "./permitsWorker.js"

const root = new URL("../../", import.meta.url).pathname
const CAPACITY = 3
const ROLES = ["plugin", "plugin", "plugin", "plugin", "run", "run", "mcp", "mcp"] as const
/** All requests (PERMIT_STRESS_REQUESTS scales them), split evenly over the 8 workers. */
const PER_WORKER = Math.max(4, Math.round(Number(process.env.PERMIT_STRESS_REQUESTS ?? 400) / ROLES.length))
const SEED = Number(process.env.PERMIT_STRESS_SEED ?? 2_151)
const VICTIM = 1
const WORKER_LIMIT_MS = 210_000
/** No grant anywhere for this long: a permit is lost for good (every worker waits behind it). */
const STALL_MS = 30_000

/** The run and mcp workers start the built CLI. */
const ensureBuilt = (): void => {
  if (!existsSync(join(root, "dist/cli.js")) || !existsSync(join(root, "dist/ocpool.cjs"))) execFileSync(process.execPath, [join(root, "scripts/build.mjs")], { cwd: root })
}

/** Each worker's requests: weight 1..3 and a hold of 5..40 ms, seeded. */
const plans = (): ReadonlyArray<ReadonlyArray<Step>> =>
  ROLES.map((_, i) => fc.sample(fc.record({ weight: fc.integer({ min: 1, max: CAPACITY }), holdMs: fc.integer({ min: 5, max: 40 }) }), { seed: SEED + i, numRuns: PER_WORKER }))

interface Traced {
  readonly pid: number
  readonly line: PermitLine
  readonly step: PermitStep
}

const heldUnits = (entries: ReadonlyArray<PermitView>): number => entries.filter((e) => e.budget === "heavy" && e.grantedAt !== undefined).reduce((n, e) => n + e.weight, 0)

/** Every trace of `dir`: its pid, its text, and the decisions file beside it (empty when absent). */
const traces = (dir: string) =>
  readdirSync(dir)
    .flatMap((f) => {
      const m = /^trace\.(\d+)\.jsonl$/.exec(f)
      return m === null ? [] : [{ pid: Number(m[1]), text: readFileSync(join(dir, f), "utf8"), decisions: existsSync(join(dir, `${f}.decisions.jsonl`)) ? readFileSync(join(dir, `${f}.decisions.jsonl`), "utf8") : "" }]
    })

const decode = (pid: number, text: string): Array<Traced> =>
  text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((raw, i) => {
      const input = decodeLine(raw)
      if (input instanceof InputError) throw new Error(`trace of ${pid}, line ${i + 1}: ${input.message}`)
      if (input.type !== "permit") throw new Error(`trace of ${pid}, line ${i + 1}: a ${input.type} line`)
      const line = input as PermitLine
      return { pid, line, step: stepPermits(line.entries, line.capacities, line.op, line.at) }
    })

interface Ran {
  readonly reports: ReadonlyArray<WorkerReport>
  /** Workers that failed or were stopped, one line each. */
  readonly failures: ReadonlyArray<string>
  readonly victimPid: number
  readonly killAt: number
  readonly reapedAt: number
}

/**
 * Runs the 8 workers; kills the victim when it holds at its half-way point. A run in which no worker
 * got a permit for STALL_MS (a permit lost for good) is stopped, so the checks can say what happened.
 */
const runWorkers = async (bundle: string, env: NodeJS.ProcessEnv, all: ReadonlyArray<ReadonlyArray<Step>>): Promise<Ran> => {
  let victimPid = 0
  let killAt = 0
  let reapedAt = 0
  const started = Date.now()
  let progress = started
  const failures: Array<string> = []
  const live = new Map<number, { readonly stop: () => void; readonly tail: () => string }>()
  const watchdog = setInterval(() => {
    const now = Date.now()
    if (now - progress < STALL_MS && now - started < WORKER_LIMIT_MS) return
    for (const [i, w] of [...live]) {
      live.delete(i)
      failures.push(`${ROLES[i]} worker ${i} stopped: ${now - started >= WORKER_LIMIT_MS ? "out of time" : `no grant anywhere for ${STALL_MS} ms`}; its last lines: ${w.tail()}`)
      w.stop()
    }
  }, 1_000)
  const runs = ROLES.map(
    (role, i) =>
      new Promise<WorkerReport | undefined>((resolve) => {
        const args = [bundle, role, String(i), JSON.stringify(all[i]), root, ...(i === VICTIM ? ["victim"] : [])]
        const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"], env })
        let out = ""
        let err = ""
        live.set(i, { stop: () => child.kill("SIGKILL"), tail: () => err.trim().split("\n").slice(-3).join(" | ") })
        child.stdout.on("data", (d: Buffer) => (out += d.toString()))
        child.stderr.on("data", (d: Buffer) => {
          const text = d.toString()
          err += text
          if (text.includes("got ")) progress = Date.now()
          if (i === VICTIM && victimPid === 0 && err.includes(`half ${i}`)) {
            victimPid = child.pid!
            killAt = Date.now()
            child.kill("SIGKILL")
          }
        })
        child.on("exit", (code, signal) => {
          const stopped = !live.delete(i)
          if (i === VICTIM && signal === "SIGKILL" && victimPid !== 0 && reapedAt === 0) {
            reapedAt = Date.now()
            return resolve(undefined)
          }
          if (stopped) return resolve(undefined)
          if (code !== 0) {
            failures.push(`${role} worker ${i} exited ${code ?? signal}: ${err.trim().split("\n").slice(-5).join(" | ")} ${out.slice(-300)}`)
            return resolve(undefined)
          }
          resolve(JSON.parse(out.trim().split("\n").at(-1)!) as WorkerReport)
        })
      })
  )
  const reports = (await Promise.all(runs)).filter((r): r is WorkerReport => r !== undefined)
  clearInterval(watchdog)
  return { reports, failures, victimPid, killAt, reapedAt }
}

describe("cross-process permits stress", () => {
  it("US-51 8 processes (plugin gates, ocpool run, MCP clients) × 400 weighted requests on a budget of 3, one holder SIGKILLed: never over 3, FIFO, no lost or duplicated grant, the dead holder's permit returned at the next look, every trace replays to its decisions", async ({ onTestFinished }) => {
    ensureBuilt()
    const dir = mkdtempSync(join(tmpdir(), "ocpool-permits-stress-"))
    // a failed run keeps its state and traces for a look
    onTestFinished(({ task }) => {
      if (task.result?.state === "pass") rmSync(dir, { recursive: true, force: true })
      else console.error(`permits stress: kept ${dir} for a look`)
    })
    // inside the repository, so that the bundle finds node_modules (better-sqlite3 is loaded at run time)
    const bundle = join(root, "node_modules", ".ocpool-stress", `${basename(dir)}-permitsWorker.mjs`)
    await esbuild.build({
      entryPoints: [join(root, "test/stress/permitsWorker.ts")],
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      outfile: bundle,
      logLevel: "warning",
      banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" }
    })
    const stateDir = join(dir, "state")
    const traceDir = join(dir, "traces")
    const env = { ...process.env, OCPOOL_STATE_DIR: stateDir, OCPOOL_PERMITS: String(CAPACITY), OCPOOL_TRACE: join(traceDir, "trace.%p.jsonl") }
    const all = plans()
    const started = Date.now()
    const { reports, failures, victimPid, killAt, reapedAt } = await runWorkers(bundle, env, all)
    const elapsed = Date.now() - started
    // every check is soft: a failed run says everything that went wrong at once
    const check = expect.soft

    // every worker but the victim finished its plan, saw a grant for each request, and nothing went wrong
    check(failures).toEqual([])
    check(victimPid).toBeGreaterThan(0)
    check(reports.flatMap((r) => r.problems.map((p) => `${r.role} ${r.id}: ${p}`))).toEqual([])
    check(reports.map((r) => ({ id: r.id, grants: r.grants }))).toEqual(reports.map((r) => ({ id: r.id, grants: all[r.id]!.length })))
    // the plugin's pool lock never went ahead without the lock (`lockWaitMs`)
    check(reports.filter((r) => r.role === "plugin").map((r) => ({ id: r.id, failOpens: r.failOpens }))).toEqual(reports.filter((r) => r.role === "plugin").map((r) => ({ id: r.id, failOpens: 0 })))

    const files = traces(traceDir)
    const lines = files.flatMap((f) => decode(f.pid, f.text))
    expect(lines.length).toBeGreaterThan(0)

    // 1. never more than 3 units held, before or after any transaction of any process
    check(lines.filter((t) => t.line.capacities.heavy !== CAPACITY)).toEqual([])
    const over = lines.filter((t) => heldUnits(t.line.entries) > CAPACITY || heldUnits(t.step.entries) > CAPACITY)
    check(over.map((t) => ({ pid: t.pid, at: t.line.at, before: heldUnits(t.line.entries), after: heldUnits(t.step.entries) }))).toEqual([])

    // 2. FIFO with head-of-line blocking: the grants of a step are the lowest seqs of the unpaused queue
    const unfair = lines.flatMap((t) => {
      const granted = t.step.decisions.filter((d) => d.act === "grant").map((d) => t.step.entries.find((e) => e.id === d.id)!)
      const waiting = t.step.entries.filter((e) => e.budget === "heavy" && e.grantedAt === undefined && e.pausedAt === undefined)
      return granted
        .filter((g) => g.pausedAt !== undefined || waiting.some((q) => q.seq < g.seq))
        .map((g) => ({ pid: t.pid, at: t.line.at, granted: g.seq, stillQueued: waiting.map((q) => q.seq) }))
    })
    check(unfair).toEqual([])

    // 3. no lost or duplicated grant: the recorded decisions of every process, by request
    const requests = new Map<string, { readonly holderPid: number; readonly weight: number; readonly at: number }>()
    const misfiled: Array<string> = []
    for (const t of lines) {
      if (t.line.op.op !== "request") continue
      const e = t.line.op.entry
      if (requests.has(e.id) || e.holder.pid !== t.pid) misfiled.push(`${e.id} in the trace of ${t.pid}`)
      requests.set(e.id, { holderPid: e.holder.pid, weight: e.weight, at: e.requestedAt })
    }
    check(misfiled).toEqual([])
    const decisions = files.flatMap((f) => f.decisions.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as PermitDecision))
    const acts = (id: string, act: PermitDecision["act"]) => decisions.filter((d) => d.id === id && d.act === act)
    const lost: Array<string> = []
    for (const [id, r] of requests) {
      const grants = acts(id, "grant").length
      if (grants > 1) lost.push(`${id} (pid ${r.holderPid}) granted ${grants} times`)
      if (acts(id, "cancel").length > 0) continue
      if (grants !== 1) lost.push(`${id} (pid ${r.holderPid}) never granted`)
      if (acts(id, "release").length !== 1) lost.push(`${id} (pid ${r.holderPid}) released ${acts(id, "release").length} times`)
    }
    check(lost).toEqual([])
    check(decisions.filter((d) => !requests.has(d.id))).toEqual([])
    // each worker's requests, in its order, carry its plan's weights; its own count of grants matches the traces
    const ofPids = (pids: ReadonlyArray<number>) => [...requests.entries()].filter(([, r]) => pids.includes(r.holderPid)).sort(([, a], [, b]) => a.at - b.at)
    for (const r of reports) {
      const mine = ofPids(r.pids)
      check({ id: r.id, weights: mine.map(([, q]) => q.weight) }).toEqual({ id: r.id, weights: all[r.id]!.map((s) => s.weight) })
      check({ id: r.id, granted: mine.filter(([id]) => acts(id, "grant").length === 1).length }).toEqual({ id: r.id, granted: r.grants })
    }
    const half = Math.floor(all[VICTIM]!.length / 2)
    const victims = ofPids([victimPid])
    check(victims.map(([, q]) => q.weight)).toEqual(all[VICTIM]!.slice(0, half + 1).map((s) => s.weight))
    check(requests.size).toBe(reports.reduce((n, r) => n + r.requests, 0) + half + 1)

    // 4. the killed holder's permit: held at the kill, returned (holder gone) by the first transaction that looked after it
    const heldId = victims.at(-1)?.[0] ?? "none"
    check(acts(heldId, "grant")[0]?.at ?? Infinity).toBeLessThan(killAt)
    check(acts(heldId, "release").map((d) => (d as { cause: string }).cause)).toEqual(["holder gone"])
    const returning = lines.filter((t) => t.step.decisions.some((d) => d.id === heldId && d.act === "release"))
    check(returning).toHaveLength(1)
    const back = returning[0]
    check(back?.line.entries.find((e) => e.id === heldId)?.gone).toBe(true)
    // `at` is read before the lock: a line stamped after the reap read the entries after it, so it can only
    // have seen the entry gone, and only the one that returned it can have seen it at all
    check(lines.filter((t) => t.line.at > reapedAt && t !== back && t.line.entries.some((e) => e.id === heldId)).map((t) => ({ pid: t.pid, at: t.line.at }))).toEqual([])
    check(lines.filter((t) => t.line.at > (back?.line.at ?? 0) && t.line.entries.some((e) => e.id === heldId && !e.gone)).map((t) => ({ pid: t.pid, at: t.line.at }))).toEqual([])

    // 5. every process's trace replays to its own decisions, byte for byte
    for (const f of files) {
      const replay = replayText(f.text)
      check({ pid: f.pid, error: replay.error }).toEqual({ pid: f.pid, error: undefined })
      check({ pid: f.pid, decisions: replay.decisions.map((d) => `${formatDecision(d)}\n`).join("") }).toEqual({ pid: f.pid, decisions: f.decisions })
    }

    // 6. nothing left: no permit entry, no temporary file
    const state = readdirSync(stateDir)
    check(state.filter((n) => n.endsWith(".tmp"))).toEqual([])
    if (state.includes("permits.json")) check((JSON.parse(readFileSync(join(stateDir, "permits.json"), "utf8")) as { entries: Array<unknown> }).entries).toEqual([])

    const grants = decisions.filter((d) => d.act === "grant").length
    console.log(
      `permits stress: ${requests.size} requests, ${grants} grants, ${lines.length} traced transactions in ${files.length} traces, ${elapsed} ms; ` +
        `victim ${victimPid} reaped ${reapedAt - killAt} ms after the kill, its permit returned ${back === undefined ? "never" : `${back.line.at - reapedAt} ms after that`}`
    )
  }, 240_000)
})
