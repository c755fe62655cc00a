/** `ocpool run` in-process through `runCli`, over a fake permit table: the wait, the run, the release, each exit code. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Option } from "effect"
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { runCli } from "../../src/cli/app.js"
import { captureStream, type CliIo } from "../../src/cli/output.js"
import { commandLine, statusLine } from "../../src/cli/run.js"
import { commandWords, protectRunArgs } from "../../src/cli/shared/preParse.js"
import { makeFake, type Fake } from "./permitsFake.js"

const tmp = () => mkdtempSync(join(tmpdir(), "ocpool-run-"))

/** Runs `ocpool run ARGS` on captured streams (a terminal or a pipe) over `fake`. */
const run = (fake: Fake, args: ReadonlyArray<string>, tty = false) =>
  Effect.gen(function* () {
    const io: CliIo & { stdout: { text: string }; stderr: { text: string } } = { stdout: captureStream(tty), stderr: captureStream(tty), stdinIsTTY: false, env: {} }
    const code = yield* fake.provide(runCli(["node", "ocpool", "run", ...args], io))
    return { code, stdout: io.stdout.text, stderr: io.stderr.text }
  })

/** A command that writes the time it ran to `file`. */
const stamp = (file: string) => ["node", "-e", `require("fs").writeFileSync(${JSON.stringify(file)}, String(Date.now()))`]

const until = (cond: () => boolean) =>
  Effect.gen(function* () {
    const deadline = Date.now() + 10_000
    while (!cond()) {
      if (Date.now() > deadline) throw new Error("condition not reached")
      yield* Effect.sleep(10)
    }
  })

describe("ocpool run", () => {
  it.live("US-51 a free permit: the command runs at once with the permit handed to its group, its exit code is the run's, the permit released", () =>
    Effect.gen(function* () {
      const fake = makeFake()
      const r = yield* run(fake, ["--", "sh", "-c", "exit 3"])
      expect(r).toEqual({ code: 3, stdout: "", stderr: "" })
      expect(fake.calls[0]).toBe("request heavy 1 run sh -c 'exit 3'")
      expect(fake.calls[1]).toMatch(/^rebind p-1 \d+$/)
      expect(fake.calls.slice(2)).toEqual(["release p-1"])
      expect(fake.entries()).toEqual([])
      expect((yield* run(fake, ["--", "true"])).code).toBe(0)
      expect(fake.entries()).toEqual([])
    })
  )

  it.live("US-51 the permit is held until the whole group exited: `(sleep 1 &) ; exit 0` releases after the sleep, and the entry follows the group meanwhile", () =>
    Effect.gen(function* () {
      const fake = makeFake()
      const t0 = Date.now()
      const fiber = yield* Effect.fork(run(fake, ["--", "sh", "-c", "(sleep 1 &) ; exit 0"]))
      yield* until(() => fake.calls.some((c) => c.startsWith("rebind")))
      yield* Effect.sleep(300)
      expect(fake.entries()).toHaveLength(1)
      expect(fake.entries()[0]!.holder.group?.pgid).toBeGreaterThan(1)
      const r = yield* Fiber.join(fiber)
      expect(r.code).toBe(0)
      expect(Date.now() - t0).toBeGreaterThanOrEqual(1000)
      expect(fake.entries()).toEqual([])
    })
  )

  it.live("US-51 queued behind a holder: the command starts only after the holder released; no status line on a pipe", () =>
    Effect.gen(function* () {
      const fake = makeFake([{ name: "heavy", capacity: 1, source: "option" }])
      const other = fake.hold("heavy", 1, "npm test")
      const mark = join(tmp(), "ran")
      const fiber = yield* Effect.fork(run(fake, ["--", ...stamp(mark)]))
      yield* until(() => fake.calls.includes("wait p-2"))
      yield* Effect.sleep(300)
      const released = Date.now()
      fake.drop(other.id)
      const r = yield* Fiber.join(fiber)
      expect(r).toEqual({ code: 0, stdout: "", stderr: "" })
      expect(Number(readFileSync(mark, "utf8"))).toBeGreaterThanOrEqual(released)
      expect(fake.entries()).toEqual([])
    })
  )

  it.live("US-51 on a terminal: one status line on stderr, updated in place (position and holders), cleared before the command runs", () =>
    Effect.gen(function* () {
      const fake = makeFake([{ name: "heavy", capacity: 1, source: "option" }])
      const first = fake.hold("heavy", 1, "make", { pid: 777 })
      const second = fake.hold("heavy", 1, "go vet", { pid: 888 })
      const fiber = yield* Effect.fork(run(fake, ["--", "true"], true))
      yield* until(() => fake.calls.includes("wait p-3"))
      yield* Effect.sleep(100)
      fake.drop(first.id)
      yield* Effect.sleep(100)
      fake.drop(second.id)
      const r = yield* Fiber.join(fiber)
      expect(r.code).toBe(0)
      const a = "ocpool: waiting for a heavy permit: position 2; held by p-1 (pid 777: make)"
      const b = "ocpool: waiting for a heavy permit: position 1; held by p-2 (pid 888: go vet)"
      expect(r.stderr).toBe(`\r${a}\r${b}\r${" ".repeat(b.length)}\r`)
      // no holders: no `held by`
      expect(statusLine("heavy", { position: 1, paused: false, holders: [] })).toBe("ocpool: waiting for a heavy permit: position 1")
    })
  )

  it("US-51 the status line is cut to 79 columns; the command line as a reason quotes words with spaces", () => {
    const holders = [1, 2, 3].map((i) => ({ id: `p-${i}`, holder: { pid: 1000 + i }, reason: "cargo build --release --all-features" })) as never
    expect(statusLine("heavy", { position: 3, paused: false, holders })).toHaveLength(79)
    expect(commandLine(["sh", "-c", "echo 'hi' && exit 3"])).toBe(`sh -c 'echo '\\''hi'\\'' && exit 3'`)
    expect(commandLine(["x".repeat(300)])).toHaveLength(200)
  })

  it.live("US-51 --wait ran out: the request is cancelled, `ocpool: no permit within DUR`, exit 75, the command never ran", () =>
    Effect.gen(function* () {
      const fake = makeFake([{ name: "heavy", capacity: 1, source: "option" }])
      fake.hold("heavy", 1, "npm test")
      const mark = join(tmp(), "ran")
      const t0 = Date.now()
      const r = yield* run(fake, ["--wait", "300ms", "--", ...stamp(mark)])
      expect(r).toEqual({ code: 75, stdout: "", stderr: "ocpool: no permit within 300ms\n" })
      expect(Date.now() - t0).toBeGreaterThanOrEqual(300)
      expect(fake.calls).toContain("cancel p-2 wait")
      expect(fake.entries().map((e) => e.id)).toEqual(["p-1"])
      expect(() => readFileSync(mark)).toThrow()
    })
  )

  it.live("US-51 --timeout: the group is killed, one line, exit 124, the permit released", () =>
    Effect.gen(function* () {
      const fake = makeFake()
      const t0 = Date.now()
      const r = yield* run(fake, ["--timeout", "300ms", "--", "sh", "-c", "sleep 30 & sleep 30; wait"])
      expect(r).toEqual({ code: 124, stdout: "", stderr: "ocpool: timed out after 300ms: the command's process group was killed\n" })
      expect(Date.now() - t0).toBeLessThan(2000)
      expect(fake.entries()).toEqual([])
    })
  )

  it.live("US-51 a command not found is 127, one that cannot run 126, each with one line; the permit released", () =>
    Effect.gen(function* () {
      const fake = makeFake()
      expect(yield* run(fake, ["--", "ocpool-no-such-command-xyz", "a"])).toEqual({ code: 127, stdout: "", stderr: "ocpool: ocpool-no-such-command-xyz: command not found\n" })
      const file = join(tmp(), "tool")
      writeFileSync(file, "echo hi\n")
      chmodSync(file, 0o644)
      expect(yield* run(fake, ["--", file])).toEqual({ code: 126, stdout: "", stderr: `ocpool: ${file}: cannot run: permission denied\n` })
      expect(fake.entries()).toEqual([])
      expect(fake.calls.filter((c) => c.startsWith("release"))).toEqual(["release p-1", "release p-2"])
    })
  )

  it.live("US-51 a signal-killed command exits 128+n", () =>
    Effect.gen(function* () {
      expect((yield* run(makeFake(), ["--", "sh", "-c", "kill -TERM $$"])).code).toBe(143)
    })
  )

  it.live("US-51 bad flags, a weight outside 1..capacity, an unknown budget, a missing command: exit 2 with one line naming the flag, no command run", () =>
    Effect.gen(function* () {
      const cases: ReadonlyArray<readonly [ReadonlyArray<string>, RegExp]> = [
        [["--weight", "0", "--", "true"], /^ocpool: --weight must be an integer ≥ 1, got '0'\n$/],
        [["--weight", "x", "--", "true"], /^ocpool: --weight must be an integer ≥ 1, got 'x'\n$/],
        [["--weight", "3", "--", "true"], /^ocpool: --weight 3: outside 1\.\.2 for budget heavy\n$/],
        [["--budget", "gpu", "--", "true"], /^ocpool: --budget gpu: no such budget \(known: heavy\)\n$/],
        [["--wait", "5", "--", "true"], /^ocpool: --wait 5: no unit: .*\n$/],
        [["--timeout", "2d", "--", "true"], /^ocpool: --timeout 2d: not a duration: .*\n$/],
        [["--wait=-1s", "--", "true"], /^ocpool: --wait -1s: negative: .*\n$/],
        [[], /^ocpool: run needs a command: ocpool run \[flags\] -- CMD \[ARGS…\]\n$/],
        [["--"], /^ocpool: run needs a command/],
        [["--bogus", "--", "true"], /^ocpool: run: unknown flag '--bogus'\nusage: ocpool run /],
        [["--weight", "--", "true"], /^ocpool: run: --weight needs a value \(--weight N\)\nusage: ocpool run /]
      ]
      for (const [args, stderr] of cases) {
        const fake = makeFake()
        const r = yield* run(fake, args)
        expect({ args, code: r.code, stdout: r.stdout }).toEqual({ args, code: 2, stdout: "" })
        expect(r.stderr).toMatch(stderr)
        expect(fake.calls.filter((c) => !c.startsWith("request"))).toEqual([])
        expect(fake.entries()).toEqual([])
      }
    })
  )

  it.live("US-51 flags after -- go to the command; --budget, --weight and --reason reach the request", () =>
    Effect.gen(function* () {
      const fake = makeFake([
        { name: "heavy", capacity: 2, source: "option" },
        { name: "gpu", capacity: 4, source: "option" }
      ])
      const out = join(tmp(), "args")
      const r = yield* run(fake, ["--budget", "gpu", "--weight", "3", "--reason", "train\u001b[31m", "--", "sh", "-c", `echo "$@" > ${out}`, "sh", "--weight", "5", "--json", "--", "-x"])
      expect(r.code).toBe(0)
      expect(readFileSync(out, "utf8")).toBe("--weight 5 --json -- -x\n")
      expect(fake.calls[0]).toBe("request gpu 3 run train")
    })
  )

  it.live("US-51 SIGINT or SIGTERM while queued: the request is cancelled, exit 130 or 143, the command never ran", () =>
    Effect.gen(function* () {
      for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
        const fake = makeFake([{ name: "heavy", capacity: 1, source: "option" }])
        fake.hold("heavy", 1, "npm test")
        const before = process.listenerCount(signal)
        const mark = join(tmp(), "ran")
        const fiber = yield* Effect.fork(run(fake, ["--", ...stamp(mark)]))
        yield* until(() => fake.calls.includes("wait p-2"))
        // the listener only: a real signal would reach vitest's worker should the handler be missing
        process.emit(signal, signal)
        const r = yield* Fiber.join(fiber)
        expect(r).toEqual({ code, stdout: "", stderr: "" })
        expect(fake.calls).toContain("cancel p-2 aborted")
        expect(fake.entries().map((e) => e.id)).toEqual(["p-1"])
        expect(() => readFileSync(mark)).toThrow()
        expect(process.listenerCount(signal)).toBe(before)
      }
    })
  )

  it.live("US-51 SIGTERM while the command runs reaches its group: exit 143, the permit released", () =>
    Effect.gen(function* () {
      const fake = makeFake()
      const fiber = yield* Effect.fork(run(fake, ["--", "sh", "-c", "sleep 30 & sleep 30 & wait"]))
      yield* until(() => fake.calls.some((c) => c.startsWith("rebind")))
      yield* Effect.sleep(200)
      process.emit("SIGTERM", "SIGTERM")
      const r = yield* Fiber.join(fiber)
      expect(r.code).toBe(143)
      expect(fake.entries()).toEqual([])
    })
  )

  it.live("US-51 --state-dir reaches the permit layer", () =>
    Effect.gen(function* () {
      const fake = makeFake()
      expect((yield* run(fake, ["--state-dir", "/tmp/x", "--", "true"])).code).toBe(0)
      expect(fake.stateDirs.map(Option.getOrNull)).toEqual(["/tmp/x"])
    })
  )

  it.live("US-51 everything after the command word is the command's, -- or not: --version, --help, -h, --wizard, --log-level, --completions reach it (issue 33)", () =>
    Effect.gen(function* () {
      const fake = makeFake()
      const dir = tmp()
      const out = join(dir, "argv.json")
      const rec = ["sh", "-c", `for w in "$@"; do printf '%s\\n' "$w"; done > '${out}'`, "sh"]
      const words = ["--version", "--help", "-h", "--wizard", "--log-level", "debug", "--completions", "bash", "--json", "hi", "--", "-x"]
      for (const args of [[...rec, ...words], ["--reason", "mine", "--budget", "heavy", ...rec, ...words], ["--", ...rec, ...words]]) {
        const r = yield* run(fake, args)
        expect(r.code, JSON.stringify(r)).toBe(0)
        expect(readFileSync(out, "utf8").split("\n").slice(0, -1)).toEqual(words)
      }
      // the reason the command line gives is the words as they were
      expect(fake.calls[0]).toContain("--version --help -h --wizard")
      expect(fake.calls).toContain("request heavy 1 run mine")
    })
  )

  it("US-51 protectRunArgs: run's own flags (and their values) stay, the command's words are hidden from the parser and come back unchanged", () => {
    expect(protectRunArgs(["status", "--version"])).toEqual(["status", "--version"])
    expect(protectRunArgs(["run", "--version"])).toEqual(["run", "--version"])
    expect(protectRunArgs(["run", "--wait", "5m", "make", "-j4"])).toEqual(["run", "--wait", "5m", "--", "make", "\u0000-j4"])
    expect(protectRunArgs(["run", "--budget=heavy", "--", "make", "--help"])).toEqual(["run", "--budget=heavy", "--", "make", "\u0000--help"])
    expect(commandWords(protectRunArgs(["run", "make", "--", "-", "x"]).slice(2))).toEqual(["make", "--", "-", "x"])
  })
})
