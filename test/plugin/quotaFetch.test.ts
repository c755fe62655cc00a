/** The quota-sensing fetch wrapper (issue 12, US-48): pass-through, what it reports, where it goes. */
import { afterEach, describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { cooldownIn, quotaIn } from "../support/stateDb.js"
import { planWrap, rateLimitHeaders, requestModel } from "../../src/core/quota/wrap.js"
import { FAILURE_BODY_MAX_BYTES, installQuotaFetch, quotaFetch, readBounded, type FailureReport, type ResponseReport } from "../../src/plugin/quotaFetch.js"
import { FAILURE_WAIT_MS } from "../../src/services/quota/FailureReads.js"
import { bootsPerTest, childCreated, event, settle, sleep, spawn } from "./boot.js"

const SLOTS = [
  { index: 1, provider: "zen", model: "zen/a", weight: 1 },
  { index: 2, provider: "go", model: "go/b", weight: 1 }
]
const LIMITED = { "x-ratelimit-remaining-requests": "1", "x-ratelimit-limit-requests": "100", "x-ratelimit-reset-requests": "90s", "content-type": "text/event-stream" }

describe("the fetch wrapper (US-48)", () => {
  it("US-48 the request reaches the inner fetch unchanged and the very response comes back; the report gets the rate-limit headers, the model and the session", async () => {
    const response = new Response("data: [DONE]\n\n", { status: 200, headers: LIMITED })
    const seen: Array<[unknown, unknown]> = []
    const reports: Array<ResponseReport> = []
    const f = quotaFetch("zen", (r) => reports.push(r), async (input, init) => {
      seen.push([input, init])
      return response
    })
    const init = { method: "POST", body: JSON.stringify({ model: "a", messages: [] }), headers: { "Content-Type": "application/json", "X-Session-Affinity": "ses_1" } }
    const out = await f("https://zen.example/v1/chat/completions", init)
    expect(out).toBe(response)
    expect(seen).toEqual([["https://zen.example/v1/chat/completions", init]])
    expect(seen[0]![1]).toBe(init)
    expect(reports).toEqual([
      { headers: { "x-ratelimit-remaining-requests": "1", "x-ratelimit-limit-requests": "100", "x-ratelimit-reset-requests": "90s" }, model: "zen/a", session: "ses_1", ok: true }
    ])
    expect(await out.text()).toBe("data: [DONE]\n\n")
  })

  it("US-48 no rate-limit header: a success is reported without headers (issue 35: it counts in a learned budget), an error answer not at all; a report that throws, or a failing inner fetch, changes nothing the caller sees", async () => {
    const reports: Array<ResponseReport> = []
    const plain = quotaFetch("zen", (r) => reports.push(r), async () => new Response("ok", { headers: { "content-type": "text/plain" } }))
    expect(await (await plain("https://x/")).text()).toBe("ok")
    expect(reports).toEqual([{ headers: {}, model: undefined, session: undefined, ok: true }])
    reports.length = 0
    const refused = quotaFetch("zen", (r) => reports.push(r), async () => new Response("busy", { status: 429, headers: { "content-type": "text/plain" } }))
    expect((await refused("https://x/")).status).toBe(429)
    expect(reports).toEqual([])
    const throwing = quotaFetch("zen", () => {
      throw new Error("boom")
    }, async () => new Response("ok", { headers: LIMITED }))
    expect((await throwing("https://x/")).status).toBe(200)
    const failing = quotaFetch("zen", (r) => reports.push(r), async () => {
      throw new TypeError("fetch failed")
    })
    await expect(failing("https://x/")).rejects.toThrow("fetch failed")
    expect(reports).toEqual([])
  })

  it("US-48 the session comes from a Headers object or header pairs too; a Google-style URL names the model", async () => {
    const reports: Array<ResponseReport> = []
    const f = quotaFetch("google", (r) => reports.push(r), async () => new Response("", { headers: LIMITED }))
    await f("https://g.example/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", { headers: new Headers({ "x-session-affinity": "ses_2" }) })
    await f(new URL("https://g.example/v1/x"), { headers: [["x-session-affinity", "ses_3"]] })
    expect(reports.map((r) => [r.model, r.session])).toEqual([
      ["google/gemini-2.5-flash", "ses_2"],
      [undefined, "ses_3"]
    ])
    expect(requestModel("openrouter", "https://o/x", '{"model":"qwen/qwen3-coder:free","stream":true}')).toBe("openrouter/qwen/qwen3-coder:free")
    expect(requestModel("zen", "https://z/x", `{"messages":[${'"x",'.repeat(5000)}"y"],"model":"late"}`)).toBeUndefined()
    expect(rateLimitHeaders([["Retry-After", "3"], ["X-Other", "1"]])).toEqual({ "retry-after": "3" })
  })
})

describe("the fetch wrapper reads error answers (issue 19)", () => {
  const AFFINITY = { headers: { "x-session-affinity": "ses_9" } }

  it("US-42 an error answer's status, headers and body are reported for its session, and opencode still reads the very same body", async () => {
    const body = JSON.stringify({ error: { code: 429, status: "RESOURCE_EXHAUSTED", details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "26s" }] } })
    const failures: Array<FailureReport> = []
    const f = quotaFetch("gemini", () => undefined, async () => new Response(body, { status: 429, headers: { "content-type": "application/json", "x-goog-x": "1" } }), (r) => failures.push(r))
    const out = await f("https://g.example/v1/chat/completions", AFFINITY)
    expect(await out.text()).toBe(body)
    expect(failures).toHaveLength(1)
    expect(failures[0]).toMatchObject({ session: "ses_9", status: 429, headers: { "content-type": "application/json", "x-goog-x": "1" } })
    expect(await failures[0]!.body).toBe(body)
  })

  it("US-42 a success, or an answer without a session, reports no failure; a failure report that throws changes nothing", async () => {
    const failures: Array<FailureReport> = []
    const ok = quotaFetch("zen", () => undefined, async () => new Response("fine", { status: 200 }), (r) => failures.push(r))
    await ok("https://x/", AFFINITY)
    const anonymous = quotaFetch("zen", () => undefined, async () => new Response("no", { status: 500 }), (r) => failures.push(r))
    expect((await anonymous("https://x/")).status).toBe(500)
    expect(failures).toEqual([])
    const throwing = quotaFetch("zen", () => undefined, async () => new Response("no", { status: 503 }), () => {
      throw new Error("boom")
    })
    const out = await throwing("https://x/", AFFINITY)
    expect([out.status, await out.text()]).toEqual([503, "no"])
  })

  it("US-42 a huge body is read only up to FAILURE_BODY_MAX_BYTES, and the caller still gets all of it; an unreadable body reads as empty", async () => {
    const huge = "x".repeat(FAILURE_BODY_MAX_BYTES * 4)
    const failures: Array<FailureReport> = []
    const f = quotaFetch("zen", () => undefined, async () => new Response(huge, { status: 502 }), (r) => failures.push(r))
    const out = await f("https://x/", AFFINITY)
    expect((await failures[0]!.body).length).toBe(FAILURE_BODY_MAX_BYTES)
    expect((await out.text()).length).toBe(huge.length)
    const broken = new Response(new ReadableStream({ pull: (c) => c.error(new Error("reset")) }), { status: 500 })
    expect(await readBounded(broken)).toBe("")
    expect(await readBounded(new Response(null, { status: 500 }))).toBe("")
  })

  it("US-42 a body that never ends is read as far as it came within the deadline", async () => {
    const endless = new Response(
      new ReadableStream({
        start: (c) => c.enqueue(new TextEncoder().encode('{"error":{"message":"slow'))
      }),
      { status: 503 }
    )
    // without the deadline this read would never end (the test's own timeout would fail it)
    expect(await readBounded(endless, FAILURE_BODY_MAX_BYTES, 50)).toBe('{"error":{"message":"slow')
  })
})

describe("where the wrapper goes (US-48)", () => {
  it("US-48 every slot provider and every configured provider block is wrapped; a block with its own fetch and the sign-in providers are not", () => {
    const own = () => undefined
    const config: Record<string, unknown> = {
      provider: { custom: { options: { baseURL: "http://x" } }, mine: { options: { fetch: own } }, anthropic: {}, go: { whitelist: ["b"] } }
    }
    expect(planWrap(config, SLOTS)).toEqual({ wrap: ["custom", "go", "zen"], ownFetch: ["anthropic", "mine"] })
    const mine = new WeakSet<object>()
    expect(installQuotaFetch(config, SLOTS, () => undefined, mine)).toEqual(["anthropic", "mine"])
    const providers = config.provider as Record<string, { options?: Record<string, unknown>; whitelist?: unknown }>
    for (const p of ["custom", "go", "zen"]) expect(typeof providers[p]!.options!.fetch).toBe("function")
    expect(providers.custom!.options!.baseURL).toBe("http://x")
    expect(providers.go!.whitelist).toEqual(["b"])
    expect(providers.mine!.options!.fetch).toBe(own)
    expect(providers.anthropic).toEqual({})
    // a second hook run replaces this plugin's wrapper, never stacks it, and never takes it for the provider's own
    const first = providers.zen!.options!.fetch
    expect(installQuotaFetch(config, SLOTS, () => undefined, mine)).toEqual(["anthropic", "mine"])
    expect(providers.zen!.options!.fetch).not.toBe(first)
    expect(typeof providers.zen!.options!.fetch).toBe("function")
  })

  it("US-48 nothing to wrap: the config is left without a provider key", () => {
    const config: Record<string, unknown> = {}
    expect(installQuotaFetch(config, [], () => undefined, new WeakSet())).toEqual([])
    expect(config).toEqual({})
  })
})

describe("quota sensing in the plugin (US-48)", () => {
  const { start } = bootsPerTest()
  const realFetch = globalThis.fetch
  afterEach(() => {
    globalThis.fetch = realFetch
  })

  it("US-48 a slot's response at the reserve cools it as quota_low before any 429; the next spawn goes to the other slot; the quota record is written", async () => {
    const b = await start({ models: { slots: [{ model: "zen/a" }, { model: "go/b" }] }, logLevel: "debug" })
    const config: { provider?: Record<string, { options?: { fetch?: (u: string, i?: RequestInit) => Promise<Response> } }> } = {}
    await b.hooks.config!(config as never)
    globalThis.fetch = (async () => new Response("data: [DONE]\n\n", { headers: LIMITED })) as typeof fetch
    const response = await config.provider!.zen!.options!.fetch!("https://zen.example/v1/chat/completions", { method: "POST", body: '{"model":"a"}' })
    expect(response.status).toBe(200)
    for (let i = 0; i < 50 && !b.logs.some((l) => l.message.startsWith("cooling zen/a quota_low")); i++) await new Promise((r) => setTimeout(r, 10))
    await settle(b)
    expect(b.logs.map((l) => l.message)).toContainEqual(expect.stringMatching(/^cooling zen\/a quota_low strike 0 for 90s until /))
    expect(await spawn(b, "ses_root", "call_1")).toBe("explore-2")
    // the record every process (and ocpool quota) reads
    expect(quotaIn(b.stateDir, "zen/a")).toMatchObject({ model: "zen/a", requests: { remaining: 1, limit: 100 } })
  })
})

describe("a retry status waits for its failure's body (issue 19)", () => {
  const { start } = bootsPerTest()
  const P = <A>(f: () => Promise<A>) => Effect.promise(f)
  const T0 = Date.UTC(2026, 0, 15, 9, 0, 0)
  const FREE = { type: "retry", attempt: 1, message: "Free usage exceeded, subscribe to Go", next: T0 + 3_000 }

  it.effect("US-42 on the plugin's clock: FAILURE_WAIT_MS for a body that never ends, then the retry applies without it; a body that arrives ends the wait at once", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      const clock = yield* TestClock.testClock()
      const b = yield* P(() => start({ models: { slots: [{ model: "zen/alpha" }, { model: "go/gamma" }] } }, ["ok"], {}, 0, clock))
      yield* P(() => spawn(b, "p", "c1"))
      yield* P(() => childCreated(b, "s1", "p", "explore-1"))
      b.hooks.sensing.fail({ session: "s1", status: 429, headers: {}, body: new Promise<string>(() => undefined) })
      let done = false
      const retried = event(b, "session.status", { sessionID: "s1", status: FREE }).then(() => void (done = true))
      // real time for the hook to reach its wait; the plugin's clock stands still meanwhile
      yield* P(() => sleep(30))
      yield* TestClock.adjust(FAILURE_WAIT_MS - 1)
      // more than the wait in real time: only the plugin's clock ends it
      yield* P(() => sleep(FAILURE_WAIT_MS + 100))
      expect(done).toBe(false)
      expect(cooldownIn(b.stateDir, "zen/alpha")).toBeUndefined()
      yield* TestClock.adjust(1)
      yield* P(() => retried)
      yield* P(() => settle(b))
      expect(cooldownIn(b.stateDir, "zen/alpha")?.reason).toBe("quota")

      // the second child's body arrives while its retry waits: the retry goes on at once, the clock unmoved
      yield* P(() => spawn(b, "p", "c2"))
      yield* P(() => childCreated(b, "s2", "p", "explore-2"))
      let arrive: (body: string) => void = () => undefined
      b.hooks.sensing.fail({ session: "s2", status: 429, headers: {}, body: new Promise<string>((resolve) => (arrive = resolve)) })
      let second = false
      const retried2 = event(b, "session.status", { sessionID: "s2", status: FREE }).then(() => void (second = true))
      yield* P(() => sleep(30))
      expect(second).toBe(false)
      arrive('{"error":{"message":"Free usage exceeded"}}')
      yield* P(() => retried2)
      expect(second).toBe(true)
    })
  )
})

describe("coaching in the plugin (US-49)", () => {
  const { start } = bootsPerTest()
  const transform = (b: Awaited<ReturnType<typeof start>>, session: string, system: Array<string>) =>
    b.hooks["experimental.chat.system.transform"]!({ sessionID: session, model: { providerID: "zen", id: "a" } as never }, { system })

  it("US-49 a root session's request gets one coaching line, the next request none until something changes; the title generator's none", async () => {
    const b = await start({ models: { slots: [{ model: "zen/a" }, { model: "go/b" }] } })
    const first = ["You are opencode."]
    await transform(b, "ses_root", first)
    expect(first).toHaveLength(2)
    expect(first[1]).toMatch(/^opencode-pool quota: GO\. zen\/a: no quota stated; pool: 0 of 2 slot\(s\) cooling\./)
    const second = ["You are opencode."]
    await transform(b, "ses_root", second)
    expect(second).toEqual(["You are opencode."])
    const title = ["You are a title generator. You output ONLY a thread title."]
    await transform(b, "ses_other", title)
    expect(title).toHaveLength(1)
  })

  it("US-49 option coach:false adds nothing", async () => {
    const b = await start({ models: { slots: [{ model: "zen/a" }] }, coach: false })
    const system = ["You are opencode."]
    await transform(b, "ses_root", system)
    expect(system).toEqual(["You are opencode."])
  })
})
