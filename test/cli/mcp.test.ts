/**
 * `ocpool mcp` over real stdio (issue 21, the MCP "Done when"): the official MCP client SDK spawns the
 * built CLI (`node bin/ocpool.js mcp`) with a temporary state directory and a heavy budget of 1, and
 * two such servers take turns: acquire, queue, wait, release, status, malformed calls, and the
 * permits given up when a server's stdin closes or it is sent SIGTERM.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { startTimeOf } from "../../src/layers/state/proc.js"
import { Permits, type PermitTicket } from "../../src/services/permits/Permits.js"
import { cli, ensureBuilt, root } from "./builtCli.js"

/** The stdio tests need the CLI's permits layer (src/cli/shared/permits.ts) and `mcp` in the command tree. */
const ready = existsSync(join(root, "src/cli/shared/permits.ts"))
if (ready) ensureBuilt("mcp --help")

const dirs: Array<string> = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})
const stateDir = () => {
  const d = mkdtempSync(join(tmpdir(), "ocpool-mcp-"))
  dirs.push(d)
  return d
}

interface Server {
  readonly client: Client
  readonly transport: StdioClientTransport
  readonly stderr: () => string
}

const connect = async (state: string): Promise<Server> => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cli, "mcp"],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: state, OCPOOL_STATE_DIR: join(state, "state"), OCPOOL_PERMITS: "1" },
    stderr: "pipe"
  })
  let err = ""
  transport.stderr?.on("data", (c: Buffer) => (err += c.toString()))
  const client = new Client({ name: "ocpool-test", version: "1" })
  await client.connect(transport)
  return { client, transport, stderr: () => err }
}

type Json = Record<string, unknown>

const call = async (client: Client, name: string, args: Json = {}): Promise<{ isError: boolean; body: Json; text: string }> => {
  const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 })
  const text = (r.content as Array<{ text: string }>)[0]?.text ?? ""
  return { isError: r.isError === true, body: (r.structuredContent ?? {}) as Json, text }
}

const heavy = async (client: Client): Promise<Json> => {
  const st = await call(client, "permit_status")
  return (st.body.budgets as Array<Json>).find((b) => b.name === "heavy")!
}

const until = async (check: () => Promise<boolean>, ms = 10_000): Promise<void> => {
  const end = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > end) throw new Error("timed out")
    await new Promise((r) => setTimeout(r, 50))
  }
}

describe.skipIf(!ready)("ocpool mcp over stdio (the built CLI, the official MCP client)", () => {
  it("US-51 lists the four tools with instructions; a second server's request queues behind the first's permit, waits, and is granted when it is released", { timeout: 90_000 }, async () => {
    const state = stateDir()
    const a = await connect(state)
    const b = await connect(state)
    try {
      expect((await a.client.listTools()).tools.map((t) => t.name).sort()).toEqual(["permit_acquire", "permit_release", "permit_status", "permit_wait"])
      expect(a.client.getInstructions()).toMatch(/ocpool run/)
      const held = await call(a.client, "permit_acquire", { reason: "cargo build" })
      expect(held.body).toMatchObject({ state: "granted", budget: "heavy", weight: 1 })
      const queued = await call(b.client, "permit_acquire", { reason: "npm test", wait_ms: 300 })
      expect(queued.body).toMatchObject({ state: "queued", position: 1 })
      expect(queued.body.holders).toEqual([expect.objectContaining({ reason: "cargo build", via: "mcp", pid: a.transport.pid })])
      const view = await heavy(a.client)
      expect(view).toMatchObject({ capacity: 1, used: 1 })
      expect(view.queue).toEqual([expect.objectContaining({ reason: "npm test", pid: b.transport.pid })])
      const waiting = call(b.client, "permit_wait", { request: queued.body.request, wait_ms: 30_000 })
      await new Promise((r) => setTimeout(r, 300))
      expect((await call(a.client, "permit_release", { token: held.body.token })).body).toEqual({ state: "released" })
      expect((await waiting).body).toMatchObject({ state: "granted", id: queued.body.request, token: queued.body.token })
      expect((await heavy(a.client)).holders).toEqual([expect.objectContaining({ reason: "npm test" })])
      expect((await call(b.client, "permit_release", { token: queued.body.token })).body).toEqual({ state: "released" })
      expect((await call(b.client, "permit_release", { token: queued.body.token })).body).toEqual({ state: "already" })
      expect((await call(a.client, "permit_release", { token: queued.body.token })).isError).toBe(true)
      expect(await heavy(a.client)).toMatchObject({ used: 0, holders: [], queue: [] })
    } finally {
      await a.client.close()
      await b.client.close()
    }
  })

  it("US-51 a request queues behind a permit another front end holds through the port (as the plugin does), and is granted once that one is released", { timeout: 90_000 }, async () => {
    const state = stateDir()
    const { permitsCliLayer } = await import("../../src/cli/shared/permits.js")
    const saved = process.env.OCPOOL_PERMITS
    process.env.OCPOOL_PERMITS = "1"
    const port = <A>(f: (p: typeof Permits.Service) => Effect.Effect<A>): Promise<A> =>
      Effect.runPromise(Effect.flatMap(Permits, f).pipe(Effect.provide(permitsCliLayer(Option.some(join(state, "state"))))))
    const s = await connect(state)
    try {
      const holder = { host: hostname(), pid: process.pid, startToken: startTimeOf(process.pid), via: "plugin" as const, session: "ses_test" }
      const { answer, ticket } = await port((p) => p.request({ budget: "heavy", weight: 1, reason: "npm test", holder }))
      expect(answer.state).toBe("granted")
      const queued = await call(s.client, "permit_acquire", { reason: "cargo test", wait_ms: 200 })
      expect(queued.body).toMatchObject({ state: "queued", position: 1 })
      expect(queued.body.holders).toEqual([expect.objectContaining({ via: "plugin", session: "ses_test", pid: process.pid, reason: "npm test", mine: false })])
      expect((await port((p) => p.release(ticket as PermitTicket))).state).toBe("released")
      expect((await call(s.client, "permit_wait", { request: queued.body.request, wait_ms: 20_000 })).body).toMatchObject({ state: "granted" })
    } finally {
      if (saved === undefined) delete process.env.OCPOOL_PERMITS
      else process.env.OCPOOL_PERMITS = saved
      await s.client.close()
    }
  })

  it("US-51 malformed calls get an MCP error, never a crash: wrong types, a weight over the capacity, an unknown budget, an unknown tool", { timeout: 60_000 }, async () => {
    const s = await connect(stateDir())
    try {
      expect((await call(s.client, "permit_acquire", { reason: 42 })).isError).toBe(true)
      expect((await call(s.client, "permit_acquire", { reason: "x", wait_ms: "soon" })).isError).toBe(true)
      const over = await call(s.client, "permit_acquire", { reason: "x", weight: 2 })
      expect(over.isError).toBe(true)
      expect(over.text).toContain("weight outside 1..capacity")
      expect((await call(s.client, "permit_acquire", { reason: "x", budget: "gpu" })).text).toContain("unknown budget")
      await expect(s.client.callTool({ name: "permit_everything", arguments: {} })).rejects.toThrow()
      expect((await call(s.client, "permit_acquire", { reason: "after all that" })).body.state).toBe("granted")
      expect(s.stderr()).not.toMatch(/at .*\.js:\d+/)
    } finally {
      await s.client.close()
    }
  })

  it("US-51 a server whose stdin closes gives up its permit, and so does one sent SIGTERM; the next request is then granted", { timeout: 90_000 }, async () => {
    const state = stateDir()
    const watcher = await connect(state)
    try {
      const closing = await connect(state)
      expect((await call(closing.client, "permit_acquire", { reason: "closing" })).body.state).toBe("granted")
      await closing.transport.close()
      await until(async () => ((await heavy(watcher.client)).used as number) === 0)
      const killed = await connect(state)
      expect((await call(killed.client, "permit_acquire", { reason: "killed" })).body.state).toBe("granted")
      process.kill(killed.transport.pid!, "SIGTERM")
      await until(async () => ((await heavy(watcher.client)).used as number) === 0)
      expect((await call(watcher.client, "permit_acquire", { reason: "next" })).body.state).toBe("granted")
    } finally {
      await watcher.client.close()
    }
  })

  it("US-51 raw lines over the real process: a string id comes back a string, a line that is not JSON is -32700, an unknown method -32601, and a batch one array", { timeout: 60_000 }, async () => {
    const state = stateDir()
    const child = spawn(process.execPath, [cli, "mcp"], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: state, OCPOOL_STATE_DIR: join(state, "state"), OCPOOL_PERMITS: "1" }, stdio: ["pipe", "pipe", "pipe"] })
    const answers: Array<unknown> = []
    let buffer = ""
    child.stdout.on("data", (c: Buffer) => {
      buffer += c.toString()
      for (let i = buffer.indexOf("\n"); i >= 0; i = buffer.indexOf("\n")) {
        const line = buffer.slice(0, i)
        buffer = buffer.slice(i + 1)
        const m = JSON.parse(line) as Record<string, unknown>
        if (!("method" in m)) answers.push(m)
      }
    })
    const send = (line: string) => child.stdin.write(`${line}\n`)
    send(JSON.stringify({ jsonrpc: "2.0", id: "007", method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } }))
    send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }))
    send("{nope")
    send(JSON.stringify({ jsonrpc: "2.0", id: "m", method: "no/such" }))
    send(JSON.stringify([{ jsonrpc: "2.0", id: "p1", method: "ping" }, { jsonrpc: "2.0", id: "p2", method: "ping" }]))
    try {
      await until(async () => answers.length >= 4)
      expect(answers).toContainEqual(expect.objectContaining({ id: "007", result: expect.objectContaining({ serverInfo: expect.objectContaining({ name: "ocpool" }) }) }))
      expect(answers).toContainEqual({ jsonrpc: "2.0", id: null, error: expect.objectContaining({ code: -32700 }) })
      expect(answers).toContainEqual({ jsonrpc: "2.0", id: "m", error: expect.objectContaining({ code: -32601 }) })
      const batch = answers.find((a) => Array.isArray(a)) as Array<{ id: unknown }>
      expect(batch.map((a) => a.id).sort()).toEqual(["p1", "p2"])
    } finally {
      child.stdin.end()
      child.kill()
    }
  })
})
