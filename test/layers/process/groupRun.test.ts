/** `ocpool run`'s runner: the whole process group, its exit code, its signals, its timeout, its spawn failures (real processes). */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Fiber } from "effect"
import { spawn } from "node:child_process"
import { chmodSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { groupRun, type ProcessGroup } from "../../../src/layers/process/runner.js"
import { groupAlive } from "../../../src/layers/state/proc.js"

/** Whether `pid` runs (a zombie left to an init that does not reap is not running). */
const running = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z"
  } catch {
    return false
  }
}

const tmp = () => mkdtempSync(join(tmpdir(), "ocpool-grouprun-"))
const root = new URL("../../../", import.meta.url).pathname

/** Runs `script` and returns how it ended, how long it took, and its group. */
const timed = (argv: readonly [string, ...Array<string>], options: { readonly timeoutMs?: number; readonly killAfterMs?: number } = {}) =>
  Effect.gen(function* () {
    let group: ProcessGroup | undefined
    const t0 = Date.now()
    const exit = yield* groupRun(argv, { ...options, onSpawn: (g) => Effect.sync(() => void (group = g)) })
    return { exit, ms: Date.now() - t0, group: group! }
  })

describe("groupRun", () => {
  it.live("US-51 waits for every background child: `sleep 1 & sleep 2 & wait` ends after ≥ 2 s, the group gone", () =>
    Effect.gen(function* () {
      const r = yield* timed(["sh", "-c", "sleep 1 & sleep 2 & wait"])
      expect(r.exit).toEqual({ code: 0, signal: null, timedOut: false })
      expect(r.ms).toBeGreaterThanOrEqual(2000)
      expect(groupAlive(r.group.pgid, r.group.startToken)).toBe(false)
    })
  )

  it.live("US-51 a detached grandchild holds it: `(sleep 2 &) ; exit 0` ends only after the sleep, though sh exited at once", () =>
    Effect.gen(function* () {
      const dir = tmp()
      const mark = join(dir, "sh-exited")
      const r = yield* timed(["sh", "-c", `(sleep 2 &) ; node -e 'require("fs").writeFileSync(${JSON.stringify(mark)}, String(Date.now()))'; exit 0`])
      expect(r.exit.code).toBe(0)
      expect(r.ms).toBeGreaterThanOrEqual(2000)
      // sh itself was done well before the group
      const shDone = Number(readFileSync(mark, "utf8"))
      expect(Date.now() - shDone).toBeGreaterThan(1000)
    })
  )

  it.live("US-51 the leader's exit code propagates; a signal-killed leader is 128+n", () =>
    Effect.gen(function* () {
      expect((yield* timed(["sh", "-c", "exit 3"])).exit).toEqual({ code: 3, signal: null, timedOut: false })
      expect((yield* timed(["sh", "-c", "kill -TERM $$"])).exit).toEqual({ code: 143, signal: "SIGTERM", timedOut: false })
      expect((yield* timed(["sh", "-c", "kill -KILL $$"])).exit).toEqual({ code: 137, signal: "SIGKILL", timedOut: false })
    })
  )

  it.live("US-51 timeout: the whole group gets SIGTERM and the run reports timedOut", () =>
    Effect.gen(function* () {
      const r = yield* timed(["sh", "-c", "sleep 30 & sleep 30 & wait"], { timeoutMs: 500 })
      expect(r.exit.timedOut).toBe(true)
      expect(r.exit.code).toBe(143)
      expect(r.ms).toBeLessThan(2000)
      expect(groupAlive(r.group.pgid, r.group.startToken)).toBe(false)
    })
  )

  it.live("US-51 timeout: a group that ignores SIGTERM gets SIGKILL 2 s later", () =>
    Effect.gen(function* () {
      const r = yield* timed(["sh", "-c", "trap '' TERM; sleep 30 & sleep 30; wait"], { timeoutMs: 300 })
      expect(r.exit).toEqual({ code: 137, signal: "SIGKILL", timedOut: true })
      expect(r.ms).toBeGreaterThanOrEqual(2300)
      expect(r.ms).toBeLessThan(6000)
      expect(groupAlive(r.group.pgid, r.group.startToken)).toBe(false)
    })
  )

  it.live("US-51 a command that is not found is 127, one that cannot run 126, each with its line", () =>
    Effect.gen(function* () {
      const dir = tmp()
      const notExec = join(dir, "tool")
      writeFileSync(notExec, "echo hi\n")
      chmodSync(notExec, 0o644)
      const missing = yield* Effect.either(groupRun(["ocpool-no-such-command-xyz"]))
      expect(Either.getLeft(missing).pipe((l) => l._tag === "Some" && { code: l.value.code, message: l.value.message })).toEqual({
        code: 127,
        message: "ocpool-no-such-command-xyz: command not found"
      })
      const denied = yield* Effect.either(groupRun([notExec]))
      expect(Either.isLeft(denied) && denied.left.code).toBe(126)
      expect(Either.isLeft(denied) && denied.left.message).toBe(`${notExec}: cannot run: permission denied`)
      const directory = yield* Effect.either(groupRun([dir]))
      expect(Either.isLeft(directory) && directory.left.code).toBe(126)
      const nul = yield* Effect.either(groupRun(["sh\0x"]))
      expect(Either.isLeft(nul) && nul.left.code).toBe(126)
    })
  )

  it.live("US-51 signals this process receives while the group runs reach the whole group; the handlers go away after", () =>
    Effect.gen(function* () {
      const before = process.listenerCount("SIGTERM")
      let group: ProcessGroup | undefined
      const fiber = yield* Effect.fork(groupRun(["sh", "-c", "sleep 30 & sleep 30 & wait"], { onSpawn: (g) => Effect.sync(() => void (group = g)) }))
      while (group === undefined) yield* Effect.sleep(20)
      expect(process.listenerCount("SIGTERM")).toBe(before + 1)
      yield* Effect.sleep(200)
      // the listener, not a real signal: a real one would reach vitest's worker should the handler be missing
      process.emit("SIGTERM", "SIGTERM")
      const exit = yield* Fiber.join(fiber)
      expect(exit).toEqual({ code: 143, signal: "SIGTERM", timedOut: false })
      expect(groupAlive(group.pgid, group.startToken)).toBe(false)
      expect(process.listenerCount("SIGTERM")).toBe(before)
    })
  )

  it.live("US-51 interrupting the run kills the group", () =>
    Effect.gen(function* () {
      let group: ProcessGroup | undefined
      const fiber = yield* Effect.fork(groupRun(["sh", "-c", "sleep 30 & sleep 30 & wait"], { onSpawn: (g) => Effect.sync(() => void (group = g)) }))
      while (group === undefined) yield* Effect.sleep(20)
      expect(groupAlive(group.pgid, group.startToken)).toBe(true)
      yield* Fiber.interrupt(fiber)
      expect(groupAlive(group.pgid, group.startToken)).toBe(false)
    })
  )

  it.live(
    "US-51 a real SIGTERM to the runner's process reaches the group; the runner exits with the group's code",
    () =>
      Effect.gen(function* () {
        const dir = tmp()
        const script = join(dir, "runner.ts")
        const pidFile = join(dir, "pids")
        // the script resolves effect (and tsx) from the project
        symlinkSync(join(root, "node_modules"), join(dir, "node_modules"))
        writeFileSync(
          script,
          `import { Effect } from "effect"
import { groupRun } from ${JSON.stringify(join(root, "src/layers/process/runner.ts"))}
Effect.runPromise(groupRun(["sh", "-c", "sleep 30 & echo $! > ${pidFile}; wait"], {})).then((r) => { process.stdout.write(JSON.stringify(r)); process.exit(r.code) })
`
        )
        const child = spawn(process.execPath, ["--import", "tsx", script], { cwd: root, stdio: ["ignore", "pipe", "inherit"] })
        let out = ""
        child.stdout.on("data", (d) => (out += String(d)))
        const done = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
        const deadline = Date.now() + 15_000
        while (Date.now() < deadline) {
          yield* Effect.sleep(100)
          try {
            if (readFileSync(pidFile, "utf8").trim() !== "") break
          } catch {
            // not yet
          }
        }
        const sleepPid = Number(readFileSync(pidFile, "utf8"))
        child.kill("SIGTERM")
        const code = yield* Effect.promise(() => done)
        expect(code).toBe(143)
        expect(JSON.parse(out)).toMatchObject({ signal: "SIGTERM", timedOut: false })
        // the background sleep got it too
        expect(running(sleepPid)).toBe(false)
      }),
    30_000
  )
})
