/**
 * One worker of the permits stress test (permits.test.ts), bundled with esbuild and run as its own
 * process. Every role works through its real front end on the shared state directory
 * (OCPOOL_STATE_DIR), budget `heavy` of OCPOOL_PERMITS units, permit lines traced to OCPOOL_TRACE:
 * - `plugin`: the plugin's gate (PermitGateShell over permitsLayer over the file SharedState, a
 *   TraceRecorderFile, a recording fake PoolEngine): before, hold, after. The victim holds at its
 *   half-way point and says so on stderr (`half <id>`) until it is killed.
 * - `run`: `node bin/ocpool.js run --weight W -- sh -c 'sleep 0.0X'`, one after another.
 * - `mcp`: the official MCP client over `node bin/ocpool.js mcp`: acquire, wait until granted, hold, release.
 * Prints one JSON line last: its role, the pids that held its requests, its own count of grants.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Effect, Layer, ManagedRuntime } from "effect"
import { spawn } from "node:child_process"
import { hostname } from "node:os"
import { join } from "node:path"
import type { EngineEvent } from "../../src/core/engine/step.js"
import { DEFAULTS } from "../../src/core/options.js"
import { parsePermitSettings } from "../../src/core/permits/settings.js"
import { stateDirFor } from "../../src/cli/stateView.js"
import { AppLogMemory, type MemoryLine } from "../../src/layers/opencode/AppLogMemory.js"
import { PermitGateShell } from "../../src/layers/permits/PermitGateShell.js"
import { permitsLayer } from "../../src/layers/permits/permitsLayer.js"
import { TraceRecorderFile } from "../../src/layers/pool/TraceRecorderFile.js"
import { ownStartToken } from "../../src/layers/process/runner.js"
import { sharedStateLayer } from "../../src/layers/state/sharedStateLayer.js"
import { openStateDir } from "../../src/layers/state/StateDirFile.js"
import { PermitGate } from "../../src/services/permits/PermitGate.js"
import { Permits } from "../../src/services/permits/Permits.js"
import { PoolEngine, type PoolEngineService } from "../../src/services/pool/PoolEngine.js"
import { SharedState } from "../../src/services/state/SharedState.js"
import { StateDir } from "../../src/services/state/StateDir.js"

/** One request of the plan: its weight and how long it is held (ms). */
export interface Step {
  readonly weight: number
  readonly holdMs: number
}

/** What a worker reports (its last stdout line). */
export interface WorkerReport {
  readonly role: "plugin" | "run" | "mcp"
  readonly id: number
  /** The processes that asked for (and held) this worker's permits. */
  readonly pids: ReadonlyArray<number>
  /** Requests made and grants seen by the worker itself. */
  readonly requests: number
  readonly grants: number
  /** Anything that went wrong, one line each (warnings, exit codes, refusals). */
  readonly problems: ReadonlyArray<string>
  /** Plugin workers: the pool lock's fail-opens in this process. */
  readonly failOpens?: number
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const report = (r: WorkerReport) => process.stdout.write(`${JSON.stringify(r)}\n`)

const plugin = async (id: number, plan: ReadonlyArray<Step>, victim: boolean): Promise<WorkerReport> => {
  const opened = openStateDir(stateDirFor(undefined))
  if (opened.dir === undefined) throw new Error(`state dir unusable: ${opened.warning}`)
  const dir = Layer.succeed(StateDir, { dir: opened.dir, trusted: opened.trusted, pid: process.pid, host: hostname(), startTime: ownStartToken() })
  const logs: Array<MemoryLine> = []
  const seen: Array<EngineEvent> = []
  let grants = 0
  /** The permits port as the plugin builds it, counting the grants the gate is told of. */
  const counted = Layer.effect(
    Permits,
    Effect.map(Permits, (p) => ({
      ...p,
      request: (req: Parameters<typeof p.request>[0]) => Effect.tap(p.request(req), ({ answer }) => Effect.sync(() => void (answer.state === "granted" && grants++))),
      wait: (t: Parameters<typeof p.wait>[0], o: Parameters<typeof p.wait>[1]) => Effect.tap(p.wait(t, o), (w) => Effect.sync(() => void (w.state === "granted" && grants++)))
    }))
  ).pipe(Layer.provide(permitsLayer(parsePermitSettings(undefined, process.env).permits)))
  const engine = Layer.succeed(PoolEngine, { apply: (event: EngineEvent) => Effect.as(Effect.sync(() => void seen.push(event)), undefined) } as unknown as PoolEngineService)
  const layer = PermitGateShell.pipe(
    Layer.provide(counted),
    Layer.provide(engine),
    Layer.provideMerge(sharedStateLayer({ backend: "sqlite", lockWaitMs: DEFAULTS.lockWaitMs })),
    Layer.provide(TraceRecorderFile(process.env.OCPOOL_TRACE)),
    Layer.provideMerge(dir),
    Layer.provideMerge(AppLogMemory(logs))
  )
  const runtime = ManagedRuntime.make(layer)
  const gate = await runtime.runPromise(PermitGate)
  const session = `ses_${id}`
  for (const [i, s] of plan.entries()) {
    const call = `call_${i}`
    process.stderr.write(`ask ${i} w${s.weight} at ${Date.now()}\n`)
    await runtime.runPromise(gate.before({ session, call, command: `npm test # plugin ${id}.${i}`, budget: "heavy", weight: s.weight }))
    process.stderr.write(`got ${i} at ${Date.now()}\n`)
    if (victim && i === Math.floor(plan.length / 2)) {
      process.stderr.write(`half ${id} granted=${grants}\n`)
      await sleep(600_000)
    }
    await sleep(s.holdMs)
    await runtime.runPromise(gate.after(session, call))
  }
  const failOpens = (await runtime.runPromise(Effect.flatMap(SharedState, (st) => st.stats))).failOpens
  await runtime.dispose()
  const asks = seen.filter((e) => e.type === "ask").length
  const answered = seen.filter((e) => e.type === "answered").length
  const problems = [
    ...logs.filter((l) => l.level === "warn" || l.level === "error").map((l) => `${l.level}: ${l.message}`),
    ...(asks === answered ? [] : [`${asks} asks but ${answered} answered`])
  ]
  return { role: "plugin", id, pids: [process.pid], requests: plan.length, grants, problems, failOpens }
}

const cliRun = async (id: number, plan: ReadonlyArray<Step>, cli: string): Promise<WorkerReport> => {
  const pids: Array<number> = []
  const problems: Array<string> = []
  let grants = 0
  for (const s of plan) {
    // hold 5-40 ms: the command sleeps 0.0X s (X = 1..4)
    const x = Math.min(4, Math.max(1, Math.round(s.holdMs / 10)))
    const child = spawn(process.execPath, [cli, "run", "--weight", String(s.weight), "--", "sh", "-c", `sleep 0.0${x}`], { stdio: ["ignore", "pipe", "pipe"] })
    let err = ""
    child.stderr.on("data", (d: Buffer) => (err += d.toString()))
    child.stdout.resume()
    const code = await new Promise<number | string>((resolve) => child.on("exit", (c, sig) => resolve(c ?? String(sig))))
    pids.push(child.pid!)
    process.stderr.write(`got run ${child.pid} exited ${code} at ${Date.now()}\n`)
    if (code === 0) grants++
    else problems.push(`ocpool run (pid ${child.pid}) exited ${code}: ${err.trim().slice(0, 300)}`)
    if (code === 0 && err.trim() !== "") problems.push(`ocpool run (pid ${child.pid}) stderr: ${err.trim().slice(0, 300)}`)
  }
  return { role: "run", id, pids, requests: plan.length, grants, problems }
}

type Json = Record<string, unknown>

const mcp = async (id: number, plan: ReadonlyArray<Step>, cli: string): Promise<WorkerReport> => {
  const transport = new StdioClientTransport({ command: process.execPath, args: [cli, "mcp"], env: { ...process.env } as Record<string, string>, stderr: "pipe" })
  let err = ""
  transport.stderr?.on("data", (c: Buffer) => (err += c.toString()))
  const client = new Client({ name: `ocpool-stress-${id}`, version: "1" })
  await client.connect(transport)
  const call = async (name: string, args: Json): Promise<Json> => {
    const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })
    const body = (r.structuredContent ?? {}) as Json
    if (r.isError === true) throw new Error(`${name} failed: ${JSON.stringify(r.content)}`)
    return body
  }
  const problems: Array<string> = []
  let grants = 0
  for (const [i, s] of plan.entries()) {
    let answer = await call("permit_acquire", { reason: `mcp ${id}.${i}`, weight: s.weight, wait_ms: 2000 })
    while (answer.state === "queued") answer = await call("permit_wait", { request: answer.request, wait_ms: 2000 })
    if (answer.state !== "granted") {
      problems.push(`request ${i}: ${JSON.stringify(answer)}`)
      continue
    }
    grants++
    process.stderr.write(`got ${i} at ${Date.now()}\n`)
    await sleep(s.holdMs)
    const released = await call("permit_release", { token: answer.token })
    if (released.state !== "released") problems.push(`release ${i}: ${JSON.stringify(released)}`)
  }
  const pid = transport.pid!
  await client.close()
  if (err.trim() !== "") problems.push(`ocpool mcp stderr: ${err.trim().slice(0, 300)}`)
  return { role: "mcp", id, pids: [pid], requests: plan.length, grants, problems }
}

const [role, idArg, planJson, root, victimArg] = process.argv.slice(2)
const id = Number(idArg)
const plan = JSON.parse(planJson!) as ReadonlyArray<Step>
const cli = join(root!, "bin/ocpool.js")
report(role === "plugin" ? await plugin(id, plan, victimArg === "victim") : role === "run" ? await cliRun(id, plan, cli) : await mcp(id, plan, cli))
