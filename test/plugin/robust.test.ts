import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { spawnSync } from "node:child_process"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs"
import { hostname } from "node:os"
import { join } from "node:path"
import { GatewayHttp } from "../../src/layers/gateway/GatewayHttp.js"
import { AppLogMemory, type MemoryLine } from "../../src/layers/opencode/AppLogMemory.js"
import { startTimeOf } from "../../src/layers/state/proc.js"
import { openSqlite } from "../../src/layers/state/sqliteDriver.js"
import { claimsOf, hasClaimsRow } from "../support/stateDb.js"
import { Gateway } from "../../src/services/gateway/Gateway.js"
import { recordSpans } from "../support/spans.js"
import { boot, childCreated, event, POOL2, spawn, tmp, type Booted } from "./boot.js"

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/opencode-1.18.33/${name}`, import.meta.url), "utf8")) as Record<string, unknown>

let booted: Array<Booted> = []
const start = async (...args: Parameters<typeof boot>) => {
  const b = await boot(...args)
  booted.push(b)
  return b
}
beforeEach(() => {
  process.env.XDG_CONFIG_HOME = tmp("ocpool-config-")
})
afterEach(async () => {
  for (const b of booted) await b.hooks.dispose?.()
  booted = []
})

const GARBAGE: ReadonlyArray<unknown> = [
  undefined,
  null,
  42,
  "session.created",
  [],
  {},
  { type: 7 },
  { type: "session.created" },
  { type: "session.created", properties: null },
  { type: "session.created", properties: { info: "x" } },
  { type: "session.created", properties: { info: { id: 1, parentID: {} } } },
  { type: "message.updated", properties: { info: { role: "assistant", sessionID: "s", error: "boom" } } },
  { type: "message.updated", properties: { info: { role: "assistant", sessionID: "s", error: { data: null } } } },
  { type: "message.part.updated", properties: { part: null } },
  { type: "session.status", properties: { sessionID: "s", status: { type: "retry", next: "soon", message: 5 } } },
  { type: "session.status", properties: { sessionID: "s", status: null } },
  { type: "session.error", properties: { sessionID: "s", error: null } },
  { type: "session.error", properties: { sessionID: "s", error: { name: "APIError", data: { statusCode: "429", responseHeaders: "x" } } } },
  { type: "permission.asked", properties: { sessionID: "s" } },
  { type: "question.replied", properties: {} },
  { type: "\u0000", properties: { ["__proto__"]: { polluted: true } } }
]

describe("the event hook never throws", () => {
  it("US-17 every recorded event shape of opencode 1.18.33 and a list of garbage pass through the hooks without an exception", async () => {
    const b = await start({ models: POOL2 })
    await spawn(b, "ses_parent", "call_1")
    const samples = fixture("event-samples.json")
    let fed = 0
    for (const [key, list] of Object.entries(samples)) {
      if (!key.startsWith("event:")) continue
      for (const e of list as Array<unknown>) {
        await expect(b.hooks.event!({ event: e as never })).resolves.toBeUndefined()
        fed++
      }
    }
    const hooks = fixture("hook-samples.json")
    for (const [key, sample] of Object.entries(hooks)) {
      const s = sample as { input?: unknown; output?: unknown }
      if (key.startsWith("event:")) await expect(b.hooks.event!((s.input ?? {}) as never)).resolves.toBeUndefined()
      if (key === "chat.params") await expect(b.hooks["chat.params"]!(s.input as never, s.output as never)).resolves.toBeUndefined()
      if (key === "tool.execute.after:task") await expect(b.hooks["tool.execute.after"]!(s.input as never, s.output as never)).resolves.toBeUndefined()
      if (key === "config") await expect(b.hooks.config!(structuredClone(s.input) as never)).resolves.toBeUndefined()
      fed++
    }
    for (const g of GARBAGE) await expect(b.hooks.event!({ event: g as never })).resolves.toBeUndefined()
    await expect(b.hooks.event!(undefined as never)).resolves.toBeUndefined()
    await expect(b.hooks["chat.params"]!(undefined as never, undefined as never)).resolves.toBeUndefined()
    await expect(b.hooks["tool.execute.before"]!({ tool: "task", sessionID: "s", callID: "c" }, undefined as never)).resolves.toBeUndefined()
    await expect(b.hooks["tool.execute.before"]!({ tool: "task", sessionID: "s", callID: "c" }, { args: { subagent_type: 7 } } as never)).resolves.toBeUndefined()
    await expect(b.hooks.config!(null as never)).resolves.toBeUndefined()
    expect(fed).toBeGreaterThan(40)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(b.logs.filter((l) => l.level === "error")).toEqual([])
    // still routing afterwards
    expect(await spawn(b, "ses_parent", "call_2")).toMatch(/^explore-[12]$/)
  })

  it("US-5 a child whose agent is not pooled is never bound to a pooled claim; one with no agent falls back to the oldest claim", async () => {
    const b = await start({ models: POOL2 })
    await spawn(b, "p", "c1")
    await childCreated(b, "g", "p", "general")
    await event(b, "session.created", { sessionID: "x", info: { id: "x", parentID: "p", title: "task" } })
    const claims = claimsOf(b.stateDir)
    expect(claims["p:c1"]?.targetSession).toBe("x")
  })
})

describe("waiting for state.db (SPEC §5.3, issue 32)", () => {
  it("US-40 a pool.lock an earlier version left is nothing to this version: the spawn goes at once", async () => {
    const b = await start({ models: POOL2 })
    writeFileSync(join(b.stateDir, "pool.lock"), JSON.stringify({ pid: process.pid, startTime: startTimeOf(process.pid), host: hostname(), at: Date.now() }))
    const t0 = Date.now()
    await spawn(b, "p", "c1")
    expect(Date.now() - t0).toBeLessThan(200)
    expect(b.logs.some((l) => l.message.includes("busy"))).toBe(false)
  })

  it("US-40 a database another connection holds: the spawn goes ahead after about 250 ms, with one warning, counted; its claim is written once the database is free", async () => {
    const b = await start({ models: POOL2 })
    // the engine made the database; another connection now holds its write lock (real time: the wait is on the wall clock)
    await spawn(b, "p", "c0")
    const other = openSqlite(join(b.stateDir, "state.db"))
    other.exec("BEGIN IMMEDIATE")
    try {
      const t0 = Date.now()
      expect(await spawn(b, "p", "c1")).toBe("explore-2")
      const waited = Date.now() - t0
      expect(waited).toBeGreaterThanOrEqual(240)
      expect(waited).toBeLessThan(2_000)
      await spawn(b, "p", "c2")
      expect(b.logs.filter((l) => l.level === "warn" && l.message.startsWith("state.db busy;"))).toHaveLength(1)
      const text = (await (b.hooks.tool!.pool_status as { execute: (a: unknown, c: unknown) => Promise<string> }).execute({}, {})) as string
      expect(text).toContain("lock fail-opens: 2")
      expect(Object.keys(claimsOf(b.stateDir))).toEqual(["p:c0"])
    } finally {
      other.exec("COMMIT")
      other.close()
    }
    for (let i = 0; i < 100 && Object.keys(claimsOf(b.stateDir)).length < 3; i++) await new Promise((r) => setTimeout(r, 20))
    expect(Object.keys(claimsOf(b.stateDir)).sort()).toEqual(["p:c0", "p:c1", "p:c2"])
  })
})

describe("the plugin's directories (SPEC §2.1, §5.5)", () => {
  /** Boot must return well within this; a synchronous loop would never return at all. */
  const BOOT_BOUND_MS = 5_000

  it("US-9 a state dir under /proc: the boot returns, one 'state dir … unusable' warning, spawns still route", async () => {
    const t0 = Date.now()
    const b = await start({ models: POOL2, stateDir: "/proc/nope/state" })
    expect(Date.now() - t0).toBeLessThan(BOOT_BOUND_MS)
    expect(b.logs.filter((l) => l.message.includes("state dir") && l.message.includes("unusable"))).toHaveLength(1)
    expect(await spawn(b, "p", "c1")).toBe("explore-1")
    expect(await spawn(b, "p", "c2")).toBe("explore-2")
  })

  it("US-45 a trace path under /proc, or a FIFO no one reads: one warning, spawns route without blocking", async () => {
    const dir = tmp()
    const fifo = join(dir, "trace.fifo")
    const made = spawnSync("mkfifo", [fifo])
    for (const trace of ["/proc/nope/trace.jsonl", ...(made.status === 0 ? [fifo] : [])]) {
      const t0 = Date.now()
      const b = await start({ models: POOL2, trace })
      expect(await spawn(b, "p", "c1")).toBe("explore-1")
      expect(await spawn(b, "p", "c2")).toBe("explore-2")
      expect(Date.now() - t0).toBeLessThan(BOOT_BOUND_MS)
      expect(b.logs.filter((l) => l.message.includes("recording stopped"))).toHaveLength(1)
    }
  })

  it("US-15 the plugin entry with XDG_CONFIG_HOME under /proc returns its hooks (the config dir is created silently or not at all)", async () => {
    const saved = { XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME, OCPOOL_STATE_DIR: process.env.OCPOOL_STATE_DIR }
    process.env.XDG_CONFIG_HOME = "/proc/nope"
    process.env.OCPOOL_STATE_DIR = join(tmp(), "state")
    try {
      const { default: plugin } = await import("../../src/plugin/index.js")
      const t0 = Date.now()
      const hooks = await plugin({ client: undefined, directory: tmp() } as never, { models: POOL2, reapMs: 3_600_000 } as never)
      expect(Date.now() - t0).toBeLessThan(BOOT_BOUND_MS)
      expect(typeof hooks["tool.execute.before"]).toBe("function")
      await (hooks as { dispose?: () => Promise<void> }).dispose?.()
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k]
        else process.env[k] = v
      }
    }
  })

  it("US-9 a state dir that is a symbolic link: one warning, the plugin publishes there, a dead peer's file in the target is left", async () => {
    const base = tmp()
    const target = join(base, "target")
    mkdirSync(target, { mode: 0o700 })
    const deadPeer = join(target, "claims.4206969.json")
    writeFileSync(deadPeer, JSON.stringify({ version: 1, pid: 4_206_969, startTime: null, host: hostname(), writtenAt: Date.now(), reaped: 0, claims: {} }))
    symlinkSync(target, join(base, "state"))
    const b = await start({ models: POOL2, stateDir: join(base, "state") })
    expect(b.logs.filter((l) => l.message.includes("not trusted") && l.message.includes("symbolic link"))).toHaveLength(1)
    expect(await spawn(b, "p", "c1")).toBe("explore-1")
    expect(hasClaimsRow(target)).toBe(true)
    expect(existsSync(deadPeer)).toBe(true)
  })
})

describe("the gateway layer at start (SPEC §13)", () => {
  it.scoped("US-28 building the gateway layer probes nothing; the first register probes once, a span Gateway.register each", () =>
    Effect.gen(function* () {
      let requests = 0
      const server = createServer((_req, res) => {
        requests++
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify({ object: "list", data: [{ id: "auto" }] }))
      })
      yield* Effect.acquireRelease(
        Effect.promise(() => new Promise<void>((r) => server.listen(0, "127.0.0.1", r))),
        () => Effect.promise(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))))
      )
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
      const logs: Array<MemoryLine> = []
      const gateway = Context.get(yield* Layer.build(GatewayHttp({ baseURL: url, apiKey: "k" }).pipe(Layer.provide(AppLogMemory(logs)))), Gateway)
      expect(requests).toBe(0)
      const spans = recordSpans()
      const configs = [{} as Record<string, unknown>, {} as Record<string, unknown>]
      for (const c of configs) yield* gateway.register(c).pipe(Effect.withTracer(spans.tracer))
      expect(requests).toBe(1)
      expect(spans.names()).toEqual(["Gateway.register", "Gateway.register"])
      expect(configs.every((c) => typeof c.provider === "object" && c.provider !== null && "omniroute" in c.provider)).toBe(true)
    })
  )
})
