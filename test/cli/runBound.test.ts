/**
 * `ocpool run` binds before it runs (issue 32): the command is held behind a gate until its permit is
 * bound to its process group, so a SIGKILL of the runner at any instant never frees the permit while
 * a process of the group lives. The built CLI over a real state directory.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn, spawnSync } from "node:child_process"
import { existsSync, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { groupRun } from "../../src/layers/process/runner.js"

const cli = join(new URL("../../", import.meta.url).pathname, "bin/ocpool.js")
const tmp = () => mkdtempSync(join(tmpdir(), "ocpool-run-bound-"))

describe("ocpool run binds before it runs (issue 32)", () => {
  it.live("US-51 a held command does not start before onSpawn is done; then it runs as the group's leader", () =>
    Effect.gen(function* () {
      const mark = join(tmp(), "ran")
      let seenDuringBind: boolean | undefined
      let leader = 0
      const exit = yield* groupRun(["sh", "-c", `echo $$ > ${mark}; exit 4`], {
        onSpawn: (group) =>
          Effect.gen(function* () {
            leader = group.pgid
            yield* Effect.sleep(300)
            seenDuringBind = existsSync(mark)
          })
      })
      expect(seenDuringBind).toBe(false)
      expect(exit.code).toBe(4)
      expect(Number(spawnSync("cat", [mark], { encoding: "utf8" }).stdout.trim())).toBe(leader)
    })
  )

  it.live("US-51 `sh -c 'kill -9 $PPID; sleep 3'` under ocpool run keeps a budget of 1 busy until the sleep ends", () =>
    Effect.gen(function* () {
      const state = join(tmp(), "state")
      const env = { ...process.env, OCPOOL_PERMITS: "1", OCPOOL_STATE_DIR: state, NO_COLOR: "1" }
      const runner = spawn(process.execPath, [cli, "run", "--", "sh", "-c", "kill -9 $PPID; sleep 3"], { env, stdio: "ignore" })
      const t0 = Date.now()
      const killed = yield* Effect.promise(() => new Promise<NodeJS.Signals | null>((resolve) => runner.once("exit", (_code, signal) => resolve(signal))))
      expect(killed).toBe("SIGKILL")
      // the sleep still runs: the next run waits and gives up
      const second = spawnSync(process.execPath, [cli, "run", "--wait", "1s", "--", "true"], { env, encoding: "utf8", timeout: 30_000 })
      expect(Date.now() - t0).toBeLessThan(3_000)
      expect([second.status, second.stderr]).toEqual([75, "ocpool: no permit within 1s\n"])
      // once it ended, the permit is free again
      const third = spawnSync(process.execPath, [cli, "run", "--wait", "10s", "--", "true"], { env, encoding: "utf8", timeout: 30_000 })
      expect(third.status).toBe(0)
      expect(Date.now() - t0).toBeGreaterThanOrEqual(3_000)
    })
  , 30_000)

  it.live("US-51 a command not found is still 127 with ocpool's own line", () =>
    Effect.gen(function* () {
      const env = { ...process.env, OCPOOL_PERMITS: "1", OCPOOL_STATE_DIR: join(tmp(), "state"), NO_COLOR: "1" }
      const r = spawnSync(process.execPath, [cli, "run", "--", "ocpool-no-such-command-xyz"], { env, encoding: "utf8", timeout: 30_000 })
      expect([r.status, r.stderr]).toEqual([127, "ocpool: ocpool-no-such-command-xyz: command not found\n"])
    })
  )
})
