/**
 * `ocpool cost` (US-3) on a database written by the real opencode 1.18.33: the fake providers' models
 * declare costs in the opencode config, so opencode records a nonzero `cost` in every assistant
 * message; a root prompt on fakeA/pool-a spawns `explore` through the plugin, which routes it to
 * `explore-1` on fakeB/pool-b. The built `ocpool cost --json` then reads the live database (read-only,
 * opencode still running) with `OPENCODE_MODELS_PATH` naming a catalog that prices both models, and its
 * pool and baseline rows must equal what the database holds. `npm run test:e2e`.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { execFileSync, spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { costOf, type Price, type Tokens } from "../../src/core/prices.js"
import { ensureOpencode, fakeConfig, startFakeLlm, startOpencode, type FakeLlm, type OpencodeConfig, type OpencodeHandle } from "./harness.js"
import { exploreTree, untilQuiet } from "./flows.js"

const root = new URL("../../", import.meta.url).pathname
const PLUGIN = join(root, "dist/opencode-plugin.js")
const TURN_MS = 60_000
const POOL = { slots: [{ model: "fakeB/pool-b", weight: 1 }] }

/** USD per 1M tokens, in models.dev's form; high enough that the fake's 12 + 7 tokens cost cents. */
const COSTS = {
  "fakeA/pool-a": { input: 1000, output: 4000, cache_read: 100, cache_write: 1250 },
  "fakeB/pool-b": { input: 100, output: 300, cache_read: 10, cache_write: 125 }
} as const
const price = (m: keyof typeof COSTS): Price => ({ input: COSTS[m].input, output: COSTS[m].output, cacheRead: COSTS[m].cache_read, cacheWrite: COSTS[m].cache_write })

/** The harness's config with `cost` declared on the two models this test uses. */
const pricedConfig = (fakeUrl: string): OpencodeConfig => {
  const config = fakeConfig({ fakeUrl }) as { provider: Record<string, { models: Record<string, Record<string, unknown>> }> }
  for (const [model, cost] of Object.entries(COSTS)) {
    const [provider, id] = model.split("/") as [string, string]
    config.provider[provider]!.models[id] = { ...config.provider[provider]!.models[id], cost }
  }
  return config
}

const work = mkdtempSync(join(tmpdir(), "ocpool-e2e-cost-"))
const catalog = join(work, "models.json")
let fake: FakeLlm | undefined
let oc: OpencodeHandle | undefined
const made = { root: "", child: "" }

beforeAll(async () => {
  execFileSync(process.execPath, [join(root, "scripts/build.mjs")], { cwd: root })
  const binary = await ensureOpencode()
  fake = await startFakeLlm()
  // the catalog ocpool reads: models.dev's form, both fake models priced as in the opencode config
  writeFileSync(catalog, JSON.stringify({ fakeA: { models: { "pool-a": { cost: COSTS["fakeA/pool-a"] } } }, fakeB: { models: { "pool-b": { cost: COSTS["fakeB/pool-b"] } } } }))
  oc = await startOpencode({ binary, configJson: pricedConfig(fake.url), pluginPaths: [[PLUGIN, { models: POOL }]] })
  const tree = await exploreTree(oc, "look around and report", TURN_MS, "cost e2e")
  made.root = tree.session
  made.child = tree.child
  await untilQuiet(oc)
}, 240_000)

afterAll(async () => {
  await oc?.stop()
  await fake?.stop()
  rmSync(work, { recursive: true, force: true })
}, 60_000)

interface Message {
  readonly session: string
  readonly agent: string
  readonly model: string
  readonly cost: number
  readonly tokens: Tokens
}

/** Every assistant message opencode wrote, parsed here in JavaScript (not through ocpool's SQL). */
const assistantMessages = (): ReadonlyArray<Message> => {
  const db = new Database(oc!.dbPath, { readonly: true, fileMustExist: true })
  try {
    return (db.prepare("SELECT session_id, data FROM message ORDER BY time_created").all() as Array<{ session_id: string; data: string }>)
      .map((r) => ({ session: r.session_id, data: JSON.parse(r.data) as Record<string, any> }))
      .filter((r) => r.data["role"] === "assistant")
      .map(({ session, data }) => ({
        session,
        agent: String(data["agent"]),
        model: `${data["providerID"]}/${data["modelID"]}`,
        cost: Number(data["cost"]),
        tokens: {
          input: Number(data["tokens"]["input"]),
          output: Number(data["tokens"]["output"]),
          reasoning: Number(data["tokens"]["reasoning"]),
          cacheRead: Number(data["tokens"]["cache"]["read"]),
          cacheWrite: Number(data["tokens"]["cache"]["write"])
        }
      }))
  } finally {
    db.close()
  }
}

const sumTokens = (ms: ReadonlyArray<Message>): Tokens =>
  ms.reduce(
    (a, m) => ({ input: a.input + m.tokens.input, output: a.output + m.tokens.output, reasoning: a.reasoning + m.tokens.reasoning, cacheRead: a.cacheRead + m.tokens.cacheRead, cacheWrite: a.cacheWrite + m.tokens.cacheWrite }),
    { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 }
  )

const ocpoolCost = (...args: ReadonlyArray<string>) => {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("OPENCODE_") && !k.startsWith("OCPOOL_") && !k.startsWith("XDG_")) env[k] = v
  return spawnSync(process.execPath, [join(root, "bin/ocpool.js"), "cost", "--db", oc!.dbPath, ...args], {
    encoding: "utf8",
    env: { ...env, HOME: work, OPENCODE_MODELS_PATH: catalog },
    timeout: 30_000
  })
}

interface UsageJson {
  readonly calls: number
  readonly tokens: Tokens
  readonly cost: number | null
}

describe("ocpool cost on a database written by the real opencode 1.18.33", () => {
  it("US-3 opencode recorded nonzero costs from the config's prices; the plugin ran explore as explore-1 on fakeB/pool-b", () => {
    const ms = assistantMessages()
    const rootCalls = ms.filter((m) => m.session === made.root)
    const childCalls = ms.filter((m) => m.session === made.child)
    expect(rootCalls.length).toBeGreaterThanOrEqual(2)
    expect(childCalls.length).toBeGreaterThanOrEqual(1)
    for (const m of rootCalls) expect([m.agent, m.model]).toEqual(["build", "fakeA/pool-a"])
    for (const m of childCalls) expect([m.agent, m.model]).toEqual(["explore-1", "fakeB/pool-b"])
    for (const m of ms) {
      expect(m.tokens.input + m.tokens.output).toBeGreaterThan(0)
      // opencode's own arithmetic on the declared price: the same as costOf
      expect(m.cost).toBeCloseTo(costOf(price(m.model as keyof typeof COSTS), m.tokens), 12)
      expect(m.cost).toBeGreaterThan(0)
    }
  })

  it("US-3 the pool row and the baseline row of ocpool cost --json equal what the database holds", () => {
    const ms = assistantMessages()
    const pooled = ms.filter((m) => m.session === made.child)
    const r = ocpoolCost("--json", "--since", "1h")
    expect(r.status, r.stderr).toBe(0)
    expect(r.stderr).toBe("")
    console.info(`[e2e cost] ocpool cost --json --since 1h:\n${r.stdout}`)
    const j = JSON.parse(r.stdout) as { groups: ReadonlyArray<UsageJson & { key: string }>; total: UsageJson; pool: UsageJson; baseline: UsageJson & { models: ReadonlyArray<string> }; unpriced: ReadonlyArray<string> }
    const tokens = sumTokens(pooled)
    expect({ calls: j.pool.calls, tokens: j.pool.tokens }).toEqual({ calls: pooled.length, tokens })
    expect(j.pool.cost).toBeCloseTo(pooled.reduce((a, m) => a + m.cost, 0), 10)
    expect({ calls: j.baseline.calls, tokens: j.baseline.tokens, models: j.baseline.models }).toEqual({ calls: pooled.length, tokens, models: ["fakeA/pool-a"] })
    // the pooled work priced on the root's model (fakeA/pool-a), from the catalog OPENCODE_MODELS_PATH names
    expect(j.baseline.cost).toBeCloseTo(costOf(price("fakeA/pool-a"), tokens), 10)
    expect(j.baseline.cost!).toBeGreaterThan(j.pool.cost!)
    expect(j.groups.map((g) => [g.key, g.calls])).toEqual(
      [
        ["build", ms.filter((m) => m.agent === "build").length],
        ["explore-1", pooled.length]
      ].sort((a, b) => (b[1] as number) - (a[1] as number) || String(a[0]).localeCompare(String(b[0])))
    )
    expect(j.total.calls).toBe(ms.length)
    expect(j.total.cost).toBeCloseTo(ms.reduce((a, m) => a + m.cost, 0), 10)
    expect(j.unpriced).toEqual([])
  })

  it("US-3 the text report shows the baseline and pool rows; an unpriced --baseline-model reads unknown and exits 1", () => {
    const text = ocpoolCost()
    expect(text.status, text.stderr).toBe(0)
    console.info(`[e2e cost] ocpool cost:\n${text.stdout}`)
    expect(text.stdout).toMatch(/^baseline +\d+ +[\d,]+ +[\d,]+ +0 +0 +0 +\$\d+\.\d+$/m)
    expect(text.stdout).toMatch(/^pool +\d+ +[\d,]+ +[\d,]+ +0 +0 +0 +\$\d+\.\d+$/m)
    const r = ocpoolCost("--baseline-model", "fakeA/no-such-model")
    console.info(`[e2e cost] ocpool cost --baseline-model fakeA/no-such-model (exit ${r.status}):\n${r.stdout}${r.stderr}`)
    expect(r.status).toBe(1)
    expect(r.stdout).toMatch(/^baseline +\d+ .* unknown$/m)
    expect(r.stderr).toMatch(/^ocpool: cost unknown: no price for the baseline model fakeA\/no-such-model/m)
  })
})
