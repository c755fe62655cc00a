/**
 * Hooks take their inputs as untrusted data: getters that throw, Proxies, revoked Proxies, cycles,
 * null prototypes, huge strings and wrong types never make a hook throw. The one throw that stays is
 * the refusal of a hand-named slot variant (SPEC §6.3), and no hostile neighbour can suppress it.
 */
import { describe, expect, it } from "@effect/vitest"
import { existsSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { claimsOf, cooldownIn } from "../support/stateDb.js"
import opencodePool from "../../src/plugin/index.js"
import { VariantRefused } from "../../src/services/pool/PoolEngine.js"
import { bootsPerTest, childCreated, event, POOL2, sleep, spawn, tmp, type Booted } from "./boot.js"
import { cyclic, hostileArray, nullProto, revoked, throwingGetters, trapEverything, unprintable, type Trap } from "./hostile.js"

const { start } = bootsPerTest()

const ownClaims = (b: Booted): Record<string, unknown> => claimsOf(b.stateDir)
const cooldown = (b: Booted, model: string) => cooldownIn(b.stateDir, model)

type Before = (input: unknown, output: unknown) => Promise<void>
const before = (b: Booted) => b.hooks["tool.execute.before"] as unknown as Before
const after = (b: Booted) => b.hooks["tool.execute.after"] as unknown as Before
const params = (b: Booted) => b.hooks["chat.params"] as unknown as Before
const onEvent = (b: Booted) => b.hooks.event as unknown as (input: unknown) => Promise<void>
const onConfig = (b: Booted) => b.hooks.config as unknown as (input: unknown) => Promise<void>
const transform = (b: Booted) => b.hooks["experimental.chat.system.transform"] as unknown as Before
const message = (b: Booted) => b.hooks["chat.message"] as unknown as Before

/** Hostile values for any position: the hooks must neither throw nor hang on them. */
const hostiles = (): ReadonlyArray<unknown> => [
  undefined,
  null,
  42,
  "task",
  Symbol("s"),
  () => "task",
  [],
  revoked(),
  trapEverything(),
  cyclic({ tool: "task" }),
  nullProto({ tool: "task", sessionID: "p", callID: "c" }),
  throwingGetters({ tool: "task", sessionID: "p", callID: "c" }, ["tool"]),
  throwingGetters({ tool: "task", sessionID: "p", callID: "c" }, ["sessionID", "callID"]),
  unprintable(),
  { tool: "task", sessionID: "x".repeat(5_000_000), callID: "c" }
]

describe("plugin: hostile hook inputs", () => {
  it("US-5 tool.execute.before and tool.execute.after never throw on inputs or outputs whose reads throw", async () => {
    const b = await start({ models: POOL2 })
    for (const input of hostiles()) {
      for (const output of [...hostiles(), { args: revoked() }, { args: trapEverything() }, { args: throwingGetters({ subagent_type: "explore" }, ["subagent_type"]) }]) {
        await expect(before(b)(input, output)).resolves.toBeUndefined()
        await expect(after(b)(input, output)).resolves.toBeUndefined()
      }
    }
    expect(await spawn(b, "p", "ok")).toBe("explore-1")
  })

  it("US-5 a hand-named variant is still refused when the task_id, description and prompt getters throw", async () => {
    const b = await start({ models: POOL2 })
    const args = throwingGetters({ subagent_type: "explore-1", description: "d", prompt: "p" }, ["task_id", "description", "prompt"])
    await expect(before(b)({ tool: "task", sessionID: "p", callID: "c1" }, { args })).rejects.toBeInstanceOf(VariantRefused)
    expect(ownClaims(b)).toEqual({})
  })

  it("US-5 a hand-named variant is still refused when args and input are Proxies that throw on every other trap", async () => {
    const b = await start({ models: POOL2 })
    const input = trapEverything({ tool: "task", sessionID: "p", callID: "c1" }, ["tool", "sessionID", "callID"])
    const args = trapEverything({ subagent_type: "implement-2" }, ["subagent_type"])
    const output = trapEverything({ args }, ["args"])
    await expect(before(b)(input, output)).rejects.toThrow(/"implement-2".*spawn "implement"/)
    expect(ownClaims(b)).toEqual({})
  })

  it("US-5 a hand-named variant is still refused when the session or call id cannot be read", async () => {
    const b = await start({ models: POOL2 })
    const input = throwingGetters({ tool: "task", sessionID: "p", callID: "c1" }, ["sessionID", "callID"])
    await expect(before(b)(input, { args: { subagent_type: "context-3" } })).rejects.toBeInstanceOf(VariantRefused)
    expect(ownClaims(b)).toEqual({})
    expect(b.logs.some((l) => l.level === "warn" && l.message.startsWith("refused manual variant context-3"))).toBe(true)
  })

  it("US-5 a rewrite that cannot be written back leaves the spawn as it was, logs it and does not throw", async () => {
    const b = await start({ models: POOL2 })
    const args = Object.defineProperty({}, "subagent_type", {
      enumerable: true,
      get: () => "explore",
      set: () => {
        throw new Error("read-only")
      }
    })
    await expect(before(b)({ tool: "task", sessionID: "p", callID: "c1" }, { args })).resolves.toBeUndefined()
    expect(b.logs.some((l) => l.level === "error" && l.message.startsWith("routing could not rewrite the task call"))).toBe(true)
  })

  it("US-47 chat.params never throws on hostile inputs", async () => {
    const b = await start({ models: POOL2 })
    for (const input of [...hostiles(), throwingGetters({ sessionID: "s" }, ["sessionID"]), trapEverything()]) {
      await expect(params(b)(input, revoked())).resolves.toBeUndefined()
    }
  })

  it("US-4 the event hook never throws on hostile events, properties or infos", async () => {
    const b = await start({ models: POOL2 })
    const shapes: Array<unknown> = [...hostiles(), { event: revoked() }, { event: trapEverything() }, { event: { type: "session.created", properties: revoked() } }]
    for (const type of ["session.created", "message.updated", "message.part.updated", "session.status", "session.idle", "session.error", "permission.asked", "question.replied"]) {
      for (const h of hostiles()) {
        shapes.push({ event: { type, properties: h } })
        shapes.push({ event: { type, properties: { sessionID: "s", info: h, part: h, status: h, error: h } } })
        shapes.push({ event: { type, properties: { sessionID: "s", info: { sessionID: "s", role: "assistant", error: h } } } })
      }
    }
    for (const s of shapes) await expect(onEvent(b)(s)).resolves.toBeUndefined()
  })

  it("US-4 an assistant error that refers to itself is still classified: the rate limit cools the model", async () => {
    const b = await start({ models: POOL2 })
    await spawn(b, "p", "c1")
    await childCreated(b, "s1", "p", "explore-1")
    const error = cyclic({ name: "APIError", data: { statusCode: 429, message: "Slow down" } })
    await event(b, "message.updated", { info: { id: "m1", sessionID: "s1", role: "assistant", providerID: "zen", modelID: "alpha", error } })
    expect(cooldown(b, "zen/alpha")?.reason).toBe("rate_limit")
  })

  it("US-4 an assistant error with a throwing getter beside its data is still classified", async () => {
    const b = await start({ models: POOL2 })
    await spawn(b, "p", "c1")
    await childCreated(b, "s1", "p", "explore-1")
    const error = throwingGetters({ name: "APIError", data: { statusCode: 429, message: "Slow down" } }, ["stack"])
    await event(b, "message.updated", { info: { id: "m1", sessionID: "s1", role: "assistant", providerID: "zen", modelID: "alpha", error } })
    expect(cooldown(b, "zen/alpha")?.reason).toBe("rate_limit")
  })

  it("US-2 the config hook never throws on revoked Proxies, throwing getters or cycles", async () => {
    const b = await start({ models: POOL2 })
    for (const input of [...hostiles(), throwingGetters({ agent: {} }, ["agent"]), { agent: revoked() }, { agent: trapEverything() }, cyclic({ agent: {} })]) {
      await expect(onConfig(b)(input)).resolves.toBeUndefined()
    }
    const config: Record<string, unknown> = { agent: {} }
    await onConfig(b)(config)
    expect(Object.keys(config.agent as object)).toContain("explore-1")
  })

  it("US-7 a config object whose agent setter throws a revoked Proxy is left alone, and hot reload keeps working", async () => {
    const dir = join(process.env.XDG_CONFIG_HOME!, "opencode-pool")
    mkdirSync(dir, { recursive: true })
    const file = join(dir, "pool.txt")
    writeFileSync(file, "zen/alpha 1\n")
    const b = await start({})
    const config = Object.defineProperty({}, "agent", {
      enumerable: true,
      get: () => ({}),
      set: () => {
        throw revoked()
      }
    })
    await expect(onConfig(b)(config)).resolves.toBeUndefined()
    expect(b.logs.some((l) => l.level === "error" && l.message === "config injection failed: opencode's config object cannot be read or written")).toBe(true)
    const reloads = () => b.logs.filter((l) => l.message.startsWith("pool reloaded")).length
    for (const [n, text] of [[1, "zen/alpha 1\ngo/gamma 1\n"], [2, "go/gamma 1\nzen/alpha 1\n"]] as const) {
      writeFileSync(file, text)
      for (let i = 0; i < 100 && reloads() < n; i++) await sleep(20)
      expect(reloads()).toBe(n)
    }
    expect(await spawn(b, "p", "c1")).toBe("explore-1")
    expect(ownClaims(b)["p:c1"]).toMatchObject({ model: "go/gamma" })
  })

  it("US-6 pool_status answers whatever its arguments and context are", async () => {
    const b = await start({ models: POOL2 })
    const execute = (b.hooks.tool!.pool_status as unknown as { execute: (a: unknown, c: unknown) => Promise<string> }).execute
    for (const h of hostiles()) await expect(execute(h, h)).resolves.toContain("explore")
  })

  it("US-17 a hostile client only sends the log to stderr: routing goes on and no promise is left rejected", async () => {
    const dir = tmp()
    const clients: Array<unknown> = [
      throwingGetters({ app: {} }, ["app"], () => revoked()),
      { app: { log: () => Promise.resolve(revoked()) } },
      { app: { log: () => Promise.resolve(throwingGetters({ error: undefined }, ["error"])) } },
      { app: { log: () => Promise.resolve({ error: undefined }) } },
      Object.assign(() => undefined, { app: { log: () => Promise.resolve({ error: undefined }) } })
    ]
    const rejected: Array<unknown> = []
    const onRejection = (e: unknown) => void rejected.push(e)
    process.on("unhandledRejection", onRejection)
    const writes: Array<string> = []
    const original = process.stderr.write.bind(process.stderr)
    process.stderr.write = ((chunk: string) => (writes.push(String(chunk)), true)) as typeof process.stderr.write
    try {
      for (const [i, client] of clients.entries()) {
        const hooks = await opencodePool({ client, directory: dir } as never, { stateDir: join(dir, `state${i}`), models: POOL2 } as never)
        const output = { args: { subagent_type: "explore" } as Record<string, unknown> }
        await hooks["tool.execute.before"]!({ tool: "task", sessionID: "p", callID: "c1" }, output)
        expect(output.args.subagent_type).toBe("explore-1")
        await hooks.dispose?.()
      }
      await sleep(20)
    } finally {
      process.stderr.write = original
      process.off("unhandledRejection", onRejection)
    }
    expect(rejected).toEqual([])
    expect(writes.filter((w) => w.startsWith("opencode-pool info: routed explore -> explore-1")).length).toBeGreaterThanOrEqual(3)
  })

  it("US-31 behind the guard, the client's session calls still reach opencode as methods", async () => {
    const dir = tmp()
    const calls: Array<string> = []
    const session = {
      name: "sdk",
      abort(this: { name?: string }, o: { path: { id: string } }) {
        calls.push(`${this?.name}:abort:${o.path.id}`)
        return Promise.resolve({ data: true, response: { status: 200 } })
      },
      status(this: { name?: string }) {
        calls.push(`${this?.name}:status`)
        return Promise.resolve({ data: {} })
      }
    }
    const hooks = await opencodePool({ client: { session, app: { log: () => Promise.resolve({}) } }, directory: dir } as never, { stateDir: join(dir, "state"), models: POOL2 } as never)
    try {
      const output = { args: { subagent_type: "explore" } as Record<string, unknown> }
      await hooks["tool.execute.before"]!({ tool: "task", sessionID: "p", callID: "c1" }, output)
      await hooks.event!({ event: { type: "session.created", properties: { info: { id: "s1", parentID: "p", agent: output.args.subagent_type } } } } as never)
      await hooks.event!({ event: { type: "session.error", properties: { sessionID: "s1", error: { name: "APIError", data: { statusCode: 429, message: "x" } } } } } as never)
      for (let i = 0; i < 100 && calls.length < 2; i++) await sleep(10)
      expect(calls).toEqual(["sdk:abort:s1", "sdk:status"])
    } finally {
      await hooks.dispose?.()
    }
  })

  it("US-17 the plugin entry never throws on hostile options or context", async () => {
    const dir = tmp()
    const stateDir = join(dir, "state")
    for (const options of [revoked(), trapEverything(), throwingGetters({ stateDir, models: POOL2 }, ["enabled", "trace"]), throwingGetters({ stateDir }, ["models"])]) {
      for (const ctx of [{ client: undefined, directory: dir }, throwingGetters({ client: undefined, directory: dir }, ["client", "directory"])]) {
        const hooks = await opencodePool(ctx as never, options as never)
        await hooks.dispose?.()
      }
    }
    expect(existsSync(join(dir, "..", "state"))).toBe(false)
  })

  describe("experimental.chat.system.transform (US-49)", () => {
    let sessions = 0
    /** A root session never seen before: its first readable request gets a GO line. */
    const fresh = () => `ses_root_${sessions++}`
    const request = (session: string) => ({ sessionID: session, model: { providerID: "zen", id: "alpha" } })
    const OPENCODE = "You are opencode."
    const ALL_TRAPS: ReadonlyArray<Trap> = ["get", "has", "ownKeys", "getOwnPropertyDescriptor", "getPrototypeOf", "set", "defineProperty", "deleteProperty", "isExtensible", "preventExtensions"]
    /** The hook still coaches a readable request of a fresh session. */
    const stillCoaches = async (b: Booted) => {
      const system = [OPENCODE]
      await transform(b)(request(fresh()), { system })
      expect(system).toHaveLength(2)
      expect(system[1]).toMatch(/^opencode-pool quota: GO\./)
    }

    it("US-49 an output.system whose length cannot be read: the hook resolves, adds nothing, and the session's next readable request still gets its line", async () => {
      const b = await start({ models: POOL2 })
      const session = fresh()
      const items: Array<unknown> = [OPENCODE]
      await expect(transform(b)(request(session), { system: hostileArray(items, ["get"], ["length"]) })).resolves.toBeUndefined()
      expect(items).toEqual([OPENCODE])
      // the engine was not told: the line it would have given is still owed to the session
      const system = [OPENCODE]
      await transform(b)(request(session), { system })
      expect(system[1]).toMatch(/^opencode-pool quota: GO\./)
    })

    it("US-49 Proxies whose every get, has, ownKeys and length throw, as output, output.system, input or input.model: the hook resolves and keeps coaching", async () => {
      const b = await start({ models: POOL2 })
      const shapes: Array<readonly [string, () => unknown, () => unknown]> = []
      const hostileValues = (): ReadonlyArray<readonly [string, () => unknown]> => [
        ["trapEverything", () => trapEverything()],
        ["trapEverything over an array", () => trapEverything([OPENCODE] as unknown as Record<string, unknown>)],
        ["revoked", () => revoked()],
        ["every array trap", () => hostileArray([OPENCODE], ALL_TRAPS)],
        ["array get/has/ownKeys", () => hostileArray([OPENCODE], ["get", "has", "ownKeys"])],
        ["array length", () => hostileArray([OPENCODE], ["get"], ["length"])],
        ["array item 0", () => hostileArray([OPENCODE], ["get"], ["0"])],
        ["unprintable", () => unprintable()],
        ["throwing getters", () => throwingGetters({ sessionID: "s", model: {}, providerID: "zen", id: "alpha", system: [] }, ["sessionID", "model", "providerID", "id", "system"])]
      ]
      for (const [name, h] of hostileValues()) {
        const s = fresh()
        shapes.push([`output ${name}`, () => request(s), h])
        shapes.push([`output.system ${name}`, () => request(s), () => ({ system: h() })])
        shapes.push([`input ${name}`, h, () => ({ system: [OPENCODE] })])
        shapes.push([`input.model ${name}`, () => ({ sessionID: s, model: h() }), () => ({ system: [OPENCODE] })])
        shapes.push([`input.model.id ${name}`, () => ({ sessionID: s, model: { providerID: "zen", id: h() } }), () => ({ system: [OPENCODE] })])
        shapes.push([`everything ${name}`, h, h])
      }
      for (const [name, input, output] of shapes) {
        const r = await transform(b)(input(), output()).then(
          () => "resolved",
          (e: unknown) => `threw: ${String((e as Error)?.message)}`
        )
        expect(r, name).toBe("resolved")
      }
      await stillCoaches(b)
    })

    it("US-49 behind Proxies that let only what the hook needs be read, the line is still added", async () => {
      const b = await start({ models: POOL2 })
      const model = trapEverything({ providerID: "zen", id: "alpha" }, ["providerID", "id"])
      // the array's has, ownKeys, prototype and delete traps throw; get and set pass through
      const items: Array<unknown> = [OPENCODE]
      const system = hostileArray(items, ["has", "ownKeys", "getPrototypeOf", "deleteProperty", "isExtensible", "preventExtensions"])
      const input = trapEverything({ sessionID: fresh(), model }, ["sessionID", "model"])
      await expect(transform(b)(input, trapEverything({ system }, ["system"]))).resolves.toBeUndefined()
      expect(items).toHaveLength(2)
      expect(items[1]).toMatch(/^opencode-pool quota: GO\./)
    })

    it("US-49 a system array that cannot be written: the hook resolves and says so in the log", async () => {
      const b = await start({ models: POOL2 })
      const session = fresh()
      const system = Object.freeze([OPENCODE])
      await expect(transform(b)(request(session), { system })).resolves.toBeUndefined()
      expect(system).toEqual([OPENCODE])
      expect(b.logs.filter((l) => l.level === "error").map((l) => l.message)).toEqual([`coaching could not add its line to the system prompt of ${session}`])
    })

    it("US-49 a length that is not an array index (negative, fractional, huge) or lies short of the lines adds nothing, overwrites nothing, writes no stray key", async () => {
      const b = await start({ models: POOL2 })
      for (const length of [-1, 1.5, 2 ** 32, 2 ** 32 - 1, Number.NaN, "1", 0]) {
        const items: Array<unknown> = [OPENCODE]
        const system = new Proxy(items, { get: (t, k) => (k === "length" ? length : Reflect.get(t, k)) })
        await expect(transform(b)(request(fresh()), { system })).resolves.toBeUndefined()
        expect(Object.keys(items)).toEqual(["0"])
        expect(items).toEqual([OPENCODE])
      }
      await stillCoaches(b)
    })
  })

  it("US-50 chat.message never throws on Proxies whose every trap throws, in any position", async () => {
    const b = await start({ models: POOL2, fallbackModels: ["fb/one"] })
    const model = { providerID: "zen", modelID: "alpha" }
    for (const h of [...hostiles(), hostileArray([], ["get", "has", "ownKeys"]), hostileArray([model], ["get"], ["length"])]) {
      for (const [input, output] of [
        [h, { message: { model } }],
        [{ sessionID: "s", model: h }, { message: h }],
        [{ sessionID: "s", model }, h],
        [{ sessionID: "s", model }, { message: { model: h, agent: h } }],
        [h, h]
      ] as const) {
        await expect(message(b)(input, output)).resolves.toBeUndefined()
      }
    }
  })
})
