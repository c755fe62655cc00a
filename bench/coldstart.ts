/**
 * Cold start (`npm run bench:coldstart [-- --runs N --opencode BIN]`).
 *
 * Interleaved, in one run, N times each (fresh process every time):
 *  - `node -e 0`, the reference for the CLI;
 *  - `node bin/ocpool.js --help` and `node bin/ocpool.js status` (temp state directory and pool file);
 *  - with opencode's own Bun (`BUN_BE_BUN=1 <opencode> -e 0`), the reference for the plugin, the
 *    import of `dist/opencode-plugin.js` (the boot entry) in that Bun, the import plus the plugin's
 *    first call and its config hook (what opencode awaits at every start before it answers; no target),
 *    and the same plus the engine (`dist/opencode-plugin-engine.js`, loaded by the first hook that
 *    needs it: here `chat.params`), what the plugin costs until it fully runs.
 * It prints min and median wall time of each, and the ratios to their reference (targets: CLI ≤ 2×
 * `node -e 0`, plugin import ≤ 1.5× Bun's bare start). The opencode binary is the one the e2e harness
 * installs under `.e2e-cache/` (or `--opencode BIN`); without it the Bun rows are skipped.
 */
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { arg, argValue } from "./common.js"

const RUNS = arg("runs", 21)
const root = resolve(import.meta.dirname ?? ".", "..")
const cliBin = join(root, "bin", "ocpool.js")
const plugin = join(root, "dist", "opencode-plugin.js")

/** The opencode binary: `--opencode BIN`, else the newest one the e2e harness installed. */
const opencodeBinary = (): string | undefined => {
  const given = argValue("opencode")
  if (given !== undefined) return given
  const cache = join(root, ".e2e-cache")
  if (!existsSync(cache)) return undefined
  for (const dir of readdirSync(cache).filter((d) => d.startsWith("opencode-")).sort().reverse()) {
    for (const pkg of ["opencode-linux-x64", "opencode-linux-x64-baseline", "opencode-linux-arm64", "opencode-darwin-arm64", "opencode-darwin-x64"]) {
      const bin = join(cache, dir, "node_modules", pkg, "bin", "opencode")
      if (existsSync(bin) && (statSync(bin).mode & 0o111) !== 0) return bin
    }
  }
  return undefined
}

interface Case {
  readonly name: string
  readonly cmd: string
  readonly args: ReadonlyArray<string>
  readonly env?: Record<string, string>
  readonly times: Array<number>
}

const tmp = mkdtempSync(join(tmpdir(), "ocpool-coldstart-"))
const pool = join(tmp, "pool.txt")
writeFileSync(pool, "zen/alpha 3\nzen/beta 2\n")
const cliEnv = { OCPOOL_STATE_DIR: join(tmp, "state"), XDG_CONFIG_HOME: join(tmp, "config"), XDG_STATE_HOME: join(tmp, "xdg-state"), NO_COLOR: "1" }

const cases: Array<Case> = [
  { name: "node -e 0", cmd: process.execPath, args: ["-e", "0"], times: [] },
  { name: "ocpool --help", cmd: process.execPath, args: [cliBin, "--help"], env: cliEnv, times: [] },
  { name: "ocpool status", cmd: process.execPath, args: [cliBin, "status", "--pool", pool], env: cliEnv, times: [] }
]
/** The import, opencode's call and its config hook; `engine`: then a hook that waits for the engine. */
const bootScript = (engine: boolean) =>
  [
    `const p = (await import(${JSON.stringify(plugin)})).default`,
    `const hooks = await p({ client: {}, directory: ${JSON.stringify(tmp)}, worktree: ${JSON.stringify(tmp)}, project: {}, serverUrl: new URL("http://127.0.0.1:9") }, {})`,
    `if (Object.keys(hooks).length === 0) process.exit(3)`,
    `const config = {}`,
    `await hooks.config(config)`,
    `if (!("explore-1" in config.agent)) process.exit(4)`,
    ...(engine ? [`await hooks["chat.params"]({ sessionID: "s" }, {})`, `if (!(await hooks.tool.pool_status.execute({}, {})).includes("claims in flight")) process.exit(5)`] : []),
    `process.exit(0)`
  ].join(";")
const opencode = opencodeBinary()
if (opencode !== undefined) {
  const bun = { BUN_BE_BUN: "1" }
  const probe = spawnSync(opencode, ["-e", "0"], { env: { ...process.env, ...bun }, stdio: "ignore", timeout: 30_000 })
  if (probe.status === 0) {
    cases.push(
      { name: "bun -e 0", cmd: opencode, args: ["-e", "0"], env: bun, times: [] },
      { name: "bun import plugin", cmd: opencode, args: ["-e", `await import(${JSON.stringify(plugin)})`], env: bun, times: [] },
      // What every opencode start really pays: the import, opencode's first call of the plugin and its
      // config hook, over temporary directories, then exit (the engine's timers and watcher would keep Bun alive).
      { name: "bun import+boot", cmd: opencode, args: ["-e", bootScript(false)], env: { ...bun, ...cliEnv }, times: [] },
      { name: "bun +engine", cmd: opencode, args: ["-e", bootScript(true)], env: { ...bun, ...cliEnv }, times: [] }
    )
  } else console.log(`opencode at ${opencode} does not run as Bun (BUN_BE_BUN=1): plugin rows skipped`)
} else console.log("no opencode binary (.e2e-cache/ or --opencode BIN): plugin rows skipped")

const once = (c: Case): number => {
  const t0 = process.hrtime.bigint()
  const r = spawnSync(c.cmd, c.args, { env: { ...process.env, ...c.env }, stdio: ["ignore", "ignore", "pipe"], timeout: 60_000 })
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  if (r.status !== 0) throw new Error(`${c.name} exited ${r.status ?? r.signal}: ${r.stderr.toString().slice(0, 500)}`)
  return ms
}

try {
  for (const c of cases) once(c) // warm the file cache
  for (let i = 0; i < RUNS; i++) for (const c of cases) c.times.push(once(c))
} finally {
  rmSync(tmp, { recursive: true, force: true })
}

const min = (xs: ReadonlyArray<number>) => Math.min(...xs)
const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}
const byName = (n: string) => cases.find((c) => c.name === n)
const reference = (c: Case) => (c.name.startsWith("bun") ? byName("bun -e 0") : byName("node -e 0"))
const target = (c: Case) => (c.name === "bun import plugin" ? 1.5 : c.name.startsWith("ocpool") ? 2 : undefined)

console.log(`cold start, ${RUNS} interleaved runs each (wall ms)`)
console.log(`${"case".padEnd(20)} ${"min".padStart(8)} ${"median".padStart(8)} ${"×min".padStart(7)} ${"×median".padStart(8)}  target`)
for (const c of cases) {
  const ref = reference(c)
  const rMin = ref === undefined || ref === c ? "" : (min(c.times) / min(ref.times)).toFixed(2)
  const rMed = ref === undefined || ref === c ? "" : (median(c.times) / median(ref.times)).toFixed(2)
  const t = target(c)
  console.log(
    `${c.name.padEnd(20)} ${min(c.times).toFixed(1).padStart(8)} ${median(c.times).toFixed(1).padStart(8)} ${rMin.padStart(7)} ${rMed.padStart(8)}  ${t === undefined ? "" : `≤ ${t}×`}`
  )
}
const pluginBytes = existsSync(plugin) ? statSync(plugin).size : 0
const engineFile = join(root, "dist", "opencode-plugin-engine.js")
const engineBytes = existsSync(engineFile) ? statSync(engineFile).size : 0
const cliBytes = readdirSync(join(root, "dist"))
  .filter((f) => f === "cli.js" || f.startsWith("cli-"))
  .reduce((n, f) => n + statSync(join(root, "dist", f)).size, 0)
console.log(`bundles: dist/cli.js + chunks ${(cliBytes / 1024).toFixed(0)} KiB, dist/opencode-plugin.js ${(pluginBytes / 1024).toFixed(0)} KiB, dist/opencode-plugin-engine.js ${(engineBytes / 1024).toFixed(0)} KiB`)
