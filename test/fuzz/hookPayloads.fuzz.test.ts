/**
 * Fuzz family: hook payloads. Random and hostile inputs (anything fast-check makes, throwing getters,
 * Proxies that throw on every trap, revoked Proxies, cycles, null prototypes, deep nesting, huge
 * strings) go into every hook of one plugin instance booted over a temp state directory: no hook
 * throws except the documented refusal of a hand-named slot variant, no case hangs, nothing is
 * written outside the given directories.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import fc from "fast-check"
import { existsSync, readdirSync } from "node:fs"
import { join } from "node:path"
import { VARIANT_PATTERN } from "../../src/core/constants.js"
import { jsonCopy, pluginOptions } from "../../src/core/extract.js"
import opencodePool from "../../src/plugin/index.js"
import { VariantRefused } from "../../src/services/pool/PoolEngine.js"
import { boot, childCreated, POOL2, spawn, tmp, type Booted } from "../plugin/boot.js"
import { cyclic, hostileArray, nullProto, revoked, throwingGetters, trapEverything, unprintable, type Trap } from "../plugin/hostile.js"
import { breather, FUZZ_RUNS, fuzzParams, fuzzTimeout, hostileNumber, hostileString } from "./common.js"

/** Each hook call must settle within this (a hang is a failure, not a slow test). */
const CASE_MS = 5_000

const bounded = async <A>(p: Promise<A>): Promise<A> => {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`hook did not settle within ${CASE_MS} ms`)), CASE_MS)
      })
    ])
  } finally {
    clearTimeout(timer)
  }
}

/** Resolves to the hook's outcome: `undefined` when it resolved, the thrown value when it rejected. */
const outcome = async (p: Promise<unknown>): Promise<{ readonly threw: boolean; readonly error?: unknown }> => {
  try {
    await bounded(p)
    return { threw: false }
  } catch (error) {
    return { threw: true, error }
  }
}

const restore = (vars: Record<string, string | undefined>) => {
  for (const [k, v] of Object.entries(vars)) {
    if (v === undefined) delete process.env[k]
    else process.env[k] = v
  }
}

/** Every 100th call yields to the event loop: the hooks write with synchronous I/O, and the test runner must be heard. */
const breathe = breather(100)

/**
 * Files the plugin could have written into the working directory since `before` (the working tree is
 * shared with other work, so only names the plugin writes count: claims, cooldowns, the lock, traces).
 */
const strayFiles = (before: ReadonlyArray<string>): Array<string> =>
  readdirSync(process.cwd()).filter((f) => !before.includes(f) && /^(claims\.|cooldown\.|pool\.lock|opencode-pool)|\.jsonl$|\.tmp$/.test(f))

const nest = (depth: number): unknown => {
  let v: unknown = { leaf: true }
  for (let i = 0; i < depth; i++) v = { a: v, b: [v] }
  return v
}

/**
 * The payloads are drawn as recipes (plain data fast-check can keep, compare and print) and built into
 * hostile values only inside the property: fast-check itself must not touch a throwing getter.
 */
type How = "plain" | "getters" | "hostileThrows" | "nullProto" | "proxy" | "cyclic"
type Recipe =
  | { readonly k: "value"; readonly v: unknown }
  | { readonly k: "revoked" | "traps" | "unprintable" }
  | { readonly k: "nest"; readonly depth: number }
  | { readonly k: "huge"; readonly n: number }
  | { readonly k: "logFn"; readonly answer: "ok" | "reject" | "throw" | "hostile" }
  | { readonly k: "obj"; readonly how: How; readonly fields: Readonly<Record<string, Recipe>>; readonly keys: ReadonlyArray<string> }
  // an array behind a Proxy (Array.isArray holds): `traps` throw (`get` only for `keys` when given), or its `length` lies
  | { readonly k: "array"; readonly items: ReadonlyArray<string>; readonly traps: ReadonlyArray<Trap>; readonly keys: ReadonlyArray<string> | undefined }
  | { readonly k: "lying"; readonly items: ReadonlyArray<string>; readonly length: unknown }

/** The real array behind each hostile array built, so a test can look at it without going through its traps. */
const arrayTargets = new WeakMap<object, Array<unknown>>()

/** The hostile value a recipe describes: `getters` makes `keys` throw, `proxy` lets only `keys` be read. */
const build = (r: Recipe): unknown => {
  switch (r.k) {
    case "value":
      return r.v
    case "revoked":
      return revoked()
    case "traps":
      return trapEverything()
    case "unprintable":
      return unprintable()
    case "nest":
      return nest(r.depth)
    case "huge":
      return "x".repeat(r.n)
    case "logFn":
      // a client's app.log: answers, fails, throws, or answers something hostile
      return () => {
        if (r.answer === "throw") throw revoked()
        return r.answer === "ok" ? Promise.resolve({ data: true }) : r.answer === "reject" ? Promise.reject(unprintable()) : Promise.resolve(throwingGetters({ error: 1 }, ["error"]))
      }
    case "array":
    case "lying": {
      const target: Array<unknown> = [...r.items]
      const length = r.k === "lying" ? r.length : undefined
      const proxy = r.k === "array" ? hostileArray(target, r.traps, r.keys) : new Proxy(target, { get: (t, k) => (k === "length" ? length : Reflect.get(t, k)) })
      arrayTargets.set(proxy, target)
      return proxy
    }
    case "obj": {
      const o: Record<string, unknown> = {}
      for (const [k, v] of Object.entries(r.fields)) Object.defineProperty(o, k, { value: build(v), enumerable: true, writable: true, configurable: true })
      switch (r.how) {
        case "plain":
          return o
        case "getters":
          return throwingGetters(o, r.keys)
        case "hostileThrows":
          return throwingGetters(o, r.keys, (w) => (w.length % 2 === 0 ? revoked() : unprintable()))
        case "nullProto":
          return nullProto(o)
        case "proxy":
          return trapEverything(o, r.keys)
        case "cyclic":
          return cyclic(o)
      }
    }
  }
}

const value = (a: fc.Arbitrary<unknown>): fc.Arbitrary<Recipe> => a.map((v): Recipe => ({ k: "value", v }))

/** An object of the given fields, as it is or hostile (throwing getters, no prototype, behind a Proxy, reachable from itself). */
const obj = (fields: fc.Arbitrary<Record<string, Recipe>>, hows: ReadonlyArray<How> = ["getters", "hostileThrows", "nullProto", "proxy", "cyclic"]): fc.Arbitrary<Recipe> =>
  fields.chain((f) =>
    fc
      .record({
        how: fc.oneof({ weight: 4, arbitrary: fc.constant<How>("plain") }, { weight: 1, arbitrary: fc.constantFrom(...hows) }),
        keys: fc.subarray(Object.keys(f))
      })
      .map(({ how, keys }): Recipe => ({ k: "obj", how, fields: f, keys }))
  )

/** Objects a hostile caller builds. */
const hostileObject: fc.Arbitrary<Recipe> = fc.oneof(
  fc.constantFrom<Recipe>({ k: "revoked" }, { k: "traps" }, { k: "unprintable" }),
  fc.integer({ min: 50, max: 3_000 }).map((depth): Recipe => ({ k: "nest", depth })),
  fc.integer({ min: 65_537, max: 500_000 }).map((n): Recipe => ({ k: "huge", n })),
  obj(fc.dictionary(fc.string({ maxLength: 8 }), value(fc.anything({ maxDepth: 2 })), { maxKeys: 6 }))
)

/** Anything at all, hostile or not. */
const anyValue: fc.Arbitrary<Recipe> = fc.oneof(
  value(
    fc.anything({
      maxDepth: 3,
      withBigInt: true,
      withBoxedValues: true,
      withDate: true,
      withMap: true,
      withSet: true,
      withNullPrototype: true,
      withObjectString: true,
      withSparseArray: true,
      withTypedArray: true
    })
  ),
  value(hostileString),
  value(hostileNumber),
  hostileObject
)

/** Mostly the plausible value, sometimes anything. */
const maybe = (plausible: fc.Arbitrary<unknown>): fc.Arbitrary<Recipe> => fc.oneof({ weight: 5, arbitrary: value(plausible) }, { weight: 1, arbitrary: anyValue })
/** Mostly the plausible recipe, sometimes anything. */
const maybeR = (plausible: fc.Arbitrary<Recipe>): fc.Arbitrary<Recipe> => fc.oneof({ weight: 5, arbitrary: plausible }, { weight: 1, arbitrary: anyValue })

const ids = fc.oneof({ weight: 4, arbitrary: fc.constantFrom("p", "q", "s1", "s2", "child") }, { weight: 1, arbitrary: fc.string({ maxLength: 12 }) }, { weight: 1, arbitrary: hostileString })
const bases = fc.constantFrom("explore", "implement", "context")
const variantName = fc.tuple(bases, fc.integer({ min: 1, max: 99 })).map(([b, n]) => `${b}-${n}`)
const agentName = fc.oneof({ weight: 3, arbitrary: bases }, { weight: 2, arbitrary: variantName }, { weight: 1, arbitrary: fc.constantFrom("general", "explore-0", "explore-deep") }, { weight: 1, arbitrary: hostileString })

const taskInput = maybeR(obj(fc.record({ tool: maybe(fc.constantFrom("task", "read")), sessionID: maybe(ids), callID: maybe(ids) })))
const taskOutput = maybeR(
  obj(fc.record({ args: maybeR(obj(fc.record({ subagent_type: maybe(agentName), task_id: maybe(ids), description: anyValue, prompt: anyValue }))) }))
)

const apiError = fc.record({
  name: maybe(fc.constantFrom("APIError", "UnknownError", "MessageAbortedError", "ProviderAuthError")),
  data: maybeR(
    obj(
      fc.record({
        statusCode: maybe(fc.constantFrom(400, 401, 404, 429, 500, 503, 529)),
        message: maybe(fc.constantFrom("Slow down", "rate limit", "quota exceeded", "context limit reached", '{"message":"limit reached"}')),
        responseBody: anyValue,
        responseHeaders: anyValue,
        metadata: anyValue
      })
    )
  )
})
const errorValue = fc.oneof(anyValue, obj(apiError))
const eventTypes = fc.constantFrom(
  "session.created",
  "message.updated",
  "message.part.updated",
  "session.status",
  "session.idle",
  "session.error",
  "permission.asked",
  "question.asked",
  "permission.replied",
  "question.replied",
  "question.rejected"
)
const properties = obj(
  fc.record({
    sessionID: maybe(ids),
    id: maybe(ids),
    requestID: maybe(ids),
    error: errorValue,
    info: maybeR(
      obj(
        fc.record({
          id: maybe(ids),
          parentID: maybe(ids),
          sessionID: maybe(ids),
          agent: maybe(agentName),
          title: maybe(agentName.map((a) => `x (@${a} subagent)`)),
          role: maybe(fc.constantFrom("assistant", "user")),
          providerID: maybe(fc.constantFrom("zen", "go")),
          modelID: maybe(fc.constantFrom("alpha", "gamma")),
          error: errorValue
        })
      )
    ),
    part: maybeR(obj(fc.record({ sessionID: maybe(ids), type: maybe(fc.constantFrom("text", "tool", "reasoning", "retry", "step-start")) }))),
    status: maybeR(
      obj(
        fc.record({
          type: maybe(fc.constantFrom("retry", "busy", "idle")),
          message: maybe(hostileString),
          next: maybe(hostileNumber),
          action: maybeR(obj(fc.record({ provider: maybe(fc.constantFrom("zen", "go")) })))
        })
      )
    )
  })
)
const eventInput = maybeR(obj(fc.record({ event: maybeR(obj(fc.record({ type: maybe(eventTypes), properties }))) })))
const configInput = maybeR(
  obj(
    fc.record({
      agent: maybeR(obj(fc.dictionary(fc.oneof(agentName, fc.string({ maxLength: 8 })), maybeR(obj(fc.record({ model: maybe(fc.string()), mode: anyValue }))), { maxKeys: 8 }))),
      provider: anyValue
    })
  )
)

/** Only a thrown refusal of a hand-named variant is allowed out of a hook. */
const isRefusal = (o: { readonly threw: boolean; readonly error?: unknown }): boolean =>
  o.threw && o.error instanceof VariantRefused && VARIANT_PATTERN.test(o.error.requested)

describe("fuzz: hook payloads", () => {
  let b: Booted
  const cwdBefore = readdirSync(process.cwd()).sort()
  const configHome = process.env.XDG_CONFIG_HOME

  beforeAll(async () => {
    process.env.XDG_CONFIG_HOME = tmp("ocpool-fuzz-config-")
    b = await boot({ models: POOL2, fallbackModels: ["fb/one", "fb/two"] })
  })
  afterAll(async () => {
    await b.hooks.dispose?.()
    restore({ XDG_CONFIG_HOME: configHome })
    // nothing was written outside the given directories
    expect(readdirSync(b.dir)).toEqual(["state"])
    expect(strayFiles(cwdBefore)).toEqual([])
  })

  type Hook = (input: unknown, output?: unknown) => Promise<unknown>
  const hook = (name: string): Hook => (b.hooks as unknown as Record<string, Hook>)[name]!

  it(
    "US-5 tool.execute.before and after: no throw but the refusal of a hand-named variant, no hang",
    async () => {
      await fc.assert(
        fc.asyncProperty(taskInput, taskOutput, async (ri, ro) => {
          await breathe()
          const input = build(ri)
          const output = build(ro)
          const before = await outcome(hook("tool.execute.before")(input, output))
          if (before.threw && !isRefusal(before)) throw before.error
          const after = await outcome(hook("tool.execute.after")(input, output))
          if (after.threw) throw after.error
        }),
        fuzzParams()
      )
      // the payloads reached the engine: calls were routed and refused
      for (const start of ["routed ", "refused manual variant "]) expect(b.logs.some((l) => l.message.startsWith(start))).toBe(true)
    },
    fuzzTimeout(20)
  )

  it(
    "US-5 a hand-named variant is refused whatever the other properties of the call hold",
    async () => {
      // the variant name and the tool stay readable; everything else may be hostile
      const recipe = (fields: fc.Arbitrary<Record<string, Recipe>>, readable: ReadonlyArray<string>): fc.Arbitrary<Recipe> =>
        fields.chain((f) =>
          fc.oneof(
            fc.constant<Recipe>({ k: "obj", how: "plain", fields: f, keys: [] }),
            fc.constant<Recipe>({ k: "obj", how: "nullProto", fields: f, keys: [] }),
            fc.constant<Recipe>({ k: "obj", how: "cyclic", fields: f, keys: [] }),
            fc.constant<Recipe>({ k: "obj", how: "getters", fields: f, keys: Object.keys(f).filter((k) => !readable.includes(k)) }),
            fc.constant<Recipe>({ k: "obj", how: "hostileThrows", fields: f, keys: Object.keys(f).filter((k) => !readable.includes(k)) }),
            fc.constant<Recipe>({ k: "obj", how: "proxy", fields: f, keys: readable })
          )
        )
      const args = recipe(fc.record({ subagent_type: value(variantName), task_id: anyValue, description: anyValue, prompt: anyValue }), ["subagent_type"])
      const input = recipe(fc.record({ tool: value(fc.constant("task")), sessionID: maybe(ids), callID: maybe(ids) }), ["tool"])
      await fc.assert(
        fc.asyncProperty(input, args, async (ri, ra) => {
          await breathe()
          const o = await outcome(hook("tool.execute.before")(build(ri), { args: build(ra) }))
          if (!isRefusal(o)) throw new Error(`expected a refusal, got ${o.threw ? String(o.error) : "none"}`)
        }),
        fuzzParams()
      )
    },
    fuzzTimeout(20)
  )

  it(
    "US-47 chat.params never throws or hangs",
    async () => {
      const input = maybeR(obj(fc.record({ sessionID: maybe(ids), agent: anyValue, model: anyValue, provider: anyValue, message: anyValue })))
      await fc.assert(
        fc.asyncProperty(input, anyValue, async (i, o) => {
          await breathe()
          const r = await outcome(hook("chat.params")(build(i), build(o)))
          if (r.threw) throw r.error
        }),
        fuzzParams()
      )
    },
    fuzzTimeout(20)
  )

  it(
    "US-50 chat.message never throws or hangs, also for a session switched to a fallback, and writes only a model reference",
    async () => {
      // session p runs on main/big and is switched away by a quota retry: its messages naming main/big are rewritten
      await hook("chat.message")({ sessionID: "p", agent: "build" }, { message: { model: { providerID: "main", modelID: "big" } }, parts: [] })
      await hook("event")({ event: { type: "session.status", properties: { sessionID: "p", status: { type: "retry", message: "Monthly usage limit reached", next: Date.now() + 3_000 } } } })
      const model = fc.oneof(anyValue, obj(fc.record({ providerID: maybe(fc.constantFrom("main", "fb")), modelID: maybe(fc.constantFrom("big", "one")) })))
      const input = maybeR(obj(fc.record({ sessionID: maybe(ids), agent: anyValue, model, messageID: anyValue })))
      const output = maybeR(obj(fc.record({ message: fc.oneof(anyValue, obj(fc.record({ model, agent: anyValue }))), parts: anyValue })))
      await fc.assert(
        fc.asyncProperty(input, output, async (i, o) => {
          await breathe()
          const r = await outcome(hook("chat.message")(build(i), build(o)))
          if (r.threw) throw r.error
        }),
        fuzzParams()
      )
      expect(b.logs.some((l) => l.message.startsWith("Switched to fb/one: main/big hit its quota"))).toBe(true)
      expect(b.logs.some((l) => l.message === "session p: message on main/big runs on fb/one while main/big cools")).toBe(true)
    },
    fuzzTimeout(20)
  )

  it(
    "US-49 experimental.chat.system.transform never throws or hangs, also on system arrays behind throwing or lying Proxies, and adds at most one string, at the end",
    async () => {
      const TRAPS: ReadonlyArray<Trap> = ["get", "has", "ownKeys", "getOwnPropertyDescriptor", "getPrototypeOf", "set", "defineProperty", "deleteProperty", "isExtensible", "preventExtensions"]
      const lines = fc.array(fc.oneof(fc.string({ maxLength: 20 }), fc.constant("You are a title generator. You output ONLY a thread title.")), { maxLength: 3 })
      const hostileSystem: fc.Arbitrary<Recipe> = fc.oneof(
        fc
          .record({ items: lines, traps: fc.subarray([...TRAPS], { minLength: 1 }), keys: fc.option(fc.subarray(["length", "0", "1", "2", "3"], { minLength: 1 }), { nil: undefined }) })
          .map((r): Recipe => ({ k: "array", ...r })),
        fc.record({ items: lines, length: fc.oneof(hostileNumber, fc.constantFrom(-1, 1.5, 2 ** 32, 2 ** 32 - 1, "1", null, undefined)) }).map((r): Recipe => ({ k: "lying", ...r }))
      )
      // fresh sessions now and then: a line is due, so the write itself is exercised
      const sessions = fc.oneof(ids, fc.integer({ min: 0, max: 1_000_000 }).map((n) => `ses_fuzz_${n}`))
      const input = maybeR(obj(fc.record({ sessionID: maybe(sessions), model: fc.oneof(anyValue, obj(fc.record({ providerID: maybe(ids), id: maybe(ids) })), value(fc.constant({ providerID: "zen", id: "alpha" }))) })))
      const output = maybeR(obj(fc.record({ system: fc.oneof(anyValue, value(fc.array(fc.string(), { maxLength: 3 })), hostileSystem) })))
      let written = 0
      await fc.assert(
        fc.asyncProperty(input, output, async (i, o) => {
          await breathe()
          const built = build(o)
          // the test's own look at a hostile output must not throw either: a hostile array is seen through its real array
          // (by its keys: a lying length may have made it sparse and huge)
          const systemOf = (): ReadonlyMap<string, unknown> | undefined => {
            try {
              const s = (built as { system?: unknown } | null)?.system
              const target = typeof s === "object" && s !== null ? (arrayTargets.get(s) ?? (Array.isArray(s) ? (s as Array<unknown>) : undefined)) : undefined
              return target === undefined ? undefined : new Map(Object.keys(target).map((k) => [k, target[Number(k)]] as const))
            } catch {
              return undefined
            }
          }
          const before = systemOf()
          const r = await outcome(hook("experimental.chat.system.transform")(build(i), built))
          if (r.threw) throw r.error
          const after = systemOf()
          if (before !== undefined && after !== undefined) {
            // only array indices, at most one more, and the lines that were there untouched
            const added = [...after.keys()].filter((k) => !before.has(k))
            for (const k of added) expect(k).toMatch(/^(0|[1-9]\d*)$/)
            expect(added.length).toBeLessThanOrEqual(1)
            for (const [k, v] of before) expect(after.get(k)).toBe(v)
            for (const k of added) {
              written++
              expect(typeof after.get(k)).toBe("string")
            }
          }
        }),
        fuzzParams()
      )
      // coaching lines were written, not only refused (a due line is drawn now and then: a short run may draw none)
      if (FUZZ_RUNS >= 200) expect(written).toBeGreaterThan(0)
    },
    fuzzTimeout(20)
  )

  it(
    "US-4 the event hook never throws or hangs",
    async () => {
      // each case: a routed spawn by "p" and its child "s1", then a few events (children, errors, retries, asks), then its end
      let n = 0
      await fc.assert(
        fc.asyncProperty(fc.array(eventInput, { minLength: 1, maxLength: 4 }), async (events) => {
          await breathe()
          const call = `e${n++}`
          const agent = await bounded(spawn(b, "p", call))
          await bounded(childCreated(b, "s1", "p", agent))
          for (const e of events) {
            const r = await outcome(hook("event")(build(e)))
            if (r.threw) throw r.error
          }
          await bounded(hook("tool.execute.after")({ tool: "task", sessionID: "p", callID: call }))
        }),
        fuzzParams()
      )
      await Effect.runPromise(b.hooks.engine.settle)
    },
    fuzzTimeout(20)
  )

  it(
    "US-2 the config hook never throws or hangs",
    async () => {
      await fc.assert(
        fc.asyncProperty(configInput, async (c) => {
          await breathe()
          const r = await outcome(hook("config")(build(c)))
          if (r.threw) throw r.error
        }),
        fuzzParams()
      )
    },
    fuzzTimeout(20)
  )

  it(
    "US-6 pool_status answers whatever its arguments and context are",
    async () => {
      const execute = (b.hooks.tool!.pool_status as unknown as { execute: (a: unknown, c: unknown) => Promise<unknown> }).execute
      await fc.assert(
        fc.asyncProperty(anyValue, anyValue, async (a, c) => {
          await breathe()
          expect(typeof (await bounded(execute(build(a), build(c))))).toBe("string")
        }),
        fuzzParams()
      )
    },
    fuzzTimeout(20)
  )

  it(
    "US-17 the plugin options are read as a bounded plain copy whatever they are",
    async () => {
      await fc.assert(
        fc.asyncProperty(maybeR(obj(fc.dictionary(fc.string({ maxLength: 10 }), anyValue, { maxKeys: 8 }))), async (o) => {
          await breathe()
          const options = pluginOptions(build(o))
          // a plain copy: JSON-safe, and copying it again changes nothing
          if (options !== undefined) expect(JSON.stringify(jsonCopy(options))).toBe(JSON.stringify(options))
        }),
        fuzzParams()
      )
    },
    fuzzTimeout(20)
  )
})

describe("fuzz: the plugin entry", () => {
  /** Each case boots a whole plugin (files, timers, watchers): a fraction of FUZZ_RUNS, at least 20. */
  const runs = Math.max(20, Math.ceil(FUZZ_RUNS / 50))

  it(
    "US-17 the plugin entry never throws or hangs, whatever its options and context; it writes only where it is told",
    async () => {
      const dir = tmp("ocpool-fuzz-entry-")
      const saved = { state: process.env.OCPOOL_STATE_DIR, trace: process.env.OCPOOL_TRACE, config: process.env.XDG_CONFIG_HOME }
      process.env.OCPOOL_STATE_DIR = join(dir, "state")
      process.env.OCPOOL_TRACE = join(dir, "trace.jsonl")
      process.env.XDG_CONFIG_HOME = join(dir, "config")
      const options = maybeR(
        obj(fc.record({ enabled: maybe(fc.boolean()), models: maybe(fc.constant(POOL2)), maxSlots: anyValue, reapMs: anyValue, logLevel: anyValue, lockWaitMs: maybe(fc.integer({ min: 0, max: 50 })) }))
      )
      const logClient = obj(fc.record({ app: maybeR(obj(fc.record({ log: fc.constantFrom("ok" as const, "reject" as const, "throw" as const, "hostile" as const).map((answer): Recipe => ({ k: "logFn", answer })) }))) }))
      const ctx = maybeR(obj(fc.record({ client: fc.oneof(anyValue, logClient), directory: maybe(fc.constant(dir)) })))
      const cwdBefore = readdirSync(process.cwd()).sort()
      // a hostile client sends the log to stderr: kept out of the test output; no promise may be left rejected
      const original = process.stderr.write.bind(process.stderr)
      process.stderr.write = (() => true) as typeof process.stderr.write
      const rejected: Array<unknown> = []
      const onRejection = (e: unknown) => void rejected.push(e)
      process.on("unhandledRejection", onRejection)
      try {
        await fc.assert(
          fc.asyncProperty(ctx, options, async (c, o) => {
            await breathe()
            const hooks = await bounded(opencodePool(build(c) as never, build(o) as never))
            expect(typeof hooks).toBe("object")
            const before = hooks["tool.execute.before"]
            if (before !== undefined) await bounded(before({ tool: "task", sessionID: "p", callID: "c1" }, { args: { subagent_type: "explore" } }))
            await bounded(hooks.dispose?.() ?? Promise.resolve())
          }),
          fuzzParams(runs)
        )
        await new Promise((r) => setTimeout(r, 20))
      } finally {
        process.stderr.write = original
        process.off("unhandledRejection", onRejection)
        restore({ OCPOOL_STATE_DIR: saved.state, OCPOOL_TRACE: saved.trace, XDG_CONFIG_HOME: saved.config })
      }
      expect(rejected).toEqual([])
      // the state dir, the config dir and the trace (with its decisions file), nothing else
      expect(readdirSync(dir).filter((f) => !["state", "config"].includes(f) && !f.startsWith("trace.jsonl"))).toEqual([])
      expect(existsSync(join(dir, "state"))).toBe(true)
      expect(strayFiles(cwdBefore)).toEqual([])
    },
    fuzzTimeout(2_000, Math.max(20, Math.ceil(FUZZ_RUNS / 50)))
  )
})
