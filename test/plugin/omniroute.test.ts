/**
 * OmniRoute (SPEC §13, US-28): the gateway's provider is registered into opencode's config when its
 * health probe (`GET <baseURL>/models`) passes in time; never a slot; one warning when enabled but
 * invalid or unhealthy; silence when absent. The gateway is a real HTTP server on 127.0.0.1.
 */
import { describe, expect, it } from "@effect/vitest"
import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { cooledModelsIn } from "../support/stateDb.js"
import { readOmniroute } from "../../src/core/omniroute.js"
import { boot, childCreated, event, POOL2, settle, spawn } from "./boot.js"

interface Gateway {
  readonly url: string
  readonly requests: Array<{ readonly path: string; readonly auth: string | undefined }>
  readonly close: () => Promise<void>
}

/** A gateway stub: `answer` decides each request's status and body (`"hang"`: never answers). */
const gateway = async (answer: (req: IncomingMessage) => { status: number; body: unknown } | "hang"): Promise<Gateway> => {
  const requests: Gateway["requests"] = []
  const server: Server = createServer((req, res) => {
    requests.push({ path: req.url ?? "", auth: req.headers.authorization })
    const a = answer(req)
    if (a === "hang") return
    res.writeHead(a.status, { "content-type": "application/json" })
    res.end(JSON.stringify(a.body))
  })
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections()
        server.close(() => r())
      })
  }
}

const MODELS = { object: "list", data: [{ id: "auto" }, { id: "fast" }] }

/** The config hook run twice over a fresh config; the warnings and the two configs. */
const hookTwice = async (options: Record<string, unknown>) => {
  const b = await boot({ models: POOL2, ...options })
  const first: Record<string, unknown> = { agent: {}, provider: { zen: { options: {} } } }
  await b.hooks.config!(first as never)
  const second: Record<string, unknown> = JSON.parse(JSON.stringify(first)) as Record<string, unknown>
  await b.hooks.config!(second as never)
  await b.hooks.dispose!()
  const warnings = b.logs.filter((l) => l.level === "warn" && l.message.includes("omniroute")).map((l) => l.message)
  return { first, second, warnings, logs: b.logs }
}

const slotVariants = (cfg: Record<string, unknown>) => Object.keys(cfg.agent as object).filter((k) => /-\d+$/.test(k)).sort()

describe("OmniRoute (SPEC §13)", () => {
  it("US-28 absent or enabled:false: no omniroute provider and no warning", async () => {
    for (const options of [{}, { omniroute: { enabled: false, baseURL: "http://127.0.0.1:1/v1", apiKey: "k" } }]) {
      const r = await hookTwice(options)
      expect((r.first.provider as Record<string, unknown>).omniroute).toBeUndefined()
      expect(r.warnings).toEqual([])
    }
  })

  it("US-28 a healthy gateway is registered as the provider omniroute (its models, its key) and adds no slot; probed once", async () => {
    const g = await gateway(() => ({ status: 200, body: MODELS }))
    try {
      const plain = await hookTwice({})
      const r = await hookTwice({ omniroute: { baseURL: g.url, apiKey: "sk-local" } })
      expect((r.first.provider as Record<string, unknown>).omniroute).toEqual({
        npm: "@ai-sdk/openai-compatible",
        name: "OmniRoute",
        // the quota-sensing wrapper (issue 12) goes on every configured provider, this one included
        options: { baseURL: g.url, apiKey: "sk-local", fetch: expect.any(Function) },
        models: { auto: { name: "auto" }, fast: { name: "fast" } }
      })
      // the same config but for the wrapper functions, which each hook run makes afresh
      expect(JSON.stringify(r.second)).toBe(JSON.stringify(r.first))
      expect(slotVariants(r.first)).toEqual(slotVariants(plain.first))
      expect(r.warnings).toEqual([])
      expect(g.requests).toEqual([{ path: "/v1/models", auth: "Bearer sk-local" }])
    } finally {
      await g.close()
    }
  })

  it.each([
    ["no apiKey", () => ({ baseURL: "http://127.0.0.1:9/v1" }), "omniroute not registered: omniroute has no apiKey"],
    ["an unreachable gateway", () => ({ baseURL: "http://127.0.0.1:9/v1", apiKey: "k" }), "omniroute not registered: http://127.0.0.1:9/v1 unreachable"]
  ] as const)("US-28 enabled with %s: nothing registered, slots unchanged, exactly one warning over two hook runs", async (_what, option, warning) => {
    const plain = await hookTwice({})
    const r = await hookTwice({ omniroute: option() })
    expect((r.first.provider as Record<string, unknown>).omniroute).toBeUndefined()
    expect(slotVariants(r.first)).toEqual(slotVariants(plain.first))
    expect(r.warnings).toHaveLength(1)
    expect(r.warnings[0]).toContain(warning)
  })

  it("US-28 a gateway that lists no models, answers 500, or does not answer within timeoutMs: one warning each, nothing registered", async () => {
    const cases = [
      [await gateway(() => ({ status: 200, body: { data: [] } })), "lists no models"],
      [await gateway(() => ({ status: 500, body: { error: "down" } })), "answered HTTP 500"],
      [await gateway(() => "hang"), "within 300 ms"]
    ] as const
    try {
      for (const [g, reason] of cases) {
        const started = Date.now()
        const r = await hookTwice({ omniroute: { baseURL: g.url, apiKey: "k", timeoutMs: 300 } })
        expect(Date.now() - started).toBeLessThan(10_000)
        expect((r.first.provider as Record<string, unknown>).omniroute).toBeUndefined()
        expect(r.warnings).toHaveLength(1)
        expect(r.warnings[0]).toContain(reason)
      }
    } finally {
      for (const [g] of cases) await g.close()
    }
  })

  it("US-28 a provider the user already named omniroute is left as it is (but for the quota-sensing fetch)", async () => {
    const g = await gateway(() => ({ status: 200, body: MODELS }))
    try {
      const b = await boot({ models: POOL2, omniroute: { baseURL: g.url, apiKey: "k" } })
      const mine = { npm: "my-own", options: { baseURL: "http://elsewhere" } }
      const cfg: Record<string, unknown> = { agent: {}, provider: { omniroute: mine } }
      await b.hooks.config!(cfg as never)
      await b.hooks.dispose!()
      // the registration leaves it as it is; quota sensing only adds its fetch wrapper (issue 12)
      expect((cfg.provider as Record<string, unknown>).omniroute).toEqual({ npm: "my-own", options: { baseURL: "http://elsewhere", fetch: expect.any(Function) } })
    } finally {
      await g.close()
    }
  })

  it("US-28 a slot omniroute/auto whose gateway is down: its session's outage cools only that slot, and the next spawn goes to the other slot", async () => {
    const b = await boot({ models: { slots: [{ model: "omniroute/auto", weight: 1 }, { model: "zen/alpha", weight: 1 }] } })
    try {
      expect(await spawn(b, "p", "c1")).toBe("explore-1")
      await childCreated(b, "s1", "p", "explore-1")
      await event(b, "message.updated", {
        info: { id: "msg_1", sessionID: "s1", role: "assistant", providerID: "omniroute", modelID: "auto", error: { name: "APIError", data: { statusCode: 503, message: "Service Unavailable" } } }
      })
      await settle(b)
      expect(cooledModelsIn(b.stateDir)).toContain("omniroute/auto")
      expect(cooledModelsIn(b.stateDir)).not.toContain("zen/alpha")
      expect(await spawn(b, "p", "c2")).toBe("explore-2")
    } finally {
      await b.hooks.dispose!()
    }
  })

  it("US-28 the option's reading: off, invalid (one reason each) or on with its defaults", () => {
    expect(readOmniroute(undefined)).toEqual({ _tag: "Off" })
    expect(readOmniroute({ enabled: false })).toEqual({ _tag: "Off" })
    expect(readOmniroute("yes")).toMatchObject({ _tag: "Invalid" })
    expect(readOmniroute({ enabled: "true", baseURL: "http://x", apiKey: "k" })).toEqual({ _tag: "Invalid", reason: "omniroute.enabled must be a boolean" })
    expect(readOmniroute({ baseURL: "ftp://x", apiKey: "k" })).toEqual({ _tag: "Invalid", reason: "omniroute.baseURL must be an http or https URL" })
    expect(readOmniroute({ baseURL: "http://x", apiKey: "k", timeoutMs: 5 })).toEqual({ _tag: "Invalid", reason: "omniroute.timeoutMs must be an integer 100-60000" })
    expect(readOmniroute({ baseURL: "http://x/v1/", apiKey: " k " })).toEqual({ _tag: "On", baseURL: "http://x/v1", apiKey: "k", timeoutMs: 2000 })
  })
})
