/**
 * `ocpool mcp`'s server in process: the official MCP client SDK over a pair of in-memory streams
 * talking to `permitsMcpServer` over a fake `Permits` (mcpPermitsFake.ts), so the tools' answers,
 * refusals, malformed calls and the release on close are tested without a build or a state directory.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { describe, expect, it } from "@effect/vitest"
import type { PassThrough } from "node:stream"
import { launchMcpServer, makeFakePermits, type FakePermits } from "./mcpPermitsFake.js"

/** A client transport over two streams (what StdioClientTransport does over a child's pipes). */
class StreamTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void
  onclose?: () => void
  onerror?: (error: Error) => void
  private readonly buffer = new ReadBuffer()
  constructor(
    private readonly input: PassThrough,
    private readonly output: PassThrough
  ) {}
  start(): Promise<void> {
    this.input.on("data", (chunk: Buffer) => {
      this.buffer.append(chunk)
      for (let m = this.buffer.readMessage(); m !== null; m = this.buffer.readMessage()) this.onmessage?.(m)
    })
    return Promise.resolve()
  }
  send(message: JSONRPCMessage): Promise<void> {
    this.output.write(serializeMessage(message))
    return Promise.resolve()
  }
  close(): Promise<void> {
    this.onclose?.()
    return Promise.resolve()
  }
}

interface Running {
  readonly client: Client
  /** Writes raw bytes to the server's stdin. */
  readonly raw: (text: string) => void
  /** Closes the server (its scope), as stdin closing or SIGTERM would. */
  readonly stop: () => Promise<void>
}

/** Starts a server over `fake` and connects a client to it. */
const start = async (fake: FakePermits, pid = 4242): Promise<Running> => {
  const { toServer, fromServer, stop } = launchMcpServer(fake, pid)
  const client = new Client({ name: "test", version: "1" })
  await client.connect(new StreamTransport(fromServer, toServer))
  return {
    client,
    raw: (text) => toServer.write(text),
    stop: async () => {
      await client.close()
      await stop()
    }
  }
}

type Json = Record<string, unknown>

/** Calls a tool; the structured answer and whether it is an error. */
const call = async (client: Client, name: string, args: Json = {}): Promise<{ isError: boolean; body: Json; text: string }> => {
  const r = await client.callTool({ name, arguments: args })
  const text = (r.content as Array<{ type: string; text: string }>)[0]?.text ?? ""
  return { isError: r.isError === true, body: (r.structuredContent ?? {}) as Json, text }
}

describe("ocpool mcp: the permit tools (in process, fake permits)", () => {
  it("US-51 lists the four permit tools and tells the agent when to acquire, to keep working while queued, to prefer ocpool run and to release", async () => {
    const s = await start(makeFakePermits())
    try {
      const { tools } = await s.client.listTools()
      expect(tools.map((t) => t.name).sort()).toEqual(["permit_acquire", "permit_release", "permit_status", "permit_wait"])
      const acquire = tools.find((t) => t.name === "permit_acquire")!
      expect(acquire.inputSchema.required).toEqual(["reason"])
      const text = s.client.getInstructions() ?? ""
      expect(text).toMatch(/right before heavy work/)
      expect(text).toMatch(/test suites/)
      expect(text).toMatch(/keep doing light work/)
      expect(text).toMatch(/ocpool run/)
      expect(text).toMatch(/release/i)
      expect(s.client.getServerVersion()?.name).toBe("ocpool")
    } finally {
      await s.stop()
    }
  })

  it("US-51 acquire is granted with a token on a free budget; status shows it held by this server; release frees it, a second release says already", async () => {
    const fake = makeFakePermits({ heavy: 2 })
    const s = await start(fake)
    try {
      const a = await call(s.client, "permit_acquire", { reason: "npm test" })
      expect(a.isError).toBe(false)
      expect(a.body).toMatchObject({ state: "granted", budget: "heavy", weight: 1 })
      expect(typeof a.body.token).toBe("string")
      const st = await call(s.client, "permit_status")
      const heavy = (st.body.budgets as Array<Json>).find((b) => b.name === "heavy")!
      expect(heavy).toMatchObject({ capacity: 2, used: 1, queue: [] })
      expect(heavy.holders).toEqual([expect.objectContaining({ id: a.body.id, reason: "npm test", via: "mcp", pid: 4242, mine: true })])
      expect(JSON.stringify(st.body)).not.toContain(String(a.body.token))
      expect((await call(s.client, "permit_release", { token: a.body.token })).body).toEqual({ state: "released" })
      expect((await call(s.client, "permit_release", { token: a.body.token })).body).toEqual({ state: "already" })
      expect(fake.entries()).toEqual([])
    } finally {
      await s.stop()
    }
  })

  it("US-51 a request behind another client's permit is queued (position, holders); permit_wait answers queued until the holder releases, then granted with its token", async () => {
    const fake = makeFakePermits({ heavy: 1 })
    const first = await start(fake, 1001)
    const second = await start(fake, 1002)
    try {
      const held = await call(first.client, "permit_acquire", { reason: "cargo build" })
      expect(held.body.state).toBe("granted")
      const q = await call(second.client, "permit_acquire", { reason: "npm test", wait_ms: 50 })
      expect(q.isError).toBe(false)
      expect(q.body).toMatchObject({ state: "queued", position: 1, paused: false })
      expect(q.body.holders).toEqual([expect.objectContaining({ reason: "cargo build", pid: 1001, mine: false })])
      const still = await call(second.client, "permit_wait", { request: q.body.request, wait_ms: 30 })
      expect(still.body).toMatchObject({ state: "queued", position: 1 })
      const waiting = call(second.client, "permit_wait", { request: q.body.request, wait_ms: 5000 })
      await new Promise((r) => setTimeout(r, 50))
      expect((await call(first.client, "permit_release", { token: held.body.token })).body.state).toBe("released")
      const got = await waiting
      expect(got.body).toMatchObject({ state: "granted", id: q.body.request, token: q.body.token })
      expect((await call(second.client, "permit_release", { token: q.body.token })).body.state).toBe("released")
      expect((await call(second.client, "permit_wait", { request: q.body.request, wait_ms: 0 })).body).toMatchObject({ state: "gone" })
    } finally {
      await first.stop()
      await second.stop()
    }
  })

  it("US-51 acquire with wait_ms answers granted once the holder releases within the wait", async () => {
    const fake = makeFakePermits({ heavy: 1 })
    const first = await start(fake, 1001)
    const second = await start(fake, 1002)
    try {
      const held = await call(first.client, "permit_acquire", { reason: "make" })
      const acquiring = call(second.client, "permit_acquire", { reason: "pytest", wait_ms: 5000 })
      await new Promise((r) => setTimeout(r, 50))
      await call(first.client, "permit_release", { token: held.body.token })
      expect((await acquiring).body).toMatchObject({ state: "granted", weight: 1 })
    } finally {
      await first.stop()
      await second.stop()
    }
  })

  it("US-51 refusals are tool errors with the reason: weight over capacity, unknown budget, a token of nobody's, a request of another server", async () => {
    const fake = makeFakePermits({ heavy: 2 })
    const s = await start(fake)
    try {
      const heavy = await call(s.client, "permit_acquire", { reason: "x", weight: 3 })
      expect(heavy.isError).toBe(true)
      expect(heavy.text).toContain("weight outside 1..capacity")
      const gpu = await call(s.client, "permit_acquire", { reason: "x", budget: "gpu" })
      expect(gpu.isError).toBe(true)
      expect(gpu.text).toContain("unknown budget")
      const nobody = await call(s.client, "permit_release", { token: "t-nobody" })
      expect(nobody.isError).toBe(true)
      expect(nobody.text).toContain("unknown permit")
      const wait = await call(s.client, "permit_wait", { request: "p-999", wait_ms: 0 })
      expect(wait.isError).toBe(true)
      expect(wait.text).toContain("unknown request")
      expect(fake.entries()).toEqual([])
    } finally {
      await s.stop()
    }
  })

  it("US-51 malformed calls get an MCP error and the server goes on: wrong types, out-of-range numbers, a missing argument, an unknown tool", async () => {
    const fake = makeFakePermits({ heavy: 2 })
    const s = await start(fake)
    try {
      for (const args of [{ reason: 5 }, { reason: "x", weight: 0 }, { reason: "x", weight: 1.5 }, { reason: "x", wait_ms: -1 }, { reason: "x", wait_ms: 600_001 }, { reason: "x", budget: 7 }, {}]) {
        const r = await call(s.client, "permit_acquire", args)
        expect(r.isError, JSON.stringify(args)).toBe(true)
      }
      expect((await call(s.client, "permit_wait", { request: "p-1" })).isError).toBe(true)
      expect((await call(s.client, "permit_release", { token: 12 })).isError).toBe(true)
      await expect(s.client.callTool({ name: "permit_steal", arguments: {} })).rejects.toThrow(/not found/)
      // raw lines (not JSON, bad ids, batches) are answered by the JSON-RPC front: mcpProtocol.test.ts
      expect(fake.calls.request ?? 0).toBe(0)
      expect((await call(s.client, "permit_acquire", { reason: "still here" })).body.state).toBe("granted")
    } finally {
      await s.stop()
    }
  })

  it("US-51 when the server closes, every permit it holds or queued is given up", async () => {
    const fake = makeFakePermits({ heavy: 1 })
    const other = await start(fake, 1001)
    const s = await start(fake, 1002)
    const held = await call(other.client, "permit_acquire", { reason: "other" })
    await call(s.client, "permit_acquire", { reason: "queued", wait_ms: 0 })
    await other.stop()
    // the closed server's permit went, so the queued one was granted; now close that one too
    expect(fake.entries().map((e) => [e.reason, e.grantedAt !== undefined])).toEqual([["queued", true]])
    expect(held.body.state).toBe("granted")
    await s.stop()
    expect(fake.entries()).toEqual([])
  })
})
