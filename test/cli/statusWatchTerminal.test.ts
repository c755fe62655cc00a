/**
 * `ocpool top`'s loop in this process on a terminal in memory (issue 34: the live view's terminal
 * behind a service): frames drawn on the taken screen, a resize redrawn at the new width, `?` and `q`
 * as keys, the terminal put back once however the view ends. No pseudo-terminal: the real one is
 * statusWatch.test.ts's.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { runCli } from "../../src/cli/app.js"
import { captureStream, type CliIo } from "../../src/cli/output.js"
import { liveTerminalMemory } from "../../src/layers/view/LiveTerminalMemory.js"

const FRAME = "\x1b[H"
const frames = (text: string): number => text.split(FRAME).length - 1

/** Polls `check` every 20 ms for at most 5 s. */
const until = (check: () => boolean, what: string) =>
  Effect.gen(function* () {
    for (let i = 0; i < 250; i++) {
      if (check()) return
      yield* Effect.sleep("20 millis")
    }
    throw new Error(`not seen within 5 s: ${what}`)
  })

const setUp = () => {
  const dir = mkdtempSync(join(tmpdir(), "ocpool-top-mem-"))
  const state = join(dir, "state")
  const pool = join(dir, "pool.txt")
  writeFileSync(pool, "zen/alpha 2\ngo/gamma 1\n")
  chmodSync(dir, 0o700)
  const io: CliIo & { stdout: { text: string }; stderr: { text: string } } = { stdout: captureStream(true), stderr: captureStream(false), stdinIsTTY: true, env: { NO_COLOR: "1" } }
  return { state, pool, io }
}

describe("ocpool top on a terminal in memory (issue 34)", () => {
  it.live("US-6 the view takes the screen, draws the pool, redraws on a resize, shows the help on ?, and q ends it with 0, the terminal put back once", () =>
    Effect.gen(function* () {
      const { state, pool, io } = setUp()
      const term = liveTerminalMemory({ cols: 100, rows: 30 })
      const run = yield* Effect.fork(runCli(["node", "ocpool", "top", "--pool", pool, "--state-dir", state], io).pipe(Effect.provide(term.layer)))
      yield* until(() => term.taken() && io.stdout.text.includes("zen/alpha"), "the first frame")
      const drawn = frames(io.stdout.text)
      term.resize({ cols: 60, rows: 20 })
      yield* until(() => frames(io.stdout.text) > drawn, "a frame after the resize")
      term.type("?")
      yield* until(() => io.stdout.text.slice(io.stdout.text.lastIndexOf(FRAME)).includes("this help"), "the help screen")
      term.type("q")
      expect(yield* Fiber.join(run)).toBe(0)
      expect(term.taken()).toBe(false)
      expect(term.restored()).toBe(1)
    })
  )

  it.live("US-6 a frame is as wide as the terminal says: no line of the last frame is wider than its columns", () =>
    Effect.gen(function* () {
      const { state, pool, io } = setUp()
      const term = liveTerminalMemory({ cols: 40, rows: 12 })
      const run = yield* Effect.fork(runCli(["node", "ocpool", "top", "--pool", pool, "--state-dir", state], io).pipe(Effect.provide(term.layer)))
      yield* until(() => io.stdout.text.includes("zen/alpha"), "the first frame")
      term.type("q")
      expect(yield* Fiber.join(run)).toBe(0)
      const last = io.stdout.text.slice(io.stdout.text.lastIndexOf(FRAME) + FRAME.length)
      // eslint-disable-next-line no-control-regex
      const visible = last.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "").split("\r\n")
      expect(visible.length).toBeGreaterThan(2)
      for (const line of visible) expect([...line].length).toBeLessThanOrEqual(40)
      expect(term.restored()).toBe(1)
    })
  )
})
