/**
 * The one process runner's captured mode, what issue 34 added to it for `lsof` and `git`: a cap per
 * run that says when it cut, and stderr sent to /dev/null; and `lsof -t` for `--vacuum` through it
 * (a stub `lsof` on PATH: its pids, its "none" exit 1, anything else "cannot tell").
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, join } from "node:path"
import { runArgv } from "../../../src/layers/process/runner.js"
import { openByLsof } from "../../../src/layers/retention/DbHostProc.js"

const tmp = () => mkdtempSync(join(tmpdir(), "ocpool-runner-"))

const stub = (dir: string, name: string, body: string): string => {
  const path = join(dir, name)
  writeFileSync(path, `#!/bin/sh\n${body}\n`)
  chmodSync(path, 0o755)
  return path
}

/** Runs `effect` with `dir` first on this process's PATH (how `lsof` is found), PATH put back after. */
const withPath = <A>(dir: string, effect: Effect.Effect<A>): Effect.Effect<A> =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const before = process.env.PATH
      process.env.PATH = `${dir}${delimiter}${before ?? ""}`
      return before
    }),
    () => effect,
    (before) => Effect.sync(() => void (before === undefined ? delete process.env.PATH : (process.env.PATH = before)))
  )

describe("runArgv's cap and stderr (issue 34)", () => {
  it.live("US-11 maxBytes caps stdout and says it cut; an answer of exactly the cap is whole", () =>
    Effect.gen(function* () {
      const dir = tmp()
      const long = yield* runArgv(stub(dir, "long", "printf 0123456789abcdef"), [], { timeoutMs: 5000, maxBytes: 10 })
      expect(long).toMatchObject({ code: 0, stdout: "0123456789", truncated: true, timedOut: false })
      const exact = yield* runArgv(stub(dir, "exact", "printf 0123456789"), [], { timeoutMs: 5000, maxBytes: 10 })
      expect(exact).toMatchObject({ code: 0, stdout: "0123456789", timedOut: false })
      expect(exact.truncated).toBeUndefined()
    })
  )

  it.live("US-11 stderr: ignore sends the child's stderr to /dev/null; stdout is still read", () =>
    Effect.gen(function* () {
      const dir = tmp()
      const r = yield* runArgv(stub(dir, "both", "echo out\necho err >&2\nexit 2"), [], { timeoutMs: 5000, stderr: "ignore" })
      expect(r).toMatchObject({ code: 2, stdout: "out\n", stderr: "", timedOut: false })
    })
  )
})

describe("openByLsof through the runner (issue 34)", () => {
  it.live("US-33.14 lsof's pids (this process left out), none on exit 1, cannot tell on another exit or an answer over 1 MiB", () =>
    Effect.gen(function* () {
      const dir = tmp()
      const db = join(dir, "opencode.db")
      writeFileSync(db, "")
      const bin = join(dir, "bin")
      const lsof = (body: string) => withPath(bin, Effect.suspend(() => (stub(bin, "lsof", body), openByLsof(db))))
      mkdirSync(bin)
      expect(yield* lsof(`echo lsof: noise >&2\necho 4242\necho ${process.pid}\necho 77`)).toEqual([4242, 77])
      expect(yield* lsof("exit 1")).toEqual([])
      expect(yield* lsof("echo 4242\nexit 2")).toBeUndefined()
      expect(yield* lsof("yes 4242 | head -c 1100000")).toBeUndefined()
    })
  )
})
