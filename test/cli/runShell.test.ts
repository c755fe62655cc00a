/**
 * `ocpool run` and `ocpool permits` over the real permit machine and the file backend in a temporary
 * state directory (in-process through `runCli`): two runs take turns on a budget of 1, the view shows
 * the holder following the command's group, and the queue.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Option } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { runCli } from "../../src/cli/app.js"
import { captureStream, type CliIo } from "../../src/cli/output.js"
import { PermitsCliLayer } from "../../src/cli/permits.js"
import { MachineFactsTest } from "../../src/layers/permits/MachineFactsTest.js"
import { permitsLayer } from "../../src/layers/permits/permitsLayer.js"
import { sharedStateLayer } from "../../src/layers/state/sharedStateLayer.js"
import { StateDir } from "../../src/services/state/StateDir.js"
import { FACTS } from "./permitsFake.js"

const tmp = () => mkdtempSync(join(tmpdir(), "ocpool-runshell-"))

/** The permit services of a state directory: the file backend, budget `heavy` of 1 unit. */
const fileLayer = (dir: Option.Option<string>) =>
  permitsLayer([{ name: "heavy", capacity: 1, source: "option" }], { facts: MachineFactsTest(FACTS), pollMs: 50 }).pipe(
    Layer.provide(sharedStateLayer({ backend: "sqlite", lockWaitMs: 2000 })),
    Layer.provide(Layer.succeed(StateDir, { dir: Option.getOrThrow(dir), trusted: true, pid: process.pid, host: hostname(), startTime: null }))
  )

const ocpool = (args: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const io: CliIo & { stdout: { text: string }; stderr: { text: string } } = { stdout: captureStream(false), stderr: captureStream(false), stdinIsTTY: false, env: {} }
    const code = yield* runCli(["node", "ocpool", ...args], io).pipe(Effect.provideService(PermitsCliLayer, fileLayer))
    return { code, stdout: io.stdout.text, stderr: io.stderr.text }
  })

/** Writes the start time, sleeps `s` seconds, writes the end time. */
const timed = (file: string, s: number) => ["sh", "-c", `date +%s%3N > ${file}.start; sleep ${s}; date +%s%3N > ${file}.end`]

const until = (cond: () => boolean) =>
  Effect.gen(function* () {
    const deadline = Date.now() + 25_000
    while (!cond()) {
      if (Date.now() > deadline) throw new Error("condition not reached")
      yield* Effect.sleep(20)
    }
  })

const exists = (file: string): boolean => {
  try {
    readFileSync(file)
    return true
  } catch {
    return false
  }
}

describe("ocpool run over the file backend", () => {
  it.live("US-51 two runs on a budget of 1 take turns; `ocpool permits` shows the holder's group and the queue meanwhile; nothing is left after", () =>
    Effect.gen(function* () {
      const dir = tmp()
      const marks = tmp()
      const a = join(marks, "a")
      const b = join(marks, "b")
      const first = yield* Effect.fork(ocpool(["run", "--state-dir", dir, "--reason", "first", "--", ...timed(a, 1)]))
      yield* until(() => exists(`${a}.start`))
      const second = yield* Effect.fork(ocpool(["run", "--state-dir", dir, "--", ...timed(b, 0)]))
      yield* Effect.sleep(300)
      expect(exists(`${b}.start`)).toBe(false)
      const view = yield* ocpool(["permits", "--json", "--state-dir", dir])
      expect(view.code).toBe(0)
      const heavy = JSON.parse(view.stdout).budgets[0]
      expect(heavy).toMatchObject({ name: "heavy", capacity: 1, used: 1 })
      expect(heavy.holders).toHaveLength(1)
      expect(heavy.holders[0]).toMatchObject({ pid: process.pid, via: "run", reason: "first", gone: false })
      expect(heavy.holders[0].group).toBeGreaterThan(1)
      expect(heavy.queue).toHaveLength(1)
      expect(heavy.queue[0]).toMatchObject({ position: 1, reason: expect.stringMatching(/^sh -c 'date/) })
      expect((yield* Fiber.join(first)).code).toBe(0)
      expect((yield* Fiber.join(second)).code).toBe(0)
      expect(Number(readFileSync(`${b}.start`, "utf8"))).toBeGreaterThanOrEqual(Number(readFileSync(`${a}.end`, "utf8")))
      const after = JSON.parse((yield* ocpool(["permits", "--json", "--state-dir", dir])).stdout).budgets[0]
      expect(after).toMatchObject({ used: 0, holders: [], queue: [] })
    })
  )

  it.live("US-51 --wait runs out behind a holder: exit 75 and the request is gone from the queue", () =>
    Effect.gen(function* () {
      const dir = tmp()
      const marks = tmp()
      const a = join(marks, "a")
      const first = yield* Effect.fork(ocpool(["run", "--state-dir", dir, "--", ...timed(a, 1)]))
      yield* until(() => exists(`${a}.start`))
      expect(yield* ocpool(["run", "--state-dir", dir, "--wait", "200ms", "--", "true"])).toEqual({ code: 75, stdout: "", stderr: "ocpool: no permit within 200ms\n" })
      const heavy = JSON.parse((yield* ocpool(["permits", "--json", "--state-dir", dir])).stdout).budgets[0]
      expect(heavy.queue).toEqual([])
      expect(heavy.holders).toHaveLength(1)
      expect((yield* Fiber.join(first)).code).toBe(0)
    })
  )

  it.live("US-51 a weight above the capacity and an unknown budget are refused by the machine: exit 2 naming the flag", () =>
    Effect.gen(function* () {
      const dir = tmp()
      expect(yield* ocpool(["run", "--state-dir", dir, "--weight", "2", "--", "true"])).toEqual({ code: 2, stdout: "", stderr: "ocpool: --weight 2: outside 1..1 for budget heavy\n" })
      expect(yield* ocpool(["run", "--state-dir", dir, "--budget", "gpu", "--", "true"])).toEqual({ code: 2, stdout: "", stderr: "ocpool: --budget gpu: no such budget (known: heavy)\n" })
    })
  )
})

const root = new URL("../../", import.meta.url).pathname

/**
 * A script that runs `ocpool run ARGS` as the CLI's entry does (runCli under NodeRuntime.runMain, whose
 * own SIGINT/SIGTERM handlers interrupt the program) over the file backend, as a process of its own.
 */
const runnerScript = (args: ReadonlyArray<string>): string => {
  const dir = tmp()
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"))
  const src = (p: string) => JSON.stringify(join(root, "src", p))
  const file = join(dir, "runner.ts")
  writeFileSync(
    file,
    `import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect, Exit, Layer, Option } from "effect"
import { hostname } from "node:os"
import { runCli } from ${src("cli/app.ts")}
import { processIo } from ${src("cli/output.ts")}
import { PermitsCliLayer } from ${src("cli/permits.ts")}
import { MachineFactsTest } from ${src("layers/permits/MachineFactsTest.ts")}
import { permitsLayer } from ${src("layers/permits/permitsLayer.ts")}
import { sharedStateLayer } from ${src("layers/state/sharedStateLayer.ts")}
import { StateDir } from ${src("services/state/StateDir.ts")}
const facts = ${JSON.stringify(FACTS)}
const layer = (dir: Option.Option<string>) =>
  permitsLayer([{ name: "heavy", capacity: 1, source: "option" }], { facts: MachineFactsTest(facts), pollMs: 50 }).pipe(
    Layer.provide(sharedStateLayer({ backend: "sqlite", lockWaitMs: 2000 })),
    Layer.provide(Layer.succeed(StateDir, { dir: Option.getOrThrow(dir), trusted: true, pid: process.pid, host: hostname(), startTime: null }))
  )
runCli(["node", "ocpool", "run", ...${JSON.stringify(args)}], processIo()).pipe(
  Effect.provideService(PermitsCliLayer, layer),
  NodeRuntime.runMain({ disableErrorReporting: true, teardown: (exit, onExit) => onExit(Exit.isSuccess(exit) ? Number(exit.value) : 1) })
)
`
  )
  return file
}

/** Whether `pid` runs (a zombie left to an init that does not reap is not running). */
const running = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z"
  } catch {
    return false
  }
}

const heavyOf = (dir: string) => Effect.map(ocpool(["permits", "--json", "--state-dir", dir]), (r) => JSON.parse(r.stdout).budgets[0])

describe("ocpool run as a process of its own", () => {
  it.live(
    "US-51 SIGTERM to `ocpool run` reaches the whole group (the background child too), exit 143, the permit released",
    () =>
      Effect.gen(function* () {
        const dir = tmp()
        const pidFile = join(tmp(), "pid")
        const child = spawn(process.execPath, ["--import", "tsx", runnerScript(["--state-dir", dir, "--", "sh", "-c", `sleep 30 & echo $! > ${pidFile}; wait`])], { cwd: root, stdio: "inherit" })
        const done = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
        yield* until(() => exists(pidFile) && readFileSync(pidFile, "utf8").trim() !== "")
        const sleepPid = Number(readFileSync(pidFile, "utf8"))
        expect((yield* heavyOf(dir)).holders).toHaveLength(1)
        child.kill("SIGTERM")
        expect(yield* Effect.promise(() => done)).toBe(143)
        expect(running(sleepPid)).toBe(false)
        expect(yield* heavyOf(dir)).toMatchObject({ used: 0, holders: [], queue: [] })
      }),
    40_000
  )

  it.live(
    "US-51 a command that traps SIGTERM and exits 7 on it: `ocpool run` forwards the signal and exits 7 (the runtime does not interrupt it)",
    () =>
      Effect.gen(function* () {
        const dir = tmp()
        const ready = join(tmp(), "ready")
        const child = spawn(process.execPath, ["--import", "tsx", runnerScript(["--state-dir", dir, "--", "sh", "-c", `trap 'exit 7' TERM; sleep 30 & echo $! > ${ready}; wait`])], { cwd: root, stdio: "inherit" })
        const done = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
        yield* until(() => exists(ready) && readFileSync(ready, "utf8").trim() !== "")
        const sleepPid = Number(readFileSync(ready, "utf8"))
        child.kill("SIGTERM")
        expect(yield* Effect.promise(() => done)).toBe(7)
        expect(running(sleepPid)).toBe(false)
        expect(yield* heavyOf(dir)).toMatchObject({ used: 0, holders: [], queue: [] })
      }),
    40_000
  )

  it.live(
    "US-51 SIGKILL to `ocpool run`: the permit stays held while its group lives, and is free once the group is gone",
    () =>
      Effect.gen(function* () {
        const dir = tmp()
        const pidFile = join(tmp(), "pid")
        const child = spawn(process.execPath, ["--import", "tsx", runnerScript(["--state-dir", dir, "--", "sh", "-c", `sleep 2 & echo $! > ${pidFile}; wait`])], { cwd: root, stdio: "inherit" })
        const done = new Promise<number | null>((resolve) => child.on("exit", (_code, signal) => resolve(signal === null ? 0 : 1)))
        yield* until(() => exists(pidFile) && readFileSync(pidFile, "utf8").trim() !== "")
        const sleepPid = Number(readFileSync(pidFile, "utf8"))
        yield* Effect.sleep(200)
        child.kill("SIGKILL")
        yield* Effect.promise(() => done)
        expect(running(sleepPid)).toBe(true)
        const held = yield* heavyOf(dir)
        expect(held.holders).toHaveLength(1)
        expect(held.holders[0]).toMatchObject({ via: "run", gone: false })
        // a new run waits for the orphaned group, then gets the permit
        const t0 = Date.now()
        expect((yield* ocpool(["run", "--state-dir", dir, "--", "true"])).code).toBe(0)
        expect(running(sleepPid)).toBe(false)
        expect(Date.now() - t0).toBeGreaterThan(500)
        expect(yield* heavyOf(dir)).toMatchObject({ used: 0, holders: [], queue: [] })
      }),
    40_000
  )
})
