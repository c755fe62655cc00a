/**
 * One e2e file's world: the plugin built, the pinned opencode binary and one fake provider started in
 * `beforeAll`; every opencode server started through `start` stopped in `afterAll` (its pool log shown
 * with E2E_DEBUG=1), then the fake.
 */
import { afterAll, beforeAll } from "@effect/vitest"
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { join } from "node:path"
import { ensureOpencode, startFakeLlm, startOpencode, type FakeLlm, type OpencodeHandle, type StartOpencodeOptions } from "./harness.js"
import { poolLogLines } from "./poolLog.js"

const ROOT = new URL("../../", import.meta.url).pathname

export interface E2eWorld {
  /** The fake provider (read it inside tests: it exists once `beforeAll` ran). */
  readonly fake: FakeLlm
  /** Starts an opencode server on the pinned binary; it is stopped after the file. */
  readonly start: (options: Omit<StartOpencodeOptions, "binary">) => Promise<OpencodeHandle>
}

export const e2eWorld = (debugLines = 60): E2eWorld => {
  let binary = ""
  let fake: FakeLlm | undefined
  const servers: Array<OpencodeHandle> = []
  beforeAll(async () => {
    // asynchronously: a build that blocked the worker past 60 s would fail the run (vitest's fixed RPC timeout)
    await promisify(execFile)(process.execPath, [join(ROOT, "scripts/build.mjs")], { cwd: ROOT })
    ;[binary, fake] = await Promise.all([ensureOpencode(), startFakeLlm()])
  }, 240_000)
  afterAll(async () => {
    for (const oc of servers) {
      if (process.env.E2E_DEBUG === "1") console.log(`--- ${oc.logPath}\n${poolLogLines(oc.readLog()).slice(-debugLines).join("\n")}`)
      await oc.stop()
    }
    await fake?.stop()
  }, 60_000)
  return {
    get fake(): FakeLlm {
      if (fake === undefined) throw new Error("the fake provider starts in beforeAll")
      return fake
    },
    start: async (options) => {
      const oc = await startOpencode({ binary, ...options })
      servers.push(oc)
      return oc
    }
  }
}
