/**
 * The newcomer's path, end to end: `npm pack` this checkout, `npm i -g` the tarball into a temp prefix,
 * `ocpool init --global` from that prefix with a temp HOME, `ocpool doctor --json` there, then the real
 * opencode 1.18.33 with that HOME loads the plugin from the global config `init` wrote (no plugin in
 * the project config) and routes a task spawn of `explore` to a pooled variant. `npm run test:e2e`.
 *
 * The only network access is the npm registry (`npm i -g` of the tarball's dependencies).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, dirname, join } from "node:path"
import { pathToFileURL } from "node:url"
import { poolLogLines } from "./poolLog.js"
import { ensureOpencode, fakeConfig, repoRoot, startFakeLlm, startOpencode, type FakeLlm, type OpencodeHandle } from "./harness.js"

const TURN_MS = 60_000
const PACK_MS = 240_000
const INSTALL_MS = 240_000

interface RunResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  readonly ms: number
}

/** Runs a command (no shell), bounded; the child is killed on timeout. Never throws on a non-zero exit. */
const run = (cmd: string, args: ReadonlyArray<string>, o: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<RunResult> =>
  new Promise((resolve, reject) => {
    const t0 = Date.now()
    const child = spawn(cmd, args, { cwd: o.cwd, env: o.env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d))
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`${cmd} ${args.join(" ")}: no exit within ${o.timeoutMs} ms\nstdout: ${stdout.slice(-2000)}\nstderr: ${stderr.slice(-2000)}`))
    }, o.timeoutMs)
    child.on("error", (e) => {
      clearTimeout(timer)
      reject(e)
    })
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr, ms: Date.now() - t0 })
    })
  })

const explain = (what: string, r: RunResult): string => `${what} exited ${r.code}\nstdout: ${r.stdout.slice(-3000)}\nstderr: ${r.stderr.slice(-3000)}`

/**
 * The env for npm itself: the runner's, minus what `npm run`/`npx` put there about THIS package or a
 * global/prefix/dry-run mode (the registry, cache and userconfig settings are kept).
 */
const npmEnv = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined) continue
    const lk = k.toLowerCase()
    if (lk.startsWith("npm_package_") || lk.startsWith("npm_lifecycle_") || lk === "npm_command") continue
    if (["npm_config_prefix", "npm_config_global", "npm_config_location", "npm_config_dry_run", "npm_config_ignore_scripts", "npm_config_pack_destination"].includes(lk)) continue
    env[k] = v
  }
  return env
}

/** The newcomer's shell: only HOME and PATH (no XDG_*, OPENCODE_*, OCPOOL_* of the runner). */
const userEnv = (home: string, prefix: string): NodeJS.ProcessEnv => ({
  HOME: home,
  PATH: [join(prefix, "bin"), dirname(process.execPath), ...(process.env["PATH"] ?? "").split(delimiter)].join(delimiter)
})

describe("installing opencode-pool the way a newcomer does (npm pack, npm i -g, ocpool init --global)", () => {
  let binary = ""
  let fake: FakeLlm | undefined
  let oc: OpencodeHandle | undefined
  let work = ""

  beforeAll(async () => {
    work = realpathSync(mkdtempSync(join(tmpdir(), "ocpool-install-e2e-")))
    binary = await ensureOpencode()
    fake = await startFakeLlm()
  }, 240_000)

  afterAll(async () => {
    if (process.env["E2E_DEBUG"] === "1" && oc !== undefined) console.log(`--- ${oc.logPath}\n${poolLogLines(oc.readLog()).slice(-60).join("\n")}`)
    await oc?.stop()
    await fake?.stop()
    if (work !== "" && process.env["OCPOOL_E2E_KEEP"] !== "1") rmSync(work, { recursive: true, force: true })
  }, 60_000)

  it(
    "US-15 newcomer: the packed tarball installed globally, `ocpool init --global` lists its plugin bundle in opencode's global config, doctor sees it, and the real opencode loads it from there and routes explore to a pooled variant",
    async () => {
      const t0 = Date.now()
      const packDir = join(work, "pack")
      const prefix = join(work, "prefix")
      const home = join(work, "home")
      for (const d of [packDir, prefix, home]) mkdirSync(d, { recursive: true })

      // (1) npm pack this checkout: `prepare` builds dist/ first
      const pack = await run("npm", ["pack", "--json", "--pack-destination", packDir], { cwd: repoRoot, env: npmEnv(), timeoutMs: PACK_MS })
      expect(pack.code, explain("npm pack", pack)).toBe(0)
      const tarballs = readdirSync(packDir).filter((f) => f.endsWith(".tgz"))
      expect(tarballs).toHaveLength(1)
      const tarball = join(packDir, tarballs[0]!)
      const packed = (JSON.parse(pack.stdout.slice(pack.stdout.indexOf("["))) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((f) => f.path)
      expect(packed).toEqual(expect.arrayContaining(["bin/ocpool.js", "dist/opencode-plugin.js", "dist/ocpool.cjs", "presets/free-tier.json", "package.json"]))

      // (2) npm i -g into a temp prefix
      const inst = await run("npm", ["i", "-g", "--prefix", prefix, tarball, "--no-audit", "--no-fund"], { cwd: work, env: npmEnv(), timeoutMs: INSTALL_MS })
      expect(inst.code, explain("npm i -g", inst)).toBe(0)
      const pkgRoot = join(prefix, "lib", "node_modules", "opencode-pool")
      const bundle = join(pkgRoot, "dist", "opencode-plugin.js")
      expect(existsSync(bundle)).toBe(true)
      const ocpool = join(prefix, "bin", "ocpool")
      const t1 = Date.now()

      // (3) ocpool init --global with a fresh HOME (nothing there yet)
      const init = await run(ocpool, ["init", "--global", "--json"], { cwd: home, env: userEnv(home, prefix), timeoutMs: 30_000 })
      expect(init.code, explain("ocpool init --global", init)).toBe(0)
      const entry = pathToFileURL(bundle).href
      const configPath = join(home, ".config", "opencode", "opencode.json")
      const poolPath = join(home, ".config", "opencode-pool", "pool.txt")
      const out = JSON.parse(init.stdout) as { path: string; written: boolean; config: { path: string; entry: string; changed: boolean; created: boolean } }
      expect(out).toMatchObject({ path: poolPath, written: true, config: { path: configPath, entry, changed: true, created: true } })
      expect(entry.startsWith(pathToFileURL(prefix).href + "/")).toBe(true)
      const written = JSON.parse(readFileSync(configPath, "utf8")) as { plugin?: unknown }
      expect(written.plugin).toEqual([entry])
      // the pool file is the bundled preset
      expect(readFileSync(poolPath, "utf8")).toContain("opencode/big-pickle 2")

      // a second run changes nothing
      const again = await run(ocpool, ["init", "--global", "--json"], { cwd: home, env: userEnv(home, prefix), timeoutMs: 30_000 })
      expect(again.code, explain("second ocpool init --global", again)).toBe(0)
      expect(JSON.parse(again.stdout)).toMatchObject({ written: false, config: { changed: false } })
      expect(JSON.parse(readFileSync(configPath, "utf8"))).toEqual(written)

      // doctor, in the same HOME, from a directory with no opencode config of its own
      const doctor = await run(ocpool, ["doctor", "--json"], { cwd: home, env: userEnv(home, prefix), timeoutMs: 30_000 })
      expect([0, 1], explain("ocpool doctor --json", doctor)).toContain(doctor.code)
      const checks = (JSON.parse(doctor.stdout) as { checks: Array<{ id: string; status: string; detail: string }> }).checks
      const plugin = checks.find((c) => c.id === "plugin")
      expect(plugin, JSON.stringify(checks)).toMatchObject({ status: "ok" })
      expect(plugin!.detail.startsWith(`listed in ${configPath}`)).toBe(true)
      const t2 = Date.now()

      // (4) the real opencode with that HOME: the plugin comes only from the global config init wrote.
      // The preset's models do not exist on the fake provider, so the pool is replaced by fake models.
      writeFileSync(poolPath, "fakeB/pool-b 1\nfakeB/pool-c 1\n")
      const config = fakeConfig({ fakeUrl: fake!.url })
      expect(config).not.toHaveProperty("plugin")
      oc = await startOpencode({ binary, home, configJson: config })
      expect(JSON.parse(readFileSync(join(oc.projectDir, "opencode.json"), "utf8"))).not.toHaveProperty("plugin")
      expect(JSON.parse(readFileSync(configPath, "utf8"))).toEqual(written)
      const agents = (await oc.request("GET", "/agent")).body as Array<{ name: string }>
      expect(agents.map((a) => a.name)).toEqual(expect.arrayContaining(["explore", "explore-1", "explore-2"]))

      const session = await oc.createSession()
      const mark = await oc.prompt(session.id, "spawn [[task:explore:say hi]]")
      const created = await oc.waitForEvent((e) => e.type === "session.created" && e.properties["info"]?.parentID === session.id, TURN_MS, mark)
      const child = String(created.properties["info"].id)
      await oc.waitIdle(session.id, mark, TURN_MS)

      const childAssistant = (await oc.messages(child)).find((m) => m.info.role === "assistant")
      expect(childAssistant?.info).toMatchObject({ agent: "explore-1", providerID: "fakeB", modelID: "pool-b" })
      const routed = poolLogLines(oc.readLog()).filter((l) => l.startsWith("routed "))
      expect(routed).toHaveLength(1)
      expect(routed[0]).toMatch(/^routed explore -> explore-1 slot=1 model=fakeB\/pool-b /)
      const childRequests = (await fake!.requests()).filter((r) => r.behavior !== "title" && r.firstUserText.includes("say hi") && !r.firstUserText.includes("[[task:"))
      expect(childRequests.length).toBeGreaterThanOrEqual(1)
      expect(childRequests[0]).toMatchObject({ provider: "fakeB", model: "pool-b" })

      console.info(`[e2e install] pack + npm i -g: ${t1 - t0} ms; init x2 + doctor: ${t2 - t1} ms; opencode start + routed spawn: ${Date.now() - t2} ms`)
    },
    PACK_MS + INSTALL_MS + 180_000
  )
})
