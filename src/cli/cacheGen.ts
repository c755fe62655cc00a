/**
 * Build step (scripts/build.mjs): makes the V8 code cache of the fast `status` bundle (argv[2]) after
 * running one `status` over an empty temporary state directory and the bundled preset, so the cache
 * holds the functions every start compiles, not only the bundle's top level. Prints the cache's file
 * name, which the build gives the entry.
 */
import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { basename, join } from "node:path"
import { writeCache } from "./codeCache.js"
import type { OutStream } from "./output.js"
import type * as StatusMain from "./statusMain.js"

const sink: OutStream = { isTTY: false, write: (_chunk, cb) => (cb(), true), on: () => sink }
const dir = mkdtempSync(join(tmpdir(), "ocpool-cache-"))
try {
  const cache = await writeCache(process.argv[2]!, async (exports) => {
    const { runStatus } = exports as typeof StatusMain
    await Effect.runPromise(runStatus({ pool: undefined, json: false, stateDir: join(dir, "state") }, { stdout: sink, stderr: sink, stdinIsTTY: false, env: {} }))
  })
  process.stdout.write(`${basename(cache)}\n`)
} finally {
  rmSync(dir, { recursive: true, force: true })
}
