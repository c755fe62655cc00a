/**
 * Limit classification on real providers' error payloads (US-4, US-44) inside the real opencode
 * 1.18.33 (offline, fake provider). Providers `zen`, `gemini`, `openrouter` and `groq` all point at
 * the fake (`@ai-sdk/openai-compatible`, baseURL `<fake>/<id>/v1`); the fake answers the pooled child's
 * request with the provider's exact HTTP status, headers and body, so opencode goes through its own
 * error path (AI SDK APICallError → opencode `APIError` with statusCode, responseHeaders, responseBody,
 * isRetryable). A 429 is retried by opencode: 1.18.33 then publishes no APIError at all, only a
 * `retry` session status whose message it derived from the body (and, for FreeUsageLimitError, an
 * `action` with reason free_tier_limit); the plugin's breaker aborts the child on that first retry.
 * Each pool has two slots on the provider under test and one on fakeB, so a provider-wide cooldown and
 * a model-only one look different. Each test checks what the harness guarantees (the fake's answer,
 * opencode's error, the plugin's trace line) before what the classification decides (the cooldown
 * files, `ocpool status` and `--json`). The five servers start together (one start takes 4–9 s).
 * `npm run test:e2e`.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { cooldownsIn } from "../support/stateDb.js"
import { e2eWorld } from "./world.js"
import { fakeConfig, sleep, type FakeLlm, type FakeRequest, type HarnessEvent, type OpencodeHandle, type PluginEntry } from "./harness.js"

const ROOT = new URL("../../", import.meta.url).pathname
const CLI = join(ROOT, "bin/ocpool.js")
const TURN_MS = 60_000
/** The models each provider serves here; a pool takes both of its provider's, then OTHER. */
const PROVIDERS = {
  zen: ["big-pickle", "grok-code"],
  gemini: ["gemini-2.0-flash", "gemini-2.5-flash"],
  openrouter: ["qwen3-coder", "deepseek-chat"],
  groq: ["qwen-qwq-32b", "llama-3.3-70b-versatile"]
} as const
type Provider = keyof typeof PROVIDERS
/** The slot on another provider: never cooled by these payloads. */
const OTHER = "fakeB/pool-c"
/** A non-pooled subagent pinned to openrouter's first model (test c's second spawn). */
const SCOUT = "scout"

const world = e2eWorld(80)
let fake: FakeLlm
/** One server per test (its own state dir), all started at once; the tests then run one after another. */
type Server = Awaited<ReturnType<typeof start>>
const servers: Record<"a" | "b" | "c" | "d" | "e", Server> = {} as never
beforeAll(async () => {
  fake = world.fake
  const t0 = Date.now()
  const [a, b, c, d, e] = await Promise.all([start("zen"), start("gemini"), start("openrouter", { delegate: false }), start("groq"), start("gemini")])
  Object.assign(servers, { a, b, c, d, e })
  debug("servers started in ms", Date.now() - t0)
}, 120_000)
const traceDirs: Array<string> = []
afterAll(() => {
  for (const dir of traceDirs) rmSync(dir, { recursive: true, force: true })
})

const slotsOf = (p: Provider): ReadonlyArray<string> => [...PROVIDERS[p].map((m) => `${p}/${m}`), OTHER]

const config = () => {
  const base = fakeConfig({
    fakeUrl: fake.url,
    agents: { [SCOUT]: { mode: "subagent", description: "e2e scout on openrouter", model: `openrouter/${PROVIDERS.openrouter[0]}`, prompt: "You are the e2e scout." } }
  })
  const model = (name: string) => ({ name, tool_call: true, limit: { context: 128_000, output: 4_096 } })
  const added = Object.fromEntries(
    (Object.keys(PROVIDERS) as Array<Provider>).map((id) => [
      id,
      { npm: "@ai-sdk/openai-compatible", name: `Fake ${id}`, options: { baseURL: `${fake.url}/${id}/v1`, apiKey: "not-a-secret" }, models: Object.fromEntries(PROVIDERS[id].map((m) => [m, model(m)])) }
    ])
  )
  return { ...base, enabled_providers: [...(base["enabled_providers"] as Array<string>), ...Object.keys(PROVIDERS)], provider: { ...(base["provider"] as object), ...added } }
}

/** A server whose pool is `p`'s two models and OTHER, with its own state dir, tracing to a temp file. */
const start = async (p: Provider, options: Record<string, unknown> = {}) => {
  const dir = mkdtempSync(join(tmpdir(), "ocpool-e2e-limits-"))
  traceDirs.push(dir)
  const entry: PluginEntry = [join(ROOT, "dist/opencode-plugin.js"), { models: { slots: slotsOf(p).map((model) => ({ model, weight: 1 })) }, ...options }]
  const oc = await world.start({ configJson: config(), pluginPaths: [entry], env: { OCPOOL_TRACE: join(dir, "pool-%p.jsonl") } })
  return { oc, trace: () => traceLines(join(dir, `pool-${oc.pid}.jsonl`)) }
}

const traceLines = (file: string): Array<Record<string, any>> =>
  existsSync(file) ? readFileSync(file, "utf8").trim().split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as Record<string, any>) : []

interface CooldownFile {
  readonly model: string
  readonly reason: string
  readonly strikes: number
  readonly scope: string
  readonly since: number
  readonly until: number
  readonly source: string
}
/** Every cooldown in the state dir's database, by model. */
const cooldowns = (oc: OpencodeHandle): Readonly<Record<string, CooldownFile>> => cooldownsIn(oc.stateDir) as Readonly<Record<string, CooldownFile>>
/** The cooldowns once `n` files exist, or what is there after 1.5 s (the files are written before the root's turn ends). */
const cooldownsSettled = async (oc: OpencodeHandle, n: number) => {
  const deadline = Date.now() + 1_500
  let cds = cooldowns(oc)
  while (Object.keys(cds).length < n && Date.now() < deadline) {
    await sleep(100)
    cds = cooldowns(oc)
  }
  return cds
}
/** The cooldown files condensed for a failure message and the debug output. */
const brief = (cds: Record<string, CooldownFile>, t: number) =>
  Object.values(cds).map((c) => `${c.model} ${c.reason} scope=${c.scope} strikes=${c.strikes} source=${c.source} window=${c.until - t}ms`)

/** The built CLI over the server's state dir, with a pool file naming the same slots. */
const ocpool = (oc: OpencodeHandle, p: Provider, json: boolean) => {
  const pool = join(oc.home, "limits-e2e-pool.txt")
  writeFileSync(pool, slotsOf(p).join("\n") + "\n")
  const r = spawnSync(process.execPath, [CLI, "status", ...(json ? ["--json"] : []), "--pool", pool, "--state-dir", oc.stateDir], { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } })
  expect(r.status, r.stderr).toBe(0)
  return r.stdout
}
interface StatusSlot {
  readonly slot: number
  readonly model: string
  readonly cooling: { readonly until: number; readonly reason: string; readonly strikes: number } | null
}
const statusJson = (oc: OpencodeHandle, p: Provider): ReadonlyArray<StatusSlot> => (JSON.parse(ocpool(oc, p, true)) as { slots: ReadonlyArray<StatusSlot> }).slots
/** The text status line of `model`'s slot. */
const statusLine = (text: string, model: string) => text.split("\n").find((l) => new RegExp(`^\\s+\\d+\\. ${model.replace(/[.]/g, "\\.")}\\s`).test(l))

/** opencode's APIError for `session`: from its assistant message or its session.error. */
const apiErrorOf = (oc: OpencodeHandle, session: string): Record<string, any> | undefined => {
  for (const e of oc.events) {
    const p = e.properties
    if (e.type === "message.updated" && p["info"]?.sessionID === session && p["info"]?.error?.name === "APIError") return p["info"].error
    if (e.type === "session.error" && p["sessionID"] === session && p["error"]?.name === "APIError") return p["error"]
  }
  return undefined
}

const debug = (what: string, value: unknown) => {
  if (process.env.E2E_DEBUG === "1") console.log(`[limits.e2e] ${what}: ${typeof value === "string" ? value : JSON.stringify(value, null, 1)}`)
}

interface Payload {
  readonly status: number
  readonly body: unknown
  readonly headers?: Readonly<Record<string, string>>
}

/** The child's first `retry` status (opencode retries a 429 or 5xx itself). */
const retryOf = (oc: OpencodeHandle, session: string): Record<string, any> | undefined =>
  oc.events.find((e) => e.type === "session.status" && e.properties["sessionID"] === session && e.properties["status"]?.type === "retry")?.properties["status"]

/**
 * A root session spawns one `agent` (for `explore`: routed to slot 1, `<p>/<first model>`) whose
 * request gets `payload` (every retry too); waits until the root's turn is over, then checks the
 * harness part: the fake sent exactly that status and body, and opencode went through its error path.
 * Not retried (4xx but 429): an APIError with that statusCode, responseBody and headers, and the
 * plugin's `limit` trace line with the status. Retried (429): opencode 1.18.33 puts no APIError on the
 * bus (no error on the message, no retry part) but a `retry` status whose message it derived from the
 * body (`retryMessage`), and the plugin's `retry` trace line.
 */
const hit = async (
  oc: OpencodeHandle,
  trace: () => Array<Record<string, any>>,
  p: Provider,
  payload: Payload,
  options: { readonly agent?: string; readonly retryMessage?: string } = {}
) => {
  const model = PROVIDERS[p][0]
  const bodyText = typeof payload.body === "string" ? payload.body : JSON.stringify(payload.body)
  const retried = payload.status === 429 || payload.status >= 500
  // a retried payload's unused repeats of an earlier hit must not answer this one
  await fake.reset()
  const before = (await fake.health()).requests
  await fake.enqueue({ behavior: "error", provider: p, model, status: payload.status, body: payload.body, ...(payload.headers === undefined ? {} : { headers: payload.headers }), times: retried ? 5 : 1 })
  const session = (await oc.createSession()).id
  const mark = await oc.prompt(session, `spawn [[task:${options.agent ?? "explore"}:work on it]]`)
  const created = await oc.waitForEvent((e: HarnessEvent) => e.type === "session.created" && e.properties["info"]?.parentID === session, TURN_MS, mark)
  const child = String(created.properties["info"].id)
  await oc.waitIdle(session, mark, TURN_MS)

  // the fake answered the child's request with exactly the payload
  const sent = (await fake.requests(before)).filter((r: FakeRequest) => r.provider === p && r.model === model)
  expect(sent.length, JSON.stringify(sent)).toBeGreaterThan(0)
  const first = sent[0]!
  expect(first).toMatchObject({ behavior: "error", status: payload.status, errorBody: bodyText })
  const lines = trace().filter((l) => l["session"] === child && (l["type"] === "limit" || l["type"] === "retry"))
  debug(`${p} ${payload.status} trace`, lines)
  if (retried) {
    const retry = retryOf(oc, child)
    debug(`${p} ${payload.status} retry status`, retry)
    expect(retry, `no retry status for child ${child}`).toBeDefined()
    if (options.retryMessage !== undefined) expect(retry!["message"]).toBe(options.retryMessage)
    expect(lines.find((l) => l["type"] === "retry" && l["message"] === retry!["message"]), JSON.stringify(lines)).toBeDefined()
  } else {
    // opencode's own error path: an APIError carrying that status, body and headers
    const error = apiErrorOf(oc, child)
    debug(`${p} ${payload.status} APIError`, error)
    expect(error, `no APIError for child ${child}`).toBeDefined()
    expect(error!["data"]).toMatchObject({ statusCode: payload.status, responseBody: bodyText, isRetryable: false })
    expect(error!["data"]["responseHeaders"]).toMatchObject({ "content-type": "application/json", ...payload.headers })
    // the plugin saw it: a limit line with the status and the error (body included)
    const limit = lines.find((l) => l["type"] === "limit" && l["status"] === payload.status)
    expect(limit, JSON.stringify(lines)).toBeDefined()
    expect((JSON.parse(String(limit!["text"])) as { data?: { responseBody?: string } }).data?.responseBody).toBe(bodyText)
  }
  return { session, child, t: first.t, model: `${p}/${model}`, sent }
}

/** Cooldown files, `ocpool status` and `--json` agree: `cooled` cool for `reason`, every other slot does not. */
const expectCooling = (oc: OpencodeHandle, p: Provider, cds: Record<string, CooldownFile>, cooled: ReadonlyArray<string>, reasons: ReadonlyArray<string>, scope: "model" | "provider", t: number) => {
  const why = brief(cds, t).join("\n")
  expect(Object.keys(cds).sort(), why).toEqual([...cooled].sort())
  for (const m of cooled) {
    expect(reasons, why).toContain(cds[m]!.reason)
    expect(cds[m]!.scope, why).toBe(scope)
    expect(cds[m]!.until, why).toBeGreaterThan(Date.now())
  }
  const text = ocpool(oc, p, false)
  debug(`${p} ocpool status`, text)
  const json = statusJson(oc, p)
  for (const model of slotsOf(p)) {
    const line = statusLine(text, model)
    expect(line, text).toBeDefined()
    const slot = json.find((s) => s.model === model)
    expect(slot, JSON.stringify(json)).toBeDefined()
    if (cooled.includes(model)) {
      expect(slot!.cooling).toMatchObject({ reason: cds[model]!.reason, until: cds[model]!.until })
      expect(line).toMatch(cds[model]!.reason === "unavailable" ? /UNAVAILABLE until/ : cds[model]!.reason === "auth" ? /AUTH FAILED until/ : new RegExp(`COOLING ${cds[model]!.reason} strike`))
    } else {
      expect(slot!.cooling, JSON.stringify(slot)).toBeNull()
      expect(line).not.toMatch(/COOLING|UNAVAILABLE|AUTH FAILED/)
    }
  }
}

const ZEN_FREE_429 = { type: "error", error: { type: "FreeUsageLimitError", message: "Rate limit exceeded. Please try again later." } }
const GEMINI_429 = {
  error: {
    code: 429,
    message: "You exceeded your current quota, please check your plan and billing details.",
    status: "RESOURCE_EXHAUSTED",
    details: [
      {
        "@type": "type.googleapis.com/google.rpc.QuotaFailure",
        violations: [
          {
            quotaMetric: "generativelanguage.googleapis.com/generate_content_free_tier_requests",
            quotaId: "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
            quotaDimensions: { location: "global", model: "gemini-2.0-flash" },
            quotaValue: "15"
          }
        ]
      },
      { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "26s" }
    ]
  }
}
const OPENROUTER_402 = { error: { message: "Insufficient credits. Add more using https://openrouter.ai/settings/credits", code: 402 } }
const GROQ_DECOMMISSIONED = {
  error: {
    message:
      "The model `qwen-qwq-32b` has been decommissioned and is no longer supported. Please refer to https://console.groq.com/docs/deprecations for a recommendation on which model to use instead.",
    type: "invalid_request_error",
    code: "model_decommissioned"
  }
}
const GEMINI_BAD_KEY = {
  error: {
    code: 400,
    message: "API key not valid. Please pass a valid API key.",
    status: "INVALID_ARGUMENT",
    details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "API_KEY_INVALID", domain: "googleapis.com", metadata: { service: "generativelanguage.googleapis.com" } }]
  }
}

describe("limit classification on real providers' error payloads in the real opencode 1.18.33 (US-4, US-44)", () => {
  it("US-4 (a) opencode zen's free tier, 429 FreeUsageLimitError: every zen slot cools for quota (provider scope), the other provider's slot does not", async () => {
    const { oc, trace } = servers.a
    // opencode reads FreeUsageLimitError from the body itself (retry action reason free_tier_limit)
    const { t } = await hit(oc, trace, "zen", { status: 429, body: ZEN_FREE_429 }, { retryMessage: "Free usage exceeded, subscribe to Go" })
    const cds = await cooldownsSettled(oc, 2)
    debug("zen cooldowns", brief(cds, t))
    expectCooling(oc, "zen", cds, ["zen/big-pickle", "zen/grok-code"], ["quota"], "provider", t)
  })

  it("US-4 (b) a Gemini 429 RESOURCE_EXHAUSTED with RetryInfo 26s: only its model cools, for 26 s", async () => {
    const { oc, trace } = servers.b
    const { model, t } = await hit(oc, trace, "gemini", { status: 429, body: GEMINI_429 }, { retryMessage: GEMINI_429.error.message })
    const cds = await cooldownsSettled(oc, 1)
    debug("gemini 429 cooldowns", brief(cds, t))
    // a per-minute quota id is a rate limit (docs/CLASSIFICATION.md); the window is the body's RetryInfo,
    // which reached the plugin only through its fetch wrapper (the retry status carries a message alone)
    expectCooling(oc, "gemini", cds, [model], ["rate_limit"], "model", t)
    expect(cds[model]!.source, brief(cds, t).join("\n")).toBe("detail")
    expect(Math.abs(cds[model]!.until - (t + 26_000)), brief(cds, t).join("\n")).toBeLessThan(4_000)
  })

  it("US-4 (c) OpenRouter 402 insufficient credits: every openrouter slot cools for quota (provider scope), and one warning says the provider is out of credit, even after a second spawn hits it again", async () => {
    // delegate:false: the root may spawn the non-pooled scout (pinned to openrouter's first model)
    const { oc, trace } = servers.c
    const { t } = await hit(oc, trace, "openrouter", { status: 402, body: OPENROUTER_402 })
    debug("openrouter cooldowns", brief(await cooldownsSettled(oc, 2), t))
    // the second spawn: the scout is not routed, so it reaches openrouter although its slots cool
    await hit(oc, trace, "openrouter", { status: 402, body: OPENROUTER_402 }, { agent: SCOUT })
    const cds = await cooldownsSettled(oc, 2)
    const warnings = oc.readLog().split("\n").filter((l) => l.includes("provider openrouter is out of credit"))
    debug("openrouter warnings", warnings)
    expectCooling(oc, "openrouter", cds, ["openrouter/qwen3-coder", "openrouter/deepseek-chat"], ["quota"], "provider", t)
    expect(warnings, oc.readLog().split("\n").filter((l) => l.includes("openrouter")).slice(-20).join("\n")).toHaveLength(1)
  })

  it("US-44 (d) Groq 400 model_decommissioned: only that model is unavailable, for about 6 h", async () => {
    const { oc, trace } = servers.d
    const { model, t } = await hit(oc, trace, "groq", { status: 400, body: GROQ_DECOMMISSIONED })
    const cds = await cooldownsSettled(oc, 1)
    debug("groq cooldowns", brief(cds, t))
    expectCooling(oc, "groq", cds, [model], ["unavailable"], "model", t)
    expect(Math.abs(cds[model]!.until - (t + 6 * 3_600_000)), brief(cds, t).join("\n")).toBeLessThan(60_000)
  })

  it("US-44 (e) Gemini 400 API_KEY_INVALID: every gemini slot cools for auth", async () => {
    const { oc, trace } = servers.e
    const { t } = await hit(oc, trace, "gemini", { status: 400, body: GEMINI_BAD_KEY })
    const cds = await cooldownsSettled(oc, 2)
    debug("gemini 400 cooldowns", brief(cds, t))
    expectCooling(oc, "gemini", cds, ["gemini/gemini-2.0-flash", "gemini/gemini-2.5-flash"], ["auth"], "provider", t)
  })
})
