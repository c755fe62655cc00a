/**
 * opencode start with and without the plugin (`npm run bench:opencode-start [-- --pairs N]`, issue 20 item 8).
 *
 * Times, from the spawn of `opencode serve` to its first answered `GET /agent` (HTTP 200: the first
 * directory-scoped request, which boots the instance and with it the plugins), starts of the pinned
 * opencode (the binary the e2e harness installs under `.e2e-cache/`) without the plugin and with
 * `dist/opencode-plugin.js` as a file:// plugin entry with a small pool (as the e2e tests configure it),
 * strictly alternating, after one unmeasured warm-up pair. Every start gets a fresh temporary HOME with
 * the harness's seeded config directories, offline env and config (test/e2e/server.ts, config.ts), and
 * is stopped (TERM, KILL after 5 s) before the next one starts.
 *
 * The clock is read right before the spawn. `/global/health` is polled every 10 ms with overlapping
 * requests, each with its own timeout (a request that arrives while opencode is still binding is never
 * answered, test/e2e/README.md), then `GET /agent` is sent at once and repeated every 10 ms until it
 * answers 200. Both phases are reported: the listen phase (spawn → health) does not load plugins; the
 * instance phase (health → /agent) does.
 *
 * A "with" start then waits (up to ENGINE_WAIT_MS) for the engine's first line in opencode's log: the
 * boot entry answers the config hook without it and loads it afterwards, so the time until the plugin
 * fully runs (reaper, claim file, watcher) is reported beside the ratio, not in it.
 *
 * Prints min / median / max of each, every value, and the ratio of the medians (target ≤ 1.05×; a miss
 * is reported, not an exit code). Flags: `--pairs N` (default 9), `--warmup N` (default 1),
 * `--plugin FILE` (default dist/opencode-plugin.js), `--opencode BIN`, `--noop` (a third start per
 * round with a plugin that returns no hooks: what opencode itself pays for any plugin),
 * `--compare FILE` (a third start per round with another build of the plugin, e.g. the one before a
 * change), `--warm-cache` (one Bun transpiler cache for all starts, see BUN_CACHE), `--logs DIR` (keep each
 * start's serve.log there), `--log-level LEVEL` (opencode's, default INFO), `--verbose` (each start's
 * times as they come).
 */
import { spawn, type ChildProcess } from "node:child_process"
import { closeSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { fakeConfig } from "../test/e2e/config.js"
import { ensureOpencode, OPENCODE_VERSION } from "../test/e2e/opencode.js"
import { freePort, isRunning, stopChild, track } from "../test/e2e/processes.js"
import { inheritedEnv, OFFLINE_ENV, seedConfigDir, withPlugins, type PluginEntry } from "../test/e2e/server.js"
import { arg, argValue, flag, ROOT } from "./common.js"

const PAIRS = arg("pairs", 9)
const WARMUP = arg("warmup", 1)
const PLUGIN = resolve(argValue("plugin") ?? join(ROOT, "dist", "opencode-plugin.js"))
const LOGS = argValue("logs")
const LOG_LEVEL = argValue("log-level") ?? "INFO"
const NOOP = flag("noop")
/** `--compare FILE`: a third start per round with another build of the plugin (the one before a change), interleaved with the other two. */
const COMPARE = argValue("compare") === undefined ? undefined : resolve(argValue("compare")!)
const VERBOSE = flag("verbose")
const WARM_CACHE = flag("warm-cache")
const TARGET = 1.05
const POLL_MS = 10
const START_TIMEOUT_MS = 120_000
/** How long after /agent answered the "with" arm waits for the engine's first log line (it may load after the boot). */
const ENGINE_WAIT_MS = 15_000
/** The engine's boot line (PoolEngineShell), which opencode's log shows once the plugin's engine runs. */
const ENGINE_LINE = "reaper armed"
/** The pool of the e2e tests (test/e2e/pool.e2e.test.ts). */
const POOL = { slots: [{ model: "fakeB/pool-b", weight: 1 }, { model: "fakeB/pool-c", weight: 1 }] }

type Arm = "without" | "with" | "noop" | "compare"

interface Start {
  readonly arm: Arm
  /** Spawn → first 200 of /global/health. */
  readonly listenMs: number
  /** Spawn → first 200 of GET /agent. */
  readonly readyMs: number
  /** Spawn → the engine's "reaper armed" line in opencode's log (the plugin fully running), when seen within ENGINE_WAIT_MS. */
  readonly engineMs?: number | undefined
}

const min = (xs: ReadonlyArray<number>) => Math.min(...xs)
const max = (xs: ReadonlyArray<number>) => Math.max(...xs)
const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}
const ms = (x: number) => x.toFixed(0)
const sleep = (n: number) => new Promise<void>((r) => setTimeout(r, n))

/** Resolves at the first 200 of `url`, polled every POLL_MS with overlapping requests (at most 16 in flight, 1 s each). */
const firstHealthy = (url: string, child: ChildProcess, deadline: number): Promise<number> =>
  new Promise((resolveAt, reject) => {
    let done = false
    let inFlight = 0
    const finish = (f: () => void) => {
      if (done) return
      done = true
      clearInterval(tick)
      f()
    }
    const tick = setInterval(() => {
      if (!isRunning(child)) return finish(() => reject(new Error(`opencode exited during start (code ${child.exitCode}, signal ${child.signalCode})`)))
      if (performance.now() > deadline) return finish(() => reject(new Error(`opencode was not healthy within ${START_TIMEOUT_MS} ms`)))
      if (inFlight >= 16) return
      inFlight++
      fetch(url, { signal: AbortSignal.timeout(1_000) })
        .then(async (r) => {
          const at = performance.now()
          await r.arrayBuffer()
          if (r.ok) finish(() => resolveAt(at))
        })
        .catch(() => undefined)
        .finally(() => inFlight--)
    }, POLL_MS)
  })

/** The temporary directory of the start under way, removed on exit whatever happens. */
let current: string | undefined
process.on("exit", () => {
  if (current !== undefined) rmSync(current, { recursive: true, force: true })
})

/** `--noop`: a plugin that returns no hooks, in a temporary directory of its own. */
const noopPlugin = (): string => {
  const dir = mkdtempSync(join(tmpdir(), "ocpool-ocstart-noop-"))
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, "noop-plugin.js"), "export default async () => ({})\n")
  return join(dir, "noop-plugin.js")
}
const NOOP_PLUGIN = NOOP ? noopPlugin() : ""

/**
 * Bun keeps the code it transpiled from files over 50 KB (the plugin bundle) in a runtime transpiler
 * cache, by default under `$XDG_CACHE_HOME/bun`: a fresh HOME has none, so every start here transpiles
 * the bundle again, as the first start after an install or upgrade does. `--warm-cache` shares one cache
 * directory across the starts (filled by the warm-up), as every later start on a user's machine finds it.
 */
const bunCache = (): string => {
  const dir = mkdtempSync(join(tmpdir(), "ocpool-ocstart-buncache-"))
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }))
  return dir
}
const BUN_CACHE = WARM_CACHE ? bunCache() : undefined

/** When the engine's first line is in `logPath` (polled every POLL_MS up to ENGINE_WAIT_MS after `from`), as ms after `t0`. */
const engineSeen = async (logPath: string, t0: number, from: number): Promise<number | undefined> => {
  while (performance.now() - from < ENGINE_WAIT_MS) {
    if (readFileSync(logPath, "utf8").includes(ENGINE_LINE)) return performance.now() - t0
    await sleep(POLL_MS)
  }
  return undefined
}

const startOnce = async (binary: string, arm: Arm, label: string): Promise<Start> => {
  const workDir = mkdtempSync(join(tmpdir(), "ocpool-ocstart-"))
  current = workDir
  const home = join(workDir, "home")
  const configHome = join(home, ".config")
  const projectDir = join(workDir, "proj")
  const dirs = { configHome, dataHome: join(home, ".local", "share"), stateHome: join(home, ".local", "state"), cacheHome: join(home, ".cache") }
  for (const d of [...Object.values(dirs), projectDir]) mkdirSync(d, { recursive: true })
  seedConfigDir(join(configHome, "opencode"))
  seedConfigDir(join(projectDir, ".opencode"))
  // The fake provider's address is never called during a start (nothing is prompted); a closed port will do.
  const plugins: ReadonlyArray<PluginEntry> =
    arm === "with" ? [[PLUGIN, { models: POOL }]] : arm === "compare" ? [[COMPARE!, { models: POOL }]] : arm === "noop" ? [NOOP_PLUGIN] : []
  writeFileSync(join(projectDir, "opencode.json"), JSON.stringify(withPlugins(fakeConfig({ fakeUrl: "http://127.0.0.1:9" }), plugins), null, 2) + "\n")
  const env: Record<string, string> = {
    ...inheritedEnv(),
    HOME: home,
    XDG_CONFIG_HOME: dirs.configHome,
    XDG_DATA_HOME: dirs.dataHome,
    XDG_STATE_HOME: dirs.stateHome,
    XDG_CACHE_HOME: dirs.cacheHome,
    ...OFFLINE_ENV
  }
  if (BUN_CACHE === undefined) delete env["BUN_RUNTIME_TRANSPILER_CACHE_PATH"]
  else env["BUN_RUNTIME_TRANSPILER_CACHE_PATH"] = BUN_CACHE
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const logPath = join(workDir, "serve.log")
  const logFd = openSync(logPath, "a")
  const args = ["serve", "--hostname", "127.0.0.1", "--port", String(port), "--print-logs", "--log-level", LOG_LEVEL]
  // setpriv --pdeathsig, as the harness: the kernel kills opencode if this process dies without stopping it.
  const usePdeathsig = process.platform === "linux" && existsSync("/usr/bin/setpriv")
  let child: ChildProcess
  const t0 = performance.now()
  try {
    child = usePdeathsig
      ? spawn("/usr/bin/setpriv", ["--pdeathsig", "KILL", "--", binary, ...args], { cwd: projectDir, env, stdio: ["ignore", logFd, logFd] })
      : spawn(binary, args, { cwd: projectDir, env, stdio: ["ignore", logFd, logFd] })
  } finally {
    closeSync(logFd)
  }
  track(child)
  try {
    const deadline = t0 + START_TIMEOUT_MS
    const healthy = await firstHealthy(`${base}/global/health`, child, deadline)
    if (VERBOSE) console.log(`  ${label}: healthy after ${ms(healthy - t0)} ms`)
    const agent = `${base}/agent?directory=${encodeURIComponent(projectDir)}`
    for (;;) {
      let status: number | string
      try {
        const r = await fetch(agent, { headers: { "x-opencode-directory": encodeURIComponent(projectDir) }, signal: AbortSignal.timeout(Math.max(1_000, Math.ceil(deadline - performance.now()))) })
        const at = performance.now()
        await r.arrayBuffer()
        if (VERBOSE) console.log(`  ${label}: GET /agent -> ${r.status} after ${ms(at - t0)} ms`)
        if (r.status === 200) return { arm, listenMs: healthy - t0, readyMs: at - t0, engineMs: arm === "with" || arm === "compare" ? await engineSeen(logPath, t0, at) : undefined }
        status = r.status
      } catch (e) {
        status = String(e)
        if (VERBOSE) console.log(`  ${label}: GET /agent failed after ${ms(performance.now() - t0)} ms: ${status}`)
      }
      if (!isRunning(child) || performance.now() > deadline) throw new Error(`GET /agent -> ${status} (${label}, log ${logPath})`)
      await sleep(POLL_MS)
    }
  } finally {
    await stopChild(child)
    if (LOGS !== undefined) {
      mkdirSync(LOGS, { recursive: true })
      copyFileSync(logPath, join(LOGS, `${label}.log`))
    }
    rmSync(workDir, { recursive: true, force: true })
    current = undefined
  }
}

if (!existsSync(PLUGIN)) throw new Error(`no plugin bundle at ${PLUGIN} (npm run build)`)
const binary = argValue("opencode") ?? (await ensureOpencode({ installDir: join(ROOT, ".e2e-cache", `opencode-${OPENCODE_VERSION}`) }))
const arms: ReadonlyArray<Arm> = [...(NOOP ? ["without", "with", "noop"] as const : ["without", "with"] as const), ...(COMPARE === undefined ? [] : ["compare"] as const)]
const starts: Array<Start> = []
for (let round = -WARMUP; round < PAIRS; round++) {
  for (const arm of arms) {
    const s = await startOnce(binary, arm, `${round < 0 ? `warmup${-round}` : `r${round + 1}`}-${arm}`)
    if (round >= 0) starts.push(s)
  }
}

const of = (arm: Arm) => starts.filter((s) => s.arm === arm)
const pluginKiB = (statSync(PLUGIN).size / 1024).toFixed(0)
console.log(
  `opencode start bench: spawn -> first 200 of GET /agent, ${PAIRS} alternating ${NOOP ? "rounds (without, with, no-op plugin)" : "pairs"} after ${WARMUP} warm-up, Bun transpiler cache ${WARM_CACHE ? "shared (warm)" : "fresh per start (cold)"}, opencode ${OPENCODE_VERSION}, plugin ${PLUGIN.startsWith(ROOT) ? PLUGIN.slice(ROOT.length) : PLUGIN} (${pluginKiB} KiB), node ${process.version}`
)
const label: Record<Arm, string> = { without: "without plugin", with: "with plugin", noop: "no-op plugin", compare: "compared build" }
for (const arm of arms) {
  const xs = of(arm)
  const ready = xs.map((s) => s.readyMs)
  const listen = xs.map((s) => s.listenMs)
  const instance = xs.map((s) => s.readyMs - s.listenMs)
  console.log(
    `${label[arm].padEnd(15)} min ${ms(min(ready)).padStart(5)}  median ${ms(median(ready)).padStart(5)}  max ${ms(max(ready)).padStart(5)} ms   (listen median ${ms(median(listen))}, instance boot median ${ms(median(instance))} ms)`
  )
}
for (const arm of arms.filter((a) => a === "with" || a === "compare")) {
  const engine = of(arm).flatMap((s) => (s.engineMs === undefined ? [] : [s.engineMs]))
  console.log(
    `engine running (${arm === "with" ? "with plugin" : "compared build"}) ${engine.length === 0 ? "not seen" : `min ${ms(min(engine))}  median ${ms(median(engine))}  max ${ms(max(engine))} ms`} after spawn (its "${ENGINE_LINE}" line in opencode's log; ${engine.length}/${of(arm).length} starts, waited up to ${ENGINE_WAIT_MS / 1000} s after /agent)`
  )
}
console.log("distribution (ms, in run order; listen + instance boot):")
for (const arm of arms) console.log(`  ${label[arm].padEnd(15)} ${of(arm).map((s) => `${ms(s.readyMs)} (${ms(s.listenMs)}+${ms(s.readyMs - s.listenMs)})`).join(", ")}`)
const without = median(of("without").map((s) => s.readyMs))
const withPlugin = median(of("with").map((s) => s.readyMs))
const ratio = withPlugin / without
const pairRatios = of("with").map((s, i) => s.readyMs / of("without")[i]!.readyMs)
console.log(`  per-pair ratio  ${pairRatios.map((r) => r.toFixed(2)).join(", ")}`)
if (COMPARE !== undefined) {
  const other = median(of("compare").map((s) => s.readyMs))
  console.log(`compared build ${COMPARE} / without: ${(other / without).toFixed(2)}x (${other >= without ? "+" : ""}${ms(other - without)} ms)`)
}
if (NOOP) {
  const noop = median(of("noop").map((s) => s.readyMs))
  console.log(`no-op plugin / without: ${(noop / without).toFixed(2)}x (${noop >= without ? "+" : ""}${ms(noop - without)} ms): what opencode pays for loading any plugin`)
}
console.log(
  `ratio of medians with/without: ${ratio.toFixed(2)}x (${withPlugin >= without ? "+" : ""}${ms(withPlugin - without)} ms; median of per-pair ratios ${median(pairRatios).toFixed(2)}x)  target <= ${TARGET}x: ${ratio <= TARGET ? "met" : "not met"}`
)
