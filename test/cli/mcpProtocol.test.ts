/**
 * `ocpool mcp` speaks JSON-RPC 2.0 to any client (issue 33 item 1): raw lines in, raw lines out, over
 * the in-process server (fake permits). Every request is answered with its own id (a string id stays a
 * string), parse errors and invalid requests get their codes with id null, unknown methods -32601, bad
 * params -32602, a batch an array of answers, notifications nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import { launchMcpServer, makeFakePermits } from "./mcpPermitsFake.js"

type Json = Record<string, unknown>

interface Raw {
  /** Writes one raw line (a newline is added). */
  readonly send: (line: string) => void
  /** The next answer line (not a notification of the server's), parsed; `undefined` when none comes within `ms`. */
  readonly next: (ms?: number) => Promise<unknown>
  readonly stop: () => Promise<void>
}

const startRaw = async (): Promise<Raw> => {
  const { toServer, fromServer, stop } = launchMcpServer(makeFakePermits(), 4343)
  const lines: Array<string> = []
  const waiting: Array<(line: string) => void> = []
  let buffer = ""
  fromServer.on("data", (c: Buffer) => {
    buffer += c.toString()
    for (let i = buffer.indexOf("\n"); i >= 0; i = buffer.indexOf("\n")) {
      const line = buffer.slice(0, i)
      buffer = buffer.slice(i + 1)
      if (line.trim() === "") continue
      // the server's own notifications (tools/list_changed after the handshake) are not answers
      const parsed = JSON.parse(line) as unknown
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) && "method" in parsed && !("id" in parsed)) continue
      const w = waiting.shift()
      if (w) w(line)
      else lines.push(line)
    }
  })
  const next = (ms = 1_000) =>
    new Promise<unknown>((resolve) => {
      const ready = lines.shift()
      if (ready !== undefined) return resolve(JSON.parse(ready))
      const timer = setTimeout(() => {
        waiting.splice(waiting.indexOf(take), 1)
        resolve(undefined)
      }, ms)
      const take = (line: string) => {
        clearTimeout(timer)
        resolve(JSON.parse(line))
      }
      waiting.push(take)
    })
  return {
    send: (line) => void toServer.write(`${line}\n`),
    next,
    stop: async () => {
      await stop()
    }
  }
}

const init = (id: unknown) => JSON.stringify({ jsonrpc: "2.0", id, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } })

/** A server past its handshake. */
const ready = async (): Promise<Raw> => {
  const s = await startRaw()
  s.send(init(0))
  expect(await s.next()).toMatchObject({ jsonrpc: "2.0", id: 0, result: { serverInfo: { name: "ocpool" } } })
  s.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }))
  return s
}

const errorOf = (answer: unknown) => (answer as { error?: { code?: number; message?: string } }).error

describe("ocpool mcp speaks JSON-RPC 2.0 to raw clients (issue 33)", () => {
  it("US-51 a string id comes back as the same string ('007' stays '007'), for initialize, tools/list and tools/call", async () => {
    const s = await startRaw()
    try {
      s.send(init("007"))
      expect(await s.next()).toMatchObject({ jsonrpc: "2.0", id: "007", result: { serverInfo: { name: "ocpool" } } })
      s.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }))
      s.send(JSON.stringify({ jsonrpc: "2.0", id: "list-1", method: "tools/list" }))
      const list = (await s.next()) as Json
      expect(list.id).toBe("list-1")
      expect(((list.result as { tools: Array<{ name: string }> }).tools).map((t) => t.name)).toContain("permit_status")
      s.send(JSON.stringify({ jsonrpc: "2.0", id: "abc", method: "tools/call", params: { name: "permit_status", arguments: {} } }))
      expect(await s.next()).toMatchObject({ id: "abc", result: { isError: false } })
      s.send(JSON.stringify({ jsonrpc: "2.0", id: 12345678901234567890, method: "ping" }))
      expect(await s.next()).toMatchObject({ id: 12345678901234567890, result: {} })
    } finally {
      await s.stop()
    }
  })

  it("US-51 a line that is not JSON is answered -32700 with id null, and the server goes on", async () => {
    const s = await ready()
    try {
      s.send("{not json")
      expect(await s.next()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } })
      s.send(JSON.stringify({ jsonrpc: "2.0", id: 5, method: "ping" }))
      expect(await s.next()).toMatchObject({ id: 5, result: {} })
    } finally {
      await s.stop()
    }
  })

  it("US-51 invalid requests are answered -32600: not an object, no method, a wrong jsonrpc, an id that is an object; with the id when it is usable", async () => {
    const s = await ready()
    try {
      for (const line of ['"hello"', "42", JSON.stringify({ jsonrpc: "2.0", id: { a: 1 }, method: "ping" }), JSON.stringify({ jsonrpc: "2.0", id: true, method: "ping" })]) {
        s.send(line)
        expect(await s.next()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } })
      }
      s.send(JSON.stringify({ jsonrpc: "2.0", id: 7 }))
      expect(await s.next()).toMatchObject({ id: 7, error: { code: -32600 } })
      s.send(JSON.stringify({ jsonrpc: "1.0", id: "x", method: "ping" }))
      expect(await s.next()).toMatchObject({ id: "x", error: { code: -32600 } })
      s.send(JSON.stringify({ jsonrpc: "2.0", id: 8, method: 9 }))
      expect(await s.next()).toMatchObject({ id: 8, error: { code: -32600 } })
    } finally {
      await s.stop()
    }
  })

  it("US-51 an unknown method is -32601 with its id; an unknown notification gets no answer", async () => {
    const s = await ready()
    try {
      s.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/whatever" }))
      s.send(JSON.stringify({ jsonrpc: "2.0", id: "u1", method: "no/such/method" }))
      expect(await s.next()).toMatchObject({ id: "u1", error: { code: -32601 } })
      const extra = await s.next(300); expect(extra, JSON.stringify(extra)).toBeUndefined()
    } finally {
      await s.stop()
    }
  })

  it("US-51 bad params are -32602: tools/call without a name, params that are not an object, an unknown tool, arguments nested 100,000 deep (no stack-overflow text)", async () => {
    const s = await ready()
    try {
      s.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { arguments: {} } }))
      expect(errorOf(await s.next())?.code).toBe(-32602)
      s.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: 5 }))
      expect(errorOf(await s.next())?.code).toBe(-32602)
      s.send(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "no_such_tool", arguments: {} } }))
      const unknownTool = (await s.next()) as Json
      expect(unknownTool.id).toBe(3)
      expect(errorOf(unknownTool)?.code).toBe(-32602)
      const deep = `${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}`
      s.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"permit_acquire","arguments":{"reason":"x","extra":${deep}}}}`)
      const answer = (await s.next(5_000)) as Json
      expect(answer.id).toBe(4)
      expect(errorOf(answer)?.code).toBe(-32602)
      expect(JSON.stringify(answer)).not.toMatch(/call stack|RangeError/i)
      s.send(JSON.stringify({ jsonrpc: "2.0", id: 6, method: "ping" }))
      expect(await s.next()).toMatchObject({ id: 6, result: {} })
    } finally {
      await s.stop()
    }
  })

  it("US-51 a batch is answered with an array of its requests' answers, each with its own id; notifications in it get none; an empty batch is -32600", async () => {
    const s = await ready()
    try {
      s.send(
        JSON.stringify([
          { jsonrpc: "2.0", id: "a", method: "ping" },
          { jsonrpc: "2.0", method: "notifications/initialized" },
          { jsonrpc: "2.0", id: 2, method: "no/such" },
          "junk",
          { jsonrpc: "2.0", id: "c", method: "tools/call", params: { name: "permit_status", arguments: {} } }
        ])
      )
      const batch = (await s.next()) as Array<Json>
      expect(Array.isArray(batch)).toBe(true)
      expect(batch.map((a) => a.id).sort((x, y) => String(x).localeCompare(String(y)))).toEqual([2, "a", "c", null].sort((x, y) => String(x).localeCompare(String(y))))
      expect(batch.find((a) => a.id === "a")).toMatchObject({ result: {} })
      expect(errorOf(batch.find((a) => a.id === 2))?.code).toBe(-32601)
      expect(errorOf(batch.find((a) => a.id === null))?.code).toBe(-32600)
      expect(batch.find((a) => a.id === "c")).toMatchObject({ result: { isError: false } })
      s.send("[]")
      expect(await s.next()).toMatchObject({ id: null, error: { code: -32600 } })
      s.send(JSON.stringify([{ jsonrpc: "2.0", method: "notifications/initialized" }]))
      const extra = await s.next(300); expect(extra, JSON.stringify(extra)).toBeUndefined()
    } finally {
      await s.stop()
    }
  })
})
