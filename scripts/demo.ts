/**
 * `npm run demo`: the pinned opencode 1.18.33 (installed once into .e2e-cache/), offline, against the
 * shipped fake provider, with opencode-pool loaded. It shows the pool routing, cooling and recovering,
 * with `ocpool status` along the way, the notifications a person gets (through a stand-in desktop: small
 * `notify-send` and `gdbus` scripts that record what would pop up and close; the cooling step answers with
 * a real provider's published 429 from test/fixtures/provider-errors/), a root session that runs
 * out of quota continuing on a fallback model by itself, reports with `ocpool cost` what the work cost
 * and what the pool saved, shows two sessions' test runs taking turns on a heavy-work budget of 1, then
 * replays the trace the plugin recorded, and ends with the live view's first frame and the timeline of
 * its own trace (a self-contained page whose path it prints). Loopback only; everything it starts is
 * stopped at the end.
 */
import { execFile, spawn, spawnSync } from "node:child_process"
import { promisify } from "node:util"
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ensureOpencode, fakeConfig, startFakeLlm, startOpencode, type FakeLlm, type OpencodeHandle } from "../test/e2e/harness.js"
import { poolLogLines } from "../test/e2e/poolLog.js"
import type { Cooldown } from "../src/core/pool/cooldown.js"
import { cooldownIn, permitEntriesIn } from "../test/support/stateDb.js"
import type { StatusView } from "../src/core/status.js"
import { liveFrame } from "../src/core/view/live.js"
import { startBenchCluster, type BenchCluster } from "../bench/fleetCluster.js"

const root = new URL("../", import.meta.url).pathname
const POOL = "# the demo pool: two free models on the fake provider, one slot each\nfakeB/pool-b 1\nfakeB/pool-c 1\n"
const bold = (s: string) => (process.stdout.isTTY ? `\u001b[1m${s}\u001b[0m` : s)

/**
 * Progress: every step says how long the one before it took, and a step silent for more than 2 s says
 * what it waits for and for how long (on a terminal one line rewritten in place; into a pipe a line
 * every 5 s). The demo never goes quiet for long without a word.
 */
const started = Date.now()
let stepName = "starting"
let stepAt = Date.now()
let lastOutput = Date.now()
let tickerShown = false
const seconds = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`
const clearTicker = () => {
  if (tickerShown && process.stdout.isTTY) process.stdout.write("\r\u001b[K")
  tickerShown = false
}
for (const name of ["log", "error"] as const) {
  const original = console[name].bind(console)
  console[name] = (...args: Array<unknown>) => {
    clearTicker()
    lastOutput = Date.now()
    original(...args)
  }
}
let waitingFor = ""
/** What the current step is waiting for, named by the progress line. */
const waiting = (what: string) => {
  waitingFor = what
}
const ticker = setInterval(() => {
  const quiet = Date.now() - lastOutput
  const line = `   … ${waitingFor === "" ? stepName : waitingFor} (${seconds(Date.now() - stepAt)} into this step)`
  if (process.stdout.isTTY && quiet >= 2000) {
    process.stdout.write(`\r\u001b[K${line}`)
    tickerShown = true
  } else if (!process.stdout.isTTY && quiet >= 5000) {
    process.stdout.write(`${line}\n`)
    lastOutput = Date.now()
  }
}, 500)
ticker.unref()
const step = (s: string) => {
  const took = Date.now() - stepAt
  console.log(`${stepName === "starting" ? "" : `   (${seconds(took)})\n`}\n${bold(`== ${s}`)}`)
  stepName = s.replace(/:.*$/, "")
  stepAt = Date.now()
  waitingFor = ""
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** `ocpool status` against the demo's state dir: its output (stderr after stdout). */
const statusText = (oc: OpencodeHandle): string => {
  const r = spawnSync(process.execPath, [join(root, "bin/ocpool.js"), "status", "--state-dir", oc.stateDir], {
    encoding: "utf8",
    env: { ...process.env, XDG_CONFIG_HOME: oc.configHome }
  })
  return `${r.stdout.trimEnd()}${r.stderr === "" ? "" : `\n${r.stderr.trimEnd()}`}`
}
const status = (oc: OpencodeHandle) => console.log(`$ ocpool status\n${statusText(oc)}`)

const until = async <A>(f: () => Promise<A> | A, ok: (a: A) => boolean, ms: number): Promise<A> => {
  const end = Date.now() + ms
  for (;;) {
    const a = await f()
    if (ok(a) || Date.now() > end) return a
    await sleep(200)
  }
}

/** Asks a new root session to spawn one `explore` subagent with the given child prompt; returns the child id. */
const spawnExplore = async (oc: OpencodeHandle, childPrompt: string): Promise<{ session: string; child: string; mark: number }> => {
  const session = (await oc.createSession()).id
  const mark = await oc.prompt(session, `please look around [[task:explore:${childPrompt}]]`)
  const e = await oc.waitForEvent((ev) => ev.type === "session.created" && ev.properties["info"]?.parentID === session, 60_000, mark)
  return { session, child: String(e.properties["info"].id), mark }
}

const childModel = async (oc: OpencodeHandle, child: string): Promise<string> => {
  const m = await until(() => oc.messages(child), (ms) => ms.some((x) => x.info.role === "assistant"), 30_000)
  const a = m.find((x) => x.info.role === "assistant")
  return a === undefined ? "?" : `${a.info["providerID"]}/${a.info["modelID"]}`
}

const poolLog = (oc: OpencodeHandle, since: number): Array<string> => poolLogLines(oc.readLog()).slice(since)

/** The requests waiting for a heavy-work permit now (the state dir's database, read directly). */
const permitsQueued = (oc: OpencodeHandle): number => permitEntriesIn(oc.stateDir).filter((e) => e.grantedAt === undefined).length

/** The text of a session's bash tool outputs. */
const bashOutput = async (oc: OpencodeHandle, session: string): Promise<string> =>
  (await oc.messages(session))
    .flatMap((m) => m.parts)
    .filter((p) => p.type === "tool" && p["tool"] === "bash")
    .map((p) => String(p["state"]?.output ?? ""))
    .join("\n")

/**
 * The demo's test suite: `make test` appends `<shell pid> start|end <ms>` to runs.log around a 3 s sleep,
 * so the runs' times show whether they overlapped.
 */
const MAKEFILE = 'test:\n\t@id=$$$$; echo "$$id start $$(date +%s%3N)" >> runs.log; sleep 3; echo "$$id end $$(date +%s%3N)" >> runs.log\n'
interface MakeRun {
  readonly id: string
  readonly start: number
  readonly end?: number | undefined
}
const makeRuns = (dir: string): Array<MakeRun> => {
  const file = join(dir, "runs.log")
  const runs: Array<MakeRun> = []
  if (!existsSync(file)) return runs
  for (const [id, what, at] of readFileSync(file, "utf8").split("\n").filter((l) => l !== "").map((l) => l.split(" "))) {
    if (what === "start") runs.push({ id: id!, start: Number(at) })
    const i = runs.findIndex((r) => r.id === id)
    if (what === "end" && i >= 0) runs[i] = { ...runs[i]!, end: Number(at) }
  }
  return runs
}

/** A real provider's published error payload from the classification corpus (test/fixtures/provider-errors/). */
interface CorpusCase {
  readonly id: string
  readonly source: string
  readonly model: string
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: unknown
}
const corpusCase = (provider: string, id: string): CorpusCase => {
  const file = JSON.parse(readFileSync(join(root, "test/fixtures/provider-errors", `${provider}.json`), "utf8")) as { cases: ReadonlyArray<CorpusCase> }
  const c = file.cases.find((x) => x.id === id)
  if (c === undefined) throw new Error(`no case ${id} in test/fixtures/provider-errors/${provider}.json`)
  return c
}

/** Where a cooldown's window came from (the cooldown's `source`), in words. */
const WINDOW_SOURCE: Record<string, string> = {
  detail: "as the body's RetryInfo retryDelay said",
  body: "as the body's resets_in_seconds/resets_at said",
  text: "as the error message said",
  header: "as the rate-limit headers said",
  retry: "as opencode's retry time said",
  day: "until the provider's midnight (a per-day quota)",
  backoff: "by the strike backoff (no stated reset)",
  flat: "by the flat window (no stated reset)"
}

/** A model's cooldown in the state dir's database, or undefined. */
const cooldownOf = (oc: OpencodeHandle, model: string): Cooldown | undefined => cooldownIn(oc.stateDir, model)

/**
 * Demo prices, USD per 1M tokens: the root's fakeA/pool-a priced like a premium model, the pool's
 * models free. Declared in the opencode config (so opencode records each message's cost) and in the
 * catalog file `ocpool cost` reads through OPENCODE_MODELS_PATH.
 */
const PRICES = { fakeA: { "pool-a": { input: 15, output: 75 } }, fakeB: { "pool-b": { input: 0, output: 0 }, "pool-c": { input: 0, output: 0 }, backup: { input: 0, output: 0 } } } as const
const pricedConfig = (fakeUrl: string) => {
  const config = fakeConfig({ fakeUrl }) as { provider: Record<string, { models: Record<string, Record<string, unknown>> }> }
  // the root session's fallback model (step 6): outside the pool, so nothing else has cooled it
  config.provider.fakeB!.models["backup"] = { ...config.provider.fakeB!.models["pool-b"], name: "backup" }
  for (const [provider, models] of Object.entries(PRICES)) {
    for (const [id, cost] of Object.entries(models)) config.provider[provider]!.models[id] = { ...config.provider[provider]!.models[id], cost }
  }
  return config
}
const catalogOf = () => Object.fromEntries(Object.entries(PRICES).map(([p, models]) => [p, { models: Object.fromEntries(Object.entries(models).map(([id, cost]) => [id, { cost }])) }]))

/**
 * A stand-in desktop: `notify-send` and `gdbus` on opencode's PATH that append what they were asked
 * (one line per call, fields separated by U+001F) to a file; notify-send prints a popup id for fade.
 */
const fakeDesktop = (dir: string) => {
  const bin = join(dir, "bin")
  const log = join(dir, "desktop.log")
  mkdirSync(bin, { recursive: true })
  const script = (name: string) =>
    `#!/bin/sh\n{ printf '${name}'; for a in "$@"; do printf '\\037%s' "$a"; done; printf '\\n'; } >> '${log}'\n` +
    (name === "notify-send" ? `wc -l < '${log}'\n` : "")
  for (const name of ["notify-send", "gdbus"]) {
    writeFileSync(join(bin, name), script(name))
    chmodSync(join(bin, name), 0o755)
  }
  const calls = () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter((l) => l !== "").map((l) => l.split("\u001f")) : [])
  return { bin, calls }
}

/** A popup as a person would read it: urgency, title, message (the argv after `--`). */
const popup = (argv: ReadonlyArray<string>): string => {
  const dash = argv.indexOf("--")
  const urgency = argv.find((a) => a.startsWith("--urgency="))?.slice(10) ?? "?"
  const sound = argv.find((a) => a.startsWith("--hint=string:sound-name:"))?.slice(25) ?? "none"
  return `[${urgency}, sound ${sound}] ${argv[dash + 1]} | ${argv[dash + 2]}`
}

let fake: FakeLlm | undefined
let oc: OpencodeHandle | undefined
/** Step 9: the fleet driver (`node dist/dev-fleet-drive.js`) as two hosts on a throwaway PostgreSQL (the plugin's own route path, no opencode needed). */
const fleetStep = async (dir: string): Promise<void> => {
  let cluster: BenchCluster
  try {
    cluster = await startBenchCluster()
  } catch (e) {
    console.log(`(skipped: ${e instanceof Error ? e.message : String(e)})`)
    return
  }
  try {
    const cli = join(root, "bin/ocpool.js")
    const init = spawnSync(process.execPath, [cli, "fleet", "init", "--url", cluster.url], { encoding: "utf8", timeout: 60_000 })
    console.log(`$ ocpool fleet init --url postgres://ocpool:…@127.0.0.1:${cluster.port}/ocpool   # exit ${init.status}\n${init.stdout.trimEnd()}${init.stderr === "" ? "" : `\n${init.stderr.trimEnd()}`}`)
    const slots = [{ model: "fakeB/pool-b", weight: 1 }, { model: "fakeB/pool-c", weight: 1 }]
    const configOf = (host: string) => {
      const file = join(dir, `fleet-${host}.json`)
      mkdirSync(join(dir, `state-${host}`), { recursive: true, mode: 0o700 })
      writeFileSync(file, JSON.stringify({ state: { backend: "postgres", url: cluster.url }, stateDir: join(dir, `state-${host}`), lockWaitMs: 5_000, models: { slots } }))
      return file
    }
    const startAt = Date.now() + 2_000
    const drive = (host: string, picks: number, more: ReadonlyArray<string>) =>
      new Promise<Array<Record<string, unknown>>>((resolve) => {
        const args = [join(root, "dist/dev-fleet-drive.js"), "--config", configOf(host), "--picks", String(picks), "--hold", "1", "--seed", "7", "--pause-ms", "600", "--start-at", String(startAt), ...more]
        const child = spawn(process.execPath, args, { env: { ...process.env, OCPOOL_HOST_ID: host, OCPOOL_STATE_URL: "" }, stdio: ["ignore", "pipe", "ignore"] })
        let out = ""
        child.stdout.on("data", (b: Buffer) => (out += b.toString()))
        child.on("close", () => resolve(out.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Record<string, unknown>)))
      })
    console.log("host-a picks 3 times, host-b 8 times (base explore, slots fakeB/pool-b and fakeB/pool-c, weight 1, each host holding one claim); host-a answers a 429 for fakeB/pool-b after its 1st pick")
    const both = Promise.all([drive("host-a", 3, ["--cool-after", "1", "--cool-model", "fakeB/pool-b", "--cool-ms", "60000"]), drive("host-b", 8, [])])
    // while host-b still picks: what `ocpool status` shows of the fleet
    await sleep(Math.max(0, startAt + 1_500 - Date.now()))
    writeFileSync(join(dir, "fleet-pool.txt"), POOL)
    const fleet = spawnSync(process.execPath, [cli, "status", "--pool", join(dir, "fleet-pool.txt")], { encoding: "utf8", timeout: 60_000, env: { ...process.env, OCPOOL_STATE_URL: cluster.url, OCPOOL_HOST_ID: "desk", OCPOOL_STATE_DIR: join(dir, "state-desk") } })
    const [a, b] = await both
    const cool = a.find((e) => e.ev === "cool")
    const t0 = Math.min(...[...a, ...b].filter((e) => typeof e.at === "number").map((e) => e.at as number))
    const when = (e: Record<string, unknown>) => `${(((e.at as number) - t0) / 1000).toFixed(2)} s`
    for (const e of [...a, ...b].filter((x) => x.ev === "pick" || x.ev === "cool").sort((x, y) => (x.at as number) - (y.at as number))) {
      if (e.ev === "cool") console.log(`  ${when(e)}  ${e.host} cools ${e.model} (429) until ${new Date(e.until as number).toISOString().slice(11, 19)}Z, committed to PostgreSQL`)
      else console.log(`  ${when(e)}  ${e.host} picks ${e.model} (slot ${e.slot}, ${e.pass} pass, load ${e.load}/${e.cap})${(e.cooling as Array<string>).length > 0 ? `  cooling: ${(e.cooling as Array<string>).join(", ")}` : ""}`)
    }
    if (cool === undefined) throw new Error("host-a never cooled fakeB/pool-b")
    const after = b.filter((e) => e.ev === "pick" && (e.at as number) > (cool.at as number) + 1_000)
    if (after.length === 0) throw new Error("host-b made no pick after host-a's cooldown")
    if (after.some((e) => e.model === "fakeB/pool-b")) throw new Error("host-b picked the model host-a had cooled")
    console.log(`  -> host-b never saw a 429, yet its ${after.length} picks from 1 s after host-a's cooldown all avoided fakeB/pool-b`)
    console.log(`$ OCPOOL_STATE_URL=postgres://… OCPOOL_HOST_ID=desk ocpool status --pool demo-pool.txt   # at 1.5 s, from a third machine\n${fleet.stdout.trimEnd()}${fleet.stderr === "" ? "" : `\n${fleet.stderr.trimEnd()}`}`)
  } finally {
    await cluster.stop()
  }
}

/**
 * Step 9: the context map (issue 23). A root session writes a file and goes idle; the plugin starts a
 * `context (auto bootstrap)` run on a pool slot, whose model (the fake, answering as the context agent)
 * writes the map; `ocpool context status` shows it.
 */
const contextStep = async (oc: OpencodeHandle, showLog: () => void): Promise<void> => {
  const session = (await oc.createSession({ title: "add a helper" })).id
  const mark = await oc.prompt(session, "add the retry helper [[fake:write:src/net/retry.ts]]")
  await oc.waitIdle(session, mark, 60_000)
  console.log(`session "add a helper" wrote src/net/retry.ts with the write tool and went idle`)
  type Info = { readonly id: string; readonly title: string }
  const run = await until(
    async () => ((await oc.request<ReadonlyArray<Info>>("GET", "/session")).body ?? []).find((x) => x.title.startsWith("context (auto ")),
    (x) => x !== undefined,
    30_000
  )
  if (run === undefined) throw new Error("no context map refresh session was started")
  const map = join(oc.projectDir, ".opencode/context")
  const files = await until(
    () => (existsSync(map) ? readdirSync(map).filter((f) => f.endsWith(".md")).sort() : []),
    (f) => f.length >= 2,
    60_000
  )
  const ended = await until(() => poolLog(oc, 0).some((l) => l.includes("updated the map")), (x) => x, 30_000)
  const first = (await oc.messages(run.id)).find((m) => m.info.role === "user")
  const text = (first?.parts ?? []).filter((p) => p.type === "text").map((p) => String(p["text"] ?? "")).join("")
  const agent = String((first?.info as { agent?: unknown } | undefined)?.agent ?? "?")
  console.log(`the plugin started session "${run.title}" (${run.id}) as agent ${agent}, a pool slot of the context base; its prompt:`)
  for (const l of text.split("\n").slice(0, 8)) console.log(`  | ${l}`)
  showLog()
  if (files.length === 0 || !ended) throw new Error("the context map was not written")
  console.log(`${map}: ${files.join(", ")} (written by the context agent; no other agent may write there, and none may write manager.md)`)
  const status = spawnSync(process.execPath, [join(root, "bin/ocpool.js"), "context", "status", "--project", oc.projectDir, "--state-dir", oc.stateDir], { encoding: "utf8", timeout: 60_000 })
  console.log(`$ ocpool context status\n${status.stdout.trimEnd()}${status.stderr === "" ? "" : `\n${status.stderr.trimEnd()}`}`)
  console.log("the next refresh starts when a root session idles with edits pending, at least 10 minutes later; /context-init, /context-update [focus] and /context-review run it by hand")
}

// Everything the demo starts runs in a HOME of its own: nothing is written under yours.
const demoHome = mkdtempSync(join(tmpdir(), "ocpool-demo-home-"))
process.env.HOME = demoHome
for (const name of ["XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "OCPOOL_STATE_DIR", "OCPOOL_STATE_URL"]) delete process.env[name]

const traceDir = mkdtempSync(join(tmpdir(), "ocpool-demo-trace-"))
const desktop = fakeDesktop(traceDir)
try {
  step("build and install")
  waiting("building dist/ (only when the sources changed since the last build)")
  // asynchronous: the progress line keeps ticking while it builds
  const built = (await promisify(execFile)(process.execPath, [join(root, "scripts/build.mjs"), "--if-changed"], { cwd: root, encoding: "utf8" })).stdout
  console.log(built.includes("up to date") ? "dist/ is up to date with the sources: not rebuilt" : "built dist/opencode-plugin.js and dist/cli.js from the sources")
  waiting("installing opencode-ai@1.18.33 from the npm registry into .e2e-cache/ (first run only, about 20 s)")
  const binary = await ensureOpencode()
  waiting("starting opencode and the fake provider")
  fake = await startFakeLlm()
  oc = await startOpencode({
    binary,
    configJson: pricedConfig(fake.url),
    pluginPaths: [[join(root, "dist/opencode-plugin.js"), { reapMs: 1000, hangMinAgeMs: 5000, hangSilenceMs: 5000, trace: join(traceDir, "pool-%p.jsonl"), notify: true, notifyVia: "local", fallbackModels: ["fakeB/backup"], permits: { heavy: 1 } }]],
    env: { PATH: `${desktop.bin}:${process.env.PATH ?? ""}`, OCPOOL_SOUND: undefined },
    setup: (dirs) => {
      mkdirSync(join(dirs.configHome, "opencode-pool"), { recursive: true })
      writeFileSync(join(dirs.configHome, "opencode-pool", "pool.txt"), POOL)
    }
  })
  console.log(`opencode ${oc.url} (pid ${oc.pid}), fake provider ${fake.url}; pool file ~/.config/opencode-pool/pool.txt:\n${POOL.trimEnd()}`)
  let seen = 0
  const showLog = () => {
    const lines = poolLog(oc!, seen)
    seen += lines.length
    for (const l of lines) console.log(`  log: ${l}`)
  }
  showLog()

  step("1. routing: spawns of `explore` fill slot 1, then slot 2")
  const held = await spawnExplore(oc, "take your time [[fake:slow:2500]]")
  console.log(`first child  -> ${await childModel(oc, held.child)}`)
  const second = await spawnExplore(oc, "say hi")
  console.log(`second child -> ${await childModel(oc, second.child)} (slot 1 is at its weight)`)
  const rootTurn = (await fake.requests()).find((r) => r.behavior === "task")
  if (rootTurn !== undefined) {
    console.log(`the root turn ran on the injected delegating build: its model was offered ${rootTurn.tools.join(", ")}`)
    console.log("  (no read, glob, grep or list: it hands reading to explore; option delegate:false keeps opencode's build; docs/DELEGATION.md)")
  }
  showLog()
  status(oc)
  await oc.waitIdle(held.session, held.mark, 60_000)
  await oc.waitIdle(second.session, second.mark, 60_000)

  // a real provider's 429 from the corpus, sent as is: its reset is stated only in a detail record
  // (RetryInfo retryDelay "58s"), outside the message, which the plugin reads through its fetch wrapper
  const gemini = corpusCase("gemini", "gemini-free-tier-rpm-retry-info")
  const geminiError = (gemini.body as { error: { message: string; details: ReadonlyArray<Record<string, unknown>> } }).error
  const retryDelay = String(geminiError.details.find((d) => String(d["@type"]).endsWith("RetryInfo"))?.["retryDelay"])
  const saysRetry = /retry in ([\d.]+)s/.exec(geminiError.message)?.[1]
  step(`2. cooling: slot 1's model answers Gemini's real ${gemini.status} (RetryInfo retryDelay ${retryDelay}); the child is stopped and the model cools for that long`)
  console.log(`payload: Gemini's free-tier requests-per-minute 429 RESOURCE_EXHAUSTED, body verbatim as published at\n  ${gemini.source}`)
  console.log(`  (test/fixtures/provider-errors/gemini.json, case ${gemini.id}: no retry-after header; the message says "retry in ${Number(saysRetry).toFixed(1)}s", its RetryInfo detail says ${retryDelay})`)
  await fake.enqueue({ behavior: "error", model: "pool-b", provider: "fakeB", status: gemini.status, body: gemini.body, ...(Object.keys(gemini.headers).length === 0 ? {} : { headers: gemini.headers }), times: 3 })
  const limited = await spawnExplore(oc, "hit the limit")
  await until(() => poolLog(oc!, 0).some((l) => l.includes("cooling fakeB/pool-b")), (x) => x, 30_000)
  showLog()
  const cooled = await until(() => cooldownOf(oc!, "fakeB/pool-b"), (c) => c !== undefined, 5_000)
  if (cooled === undefined) console.log("cooldown: none for fakeB/pool-b in state.db")
  else {
    const secs = Math.round((cooled.until - cooled.since) / 1000)
    console.log(`cooldown in state.db: ${cooled.model} ${cooled.reason} (scope ${cooled.scope}, strike ${cooled.strikes}) for ${secs} s until ${new Date(cooled.until).toISOString().slice(11, 19)}Z, source ${cooled.source}`)
    console.log(`  -> cooled for ${secs} s ${WINDOW_SOURCE[cooled.source] ?? `(source ${cooled.source})`}${cooled.source === "detail" ? ` (${retryDelay})` : ""}`)
  }
  const after = await spawnExplore(oc, "say hi again")
  console.log(`next child   -> ${await childModel(oc, after.child)} (fakeB/pool-b is cooling)`)
  showLog()
  status(oc)
  await oc.abort(limited.session)
  // the payload's unused repeats must not answer a later request to fakeB/pool-b
  if ((await fake.health()).queued > 0) await fake.reset()

  step("3. recovering: a child whose provider never answers is reaped (demo thresholds: 5 s old, 5 s silent)")
  const hung = await spawnExplore(oc, "wait forever [[fake:hang]]")
  console.log(`hanging child ${hung.child}`)
  showLog()
  status(oc)
  await until(() => poolLog(oc!, 0).some((l) => l.includes("outcome=aborted")), (x) => x, 30_000)
  showLog()
  status(oc)

  step("4. keeping opencode's database small: what a sweep would prune, while opencode runs (dry run)")
  const sweep = spawnSync(
    process.execPath,
    [join(root, "bin/ocpool.js"), "sweep", "events", "--db", oc.dbPath, "--days", "0", "--grace-hours", "0", "--dry-run"],
    { encoding: "utf8", env: { ...process.env, XDG_DATA_HOME: oc.dataHome }, timeout: 60_000 }
  )
  console.log(`$ ocpool sweep events --days 0 --grace-hours 0 --dry-run\n${sweep.stdout.trimEnd()}${sweep.stderr === "" ? "" : `\n${sweep.stderr.trimEnd()}`}`)
  console.log("(the defaults keep 7 days of events and every session active in the last hour; see docs/OPERATIONS.md)")

  step("5. notifications: a person hears about finished turns and questions, never about subagents")
  const popups = desktop.calls().filter((c) => c[0] === "notify-send")
  console.log(`the root sessions above raised ${popups.length} popup(s), none for their ${popups.length === 0 ? "" : "pooled "}subagents; the last one:`)
  if (popups.length > 0) console.log(`  popup: ${popup(popups[popups.length - 1]!.slice(1))}`)
  const asking = (await oc.createSession()).id
  const askMark = await oc.prompt(asking, "should we ship? [[fake:question:Ship the release to production now?]]")
  const asked = await oc.waitForType("question.asked", 30_000, { since: askMark, sessionId: asking })
  await until(() => desktop.calls().filter((c) => c[0] === "notify-send").length, (n) => n > popups.length, 10_000)
  const question = desktop.calls().filter((c) => c[0] === "notify-send").slice(popups.length)
  for (const c of question) console.log(`  popup: ${popup(c.slice(1))}`)
  console.log("answering it in the chat; the popup fades (never sooner than 5 s after it appeared; answering is up to you, closing answers nothing)")
  await oc.replyQuestion(String(asked.properties["id"]))
  await until(() => desktop.calls().some((c) => c[0] === "gdbus"), (x) => x, 15_000)
  const close = desktop.calls().find((c) => c[0] === "gdbus")
  console.log(close === undefined ? "  (no close seen)" : `  closed: popup ${close[close.length - 1]} (${close.find((a) => a.includes("CloseNotification"))})`)
  await oc.waitIdle(asking, askMark, 30_000)
  console.log("on a server over SSH the same popups hop to your desktop: ocpool tunnel setup --host <desktop> (docs/OPERATIONS.md, Remote hosts)")

  step("6. your own session survives its quota: the root's model answers 429 \"quota exceeded\"; the session continues on a fallback by itself")
  console.log(`option fallbackModels: ["fakeB/backup"]; the root sessions run on fakeA/pool-a`)
  await fake.enqueue({ behavior: "429", model: "pool-a", retryAfter: 90, message: "You exceeded your current quota, please check your plan and billing details" })
  const quotaRoot = (await oc.createSession()).id
  const popupsBefore = desktop.calls().filter((c) => c[0] === "notify-send").length
  const quotaMark = await oc.prompt(quotaRoot, "write the release notes")
  const continued = await until(
    () => oc!.messages(quotaRoot),
    (ms) => ms.some((m) => m.info.role === "assistant" && m.info["modelID"] === "backup" && m.info["time"]?.completed !== undefined),
    60_000
  )
  for (const m of continued) {
    const text = m.parts.filter((p) => p.type === "text").map((p) => String(p["text"] ?? "")).join("")
    const model = m.info.role === "user" ? `${m.info["model"]?.providerID}/${m.info["model"]?.modelID}` : `${m.info["providerID"]}/${m.info["modelID"]}`
    console.log(`  ${m.info.role.padEnd(9)} ${model.padEnd(13)} ${m.info.role === "assistant" && text === "" ? "(429 quota exceeded; aborted while opencode retried it)" : JSON.stringify(text.slice(0, 70))}`)
  }
  showLog()
  for (const c of desktop.calls().filter((c) => c[0] === "notify-send").slice(popupsBefore)) console.log(`  popup: ${popup(c.slice(1))}`)
  console.log("the next message still names fakeA/pool-a (the TUI sends the model you picked); while it cools it runs on the fallback:")
  const nextMark = await oc.prompt(quotaRoot, "and the changelog", { model: "fakeA/pool-a" })
  await oc.waitIdle(quotaRoot, nextMark, 60_000)
  const lastReply = (await oc.messages(quotaRoot)).filter((m) => m.info.role === "assistant").at(-1)
  console.log(`  assistant ${lastReply?.info["providerID"]}/${lastReply?.info["modelID"]}`)
  showLog()
  status(oc)
  void quotaMark

  step("7. cost: what the work cost, and what the pooled part would have cost on the root's model")
  const catalog = join(traceDir, "models.json")
  writeFileSync(catalog, JSON.stringify(catalogOf()))
  const cost = spawnSync(process.execPath, [join(root, "bin/ocpool.js"), "cost", "--db", oc.dbPath], {
    encoding: "utf8",
    env: { ...process.env, OPENCODE_MODELS_PATH: catalog, XDG_CACHE_HOME: oc.cacheHome },
    timeout: 60_000
  })
  console.log(`(demo prices per 1M tokens: fakeA/pool-a $15 in / $75 out, the pool's fakeB models free; the fake counts 19 tokens a call)`)
  console.log(`$ ocpool cost\n${cost.stdout.trimEnd()}${cost.stderr === "" ? "" : `\n${cost.stderr.trimEnd()}`}`)

  step("8. heavy work takes turns: two sessions run `make test` at once on a budget of 1; the second waits for the first")
  const work = join(traceDir, "heavy")
  mkdirSync(work)
  writeFileSync(join(work, "Makefile"), MAKEFILE)
  console.log(`option permits: {heavy: 1} (default: half the effective CPUs); ${work}/Makefile's test target sleeps 3 s and records when it starts and ends`)
  console.log("make, npm test, cargo build, pytest, docker build… wait in opencode's tool.execute.before for a machine-wide permit; the command itself is never rewritten")
  const t0 = Date.now()
  const turns = await Promise.all(
    ["tests A", "tests B"].map(async (title) => {
      const session = (await oc!.createSession({ title })).id
      return { title, session, mark: await oc!.prompt(session, `run the tests [[fake:bash:make -s -C ${work} test]]`) }
    })
  )
  console.log(`prompted ${turns.map((t) => `${t.title} (${t.session})`).join(" and ")} to run: make -s -C ${work} test`)
  if ((await until(() => permitsQueued(oc!), (n) => n === 1, 60_000)) !== 1) throw new Error("no bash command waited for a heavy-work permit")
  const shown = statusText(oc).split("\n")
  const from = shown.indexOf("permits:")
  const to = from < 0 ? -1 : shown.findIndex((l, i) => i > from && !l.startsWith("  "))
  console.log("while the second waits, ocpool status shows the queue:")
  console.log(`$ ocpool status   # its permits: section\n${from < 0 ? "(no permits: section)" : shown.slice(from, to < 0 ? undefined : to).join("\n")}`)
  for (const t of turns) await oc.waitIdle(t.session, t.mark, 90_000)
  const runs = makeRuns(work)
  const secs = (at: number | undefined) => (at === undefined ? "?" : `${((at - t0) / 1000).toFixed(2)} s`)
  for (const [i, r] of runs.entries()) console.log(`  make test run ${i + 1} (shell pid ${r.id}): started ${secs(r.start)}, ended ${secs(r.end)}`)
  const [one, two] = runs
  if (runs.length !== 2 || one?.end === undefined || two?.end === undefined) throw new Error(`expected two finished make test runs, found ${runs.length}`)
  if (two.start < one.end) throw new Error(`the runs overlapped: run 2 started ${two.start - one.end} ms before run 1 ended`)
  console.log(`  -> no overlap: run 2 started ${((two.start - one.end) / 1000).toFixed(2)} s after run 1 ended`)
  const waited: Array<string> = []
  for (const t of turns) {
    for (const l of (await bashOutput(oc, t.session)).split("\n").filter((x) => x.startsWith("[opencode-pool] waited"))) waited.push(`  ${t.title}'s tool output ends with: ${l}`)
  }
  if (waited.length === 0) throw new Error("no tool output says it waited for a heavy-work permit")
  for (const l of waited) console.log(l)
  console.log("other shells and agents take the same turns: ocpool run -- npm test; ocpool mcp for other harnesses (docs/OPERATIONS.md, Heavy work)")

  step("9. the context map: a session edits a file and goes idle; a `context` run on a pool slot writes .opencode/context/")
  await contextStep(oc, showLog)

  step("10. fleet mode: two hosts share one PostgreSQL; a 429 one host saw cools the model for the other")
  await fleetStep(traceDir)

  step("11. one decision engine: the plugin recorded what it applied and decided; replay reproduces every decision")
  const trace = join(traceDir, `pool-${oc.pid}.jsonl`)
  const replay = spawnSync(process.execPath, [join(root, "bin/ocpool.js"), "replay", trace, "--expect", `${trace}.decisions.jsonl`], { encoding: "utf8", timeout: 60_000 })
  const lines = readFileSync(trace, "utf8").trim().split("\n")
  const decided = readFileSync(`${trace}.decisions.jsonl`, "utf8").trim().split("\n")
  console.log(`$ ocpool replay pool-${oc.pid}.jsonl --expect pool-${oc.pid}.jsonl.decisions.jsonl   # exit ${replay.status}: ${lines.length} input lines, ${decided.length} decisions reproduced${replay.stderr === "" ? "" : `\n${replay.stderr.trimEnd()}`}`)
  console.log("the hang, as recorded: the sweep asked for the abort, its outcome arrived as its own line")
  for (const l of lines.filter((x) => x.includes('"abort":"pending"') || x.includes('"type":"aborted"')).slice(-2)) console.log(`  in:  ${l.length > 160 ? `${l.slice(0, 157)}...` : l}`)
  for (const l of decided.filter((x) => !x.includes('"type":"permit"')).slice(-3)) console.log(`  out: ${l}`)
  const permitLines = decided.filter((x) => x.includes('"type":"permit"'))
  if (permitLines.length > 0) {
    console.log(`the heavy-work turns, as decided: ${permitLines.length} permit decisions, the last ones:`)
    for (const l of permitLines.slice(-3)) console.log(`  out: ${l}`)
  }
  console.log("record your own: OCPOOL_TRACE=/tmp/pool-%p.jsonl opencode …, then ocpool replay /tmp/pool-<pid>.jsonl --explain")

  step("12. see it: the live view (`ocpool top`) of the pool now, and the timeline of this demo's own trace")
  const statusJson = spawnSync(process.execPath, [join(root, "bin/ocpool.js"), "status", "--json", "--state-dir", oc.stateDir], {
    encoding: "utf8",
    timeout: 30_000,
    env: { ...process.env, OCPOOL_STATE_DIR: "", XDG_CONFIG_HOME: oc.configHome }
  })
  if (statusJson.status !== 0) throw new Error(`ocpool status --json exited ${statusJson.status}: ${statusJson.stderr}`)
  const frame = liveFrame(JSON.parse(statusJson.stdout) as StatusView, Date.now(), { cols: 100, rows: 14, color: process.stdout.isTTY === true && process.env.NO_COLOR === undefined }, { scroll: 0, help: false })
  console.log("$ ocpool top   # full screen, redrawn as the state changes; q quits (this is its first frame, 100x14)")
  for (const l of frame.lines) console.log(`  ${l}`)
  const timeline = join(tmpdir(), `ocpool-demo-timeline-${oc.pid}.html`)
  const drawn = spawnSync(process.execPath, [join(root, "bin/ocpool.js"), "replay", trace, "--timeline", timeline], { encoding: "utf8", timeout: 60_000 })
  if (drawn.status !== 0 || !existsSync(timeline)) throw new Error(`ocpool replay --timeline exited ${drawn.status}: ${drawn.stderr}`)
  console.log(`$ ocpool replay pool-${oc.pid}.jsonl --timeline ${timeline}   # ${drawn.stderr.trim().split("\n").pop()}`)
  console.log(`open it in a browser: one lane per slot, each claim a bar coloured by its outcome, cooldowns shaded, aborts marked, the --explain text on hover:\n  ${timeline}`)

  step("13. the shared state is one database: state.db; cooldowns by hand with ocpool cool, for every process")
  const stateDir = oc.stateDir
  const cli = (args: ReadonlyArray<string>) => {
    const r = spawnSync(process.execPath, [join(root, "bin/ocpool.js"), ...args, "--state-dir", stateDir], { encoding: "utf8", timeout: 30_000, env: { ...process.env, OCPOOL_STATE_DIR: "", NO_COLOR: "1" } })
    if (r.status !== 0) throw new Error(`ocpool ${args.join(" ")} exited ${r.status}: ${r.stderr}`)
    console.log(`$ ocpool ${args.map((a) => (a.includes(" ") ? `"${a}"` : a)).join(" ")}`)
    for (const l of r.stdout.trimEnd().split("\n")) console.log(`  ${l}`)
  }
  console.log(`state directory: ${readdirSync(oc.stateDir).filter((n) => n.startsWith("state.db")).join(", ")} (every process's claims, cooldowns, quota, fallbacks, permits and context records; WAL, one transaction per decision)`)
  cli(["cool"])
  cli(["cool", "set", "fakeB/pool-c", "--for", "10m", "--reason", "benched by hand in the demo"])
  cli(["cool", "clear", "--all"])
  cli(["cool"])

  step("14. a budget no provider states: pool-b takes 2 requests a minute and says so only with a 429; that 429 teaches the pool, and `ocpool quota` shows what it learned")
  // step 2's 429 (Gemini's, 58 s) already taught pool-b a budget of a minute: shown, then forgotten for this step
  cli(["quota"])
  cli(["quota", "forget", "--all"])
  cli(["cool", "clear", "--all"])
  await fake.setBudgets([{ name: "pool-b", models: ["pool-b"], perMinute: 2, stated: "retry-after" }])
  let refused = false
  // a minute that turns while it runs gives pool-b two more: spawn until the budget refuses one
  for (let i = 1; i <= 8 && !refused; i++) {
    const t = await spawnExplore(oc, "say hi")
    const model = await childModel(oc, t.child)
    await oc.waitIdle(t.session, t.mark, 60_000)
    refused = (await fake.requests()).some((r) => r.behavior === "budget-429")
    console.log(`child ${i} -> ${model}${refused ? "  (429: pool-b's minute is spent; no header ever said how many it had)" : ""}`)
    showLog()
  }
  if (!refused) throw new Error("pool-b's hidden budget never answered 429")
  const nextChild = await spawnExplore(oc, "say hi")
  console.log(`next child -> ${await childModel(oc, nextChild.child)} (pool-b cools until its minute ends; next minute, it cools at its 2nd success, before any 429)`)
  await oc.waitIdle(nextChild.session, nextChild.mark, 60_000)
  showLog()
  cli(["quota"])

  step("15. metrics for Prometheus: every engine counted what it did in the shared state; `ocpool metrics` serves it (here `--once`, the lines of a few families)")
  const exposition = spawnSync(process.execPath, [join(root, "bin/ocpool.js"), "metrics", "--once", "--state-dir", stateDir], { encoding: "utf8", timeout: 30_000, env: { ...process.env, OCPOOL_STATE_DIR: "", XDG_CONFIG_HOME: oc.configHome } })
  if (exposition.status !== 0) throw new Error(`ocpool metrics --once exited ${exposition.status}: ${exposition.stderr}`)
  const families = /^ocpool_(routes_total|limits_total|cooldowns_total|aborts_total|reaps_total|fallback_switches_total|permit_wait_seconds_(count|sum)|slot_load|slot_cap|cooling_seconds|quota_remaining)\b/
  console.log("$ ocpool metrics --once   # or: ocpool metrics (serves http://127.0.0.1:9464/metrics for Prometheus)")
  for (const l of exposition.stdout.split("\n").filter((x) => families.test(x))) console.log(`  ${l}`)
  console.log("  (every metric, example PromQL and alert rules: docs/METRICS.md, examples/ocpool-alerts.yml)")
} catch (e) {
  console.error(`demo failed: ${e instanceof Error ? e.message : String(e)}`)
  process.exitCode = 1
} finally {
  waiting("stopping opencode and the fake provider")
  await oc?.stop()
  await fake?.stop()
  rmSync(traceDir, { recursive: true, force: true })
  rmSync(demoHome, { recursive: true, force: true })
  clearInterval(ticker)
  clearTicker()
  console.log(`   (${seconds(Date.now() - stepAt)})\n\ndemo ${process.exitCode === 1 ? "failed" : "done"} in ${seconds(Date.now() - started)}`)
}
