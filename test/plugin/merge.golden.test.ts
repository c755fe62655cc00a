/**
 * Golden files for the config hook (SPEC §4, US-16, US-17): realistic user configs in
 * test/fixtures/configs/<name>.input.json, and the config the hook leaves behind in <name>.expected.json,
 * compared byte for byte (key order included) after `JSON.stringify(config, null, 2)`.
 *
 * The default run compares and fails on any difference. To regenerate the goldens on purpose, run
 *   UPDATE_GOLDEN=1 npx vitest run test/plugin/merge.golden.test.ts
 * and review the diff against SPEC §4 before committing it: besides the golden comparison, every
 * config is checked against the rules of §4 directly (user keys byte-identical, only the missing bases
 * and variants added, whitelists appended once), so a regenerated golden cannot hide a clobber.
 */
import { describe, expect, it } from "@effect/vitest"
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { POOLED_BASES } from "../../src/core/constants.js"
import { writerEditRules } from "../../src/core/context/agents.js"
import { MAP_COMMANDS } from "../../src/core/context/commands.js"
import { MAP_BASE_DEFINITIONS, MAP_DELEGATION_DEFINITIONS } from "../../src/core/inject.js"
import opencodePool from "../../src/plugin/index.js"
import { boot, bootsPerTest, tmp, type Booted } from "./boot.js"

type Json = Record<string, unknown>

const DIR = fileURLToPath(new URL("../fixtures/configs/", import.meta.url))
const UPDATE = process.env.UPDATE_GOLDEN === "1"
/** The fixed inline pool every golden was made with. */
const POOL = { slots: [{ model: "zen/alpha", weight: 2 }, { model: "go/gamma", weight: 1 }] }
const SLOTS = [
  { index: 1, provider: "zen", id: "alpha", model: "zen/alpha" },
  { index: 2, provider: "go", id: "gamma", model: "go/gamma" }
] as const
const INFO = "bound 2 slots from plugin options: 1=zen/alpha w2, 2=go/gamma w1"

/** Each config and the warnings its hook run must log (SPEC §4 steps 2 and 3), in order. */
const CASES: Record<string, ReadonlyArray<string>> = {
  empty: [],
  "all-defined": [],
  "partial-explore": [],
  "opencode-1.18.33": [
    "agent explore-1 pins model fakeB/pool-b; the pool binds it to slot 1's zen/alpha",
    "agent explore-2 pins model fakeB/pool-c; the pool binds it to slot 2's go/gamma"
  ],
  "user-explore-own": [],
  "null-agent": [],
  "command-same-name": [],
  "top-level-permission": [],
  "plugin-list": [],
  "kitchen-sink": ["provider go blacklists gamma, which slot 2 uses"],
  "variant-pinned": ["agent explore-1 pins model openrouter/qwen/qwen3-coder:free; the pool binds it to slot 1's zen/alpha"],
  "unusual-order-unicode": []
}
const NAMES = Object.keys(CASES)

/** The quota-sensing fetch wrappers (issue 12) are functions: the golden files show where they go. */
const WRAPPER = "[opencode-pool quota fetch]"
const serialise = (v: unknown): string => `${JSON.stringify(v, (_k, x: unknown) => (typeof x === "function" ? WRAPPER : x), 2)}\n`
const inputPath = (name: string) => join(DIR, `${name}.input.json`)
const expectedPath = (name: string) => join(DIR, `${name}.expected.json`)
/** A fresh copy of the input, as opencode would hand it over. */
const input = (name: string): Json => JSON.parse(readFileSync(inputPath(name), "utf8")) as Json
const isRecord = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v)
const same = (a: unknown, b: unknown) => expect(JSON.stringify(a)).toBe(JSON.stringify(b))
const without = (v: Json, keys: ReadonlyArray<string>): Json => Object.fromEntries(Object.entries(v).filter(([k]) => !keys.includes(k)))
const variantSlot = (name: string) => {
  for (const base of POOLED_BASES) for (const slot of SLOTS) if (name === `${base}-${slot.index}`) return { base, slot }
  return undefined
}

const { keep } = bootsPerTest()

/** Boots the plugin with the fixed pool and runs the config hook once on `config` (mutated in place); returns the warnings that run logged. */
const runHook = async (config: Json, b?: Booted): Promise<{ b: Booted; warnings: Array<string>; infos: Array<string> }> => {
  if (b === undefined) {
    b = await boot({ models: POOL })
    keep(b)
  }
  const before = b.logs.length
  await b.hooks.config!(config as never)
  const logged = b.logs.slice(before)
  return { b, warnings: logged.filter((l) => l.level === "warn").map((l) => l.message), infos: logged.filter((l) => l.level === "info").map((l) => l.message) }
}

/**
 * The hook's config without the quota-sensing wrappers, after checking they sit exactly where they
 * belong: `provider.<p>.options.fetch` for every provider the user configured and every slot's provider,
 * never a sign-in provider's (issue 12). Blocks and `options` objects created only to hold a wrapper go with it.
 */
const withoutWrappers = (before: Json, hooked: Json): Json => {
  const after = JSON.parse(serialise(hooked)) as Json
  const userProviders = isRecord(before.provider) ? before.provider : {}
  const providers = after.provider
  const signIn = new Set(["anthropic", "openai", "github-copilot", "github-copilot-enterprise"])
  const expected = [...new Set([...Object.keys(userProviders).filter((p) => isRecord(userProviders[p])), ...SLOTS.map((s) => s.provider)])].filter((p) => !signIn.has(p)).sort()
  if (!isRecord(providers)) {
    expect(expected).toEqual([])
    return after
  }
  const wrapped = Object.keys(providers).filter((p) => isRecord(providers[p]) && isRecord((providers[p] as Json).options) && ((providers[p] as Json).options as Json).fetch === WRAPPER)
  expect(wrapped.sort()).toEqual(expected)
  for (const p of wrapped) {
    const block = providers[p] as Json
    const options = block.options as Json
    delete options.fetch
    const mine = isRecord(userProviders[p]) ? (userProviders[p] as Json) : undefined
    if (Object.keys(options).length === 0 && (mine === undefined || !("options" in mine))) delete block.options
    if (Object.keys(block).length === 0 && mine === undefined) delete providers[p]
  }
  if (Object.keys(providers).length === 0 && !("provider" in before)) delete after.provider
  return after
}

/** The shipped definitions with the context map on (the plugin's default), with the writers' edit rules for the user's global permission. */
const shipped = (before: Json): Json => {
  const edit = writerEditRules(before.permission)
  const withEdit = (d: Json): Json => ({ ...d, permission: { ...(isRecord(d.permission) ? d.permission : {}), edit } })
  return {
    ...MAP_BASE_DEFINITIONS,
    implement: withEdit(MAP_BASE_DEFINITIONS.implement!),
    build: withEdit(MAP_DELEGATION_DEFINITIONS.build),
    plan: MAP_DELEGATION_DEFINITIONS.plan,
    general: { permission: { edit } }
  }
}

/**
 * SPEC §4 checked directly on one input and the hook's output: every user key byte-identical (key order
 * included), the only additions the missing bases and variants, the only changes a present variant's
 * `model` and a slot provider's whitelist; `build` and `plan` added only when absent (US-1); with the
 * context map (SPEC §13), `general` with its edit rules and the map's commands, each only when absent.
 */
const checkMerge = (before: Json, hooked: Json) => {
  const after = withoutWrappers(before, hooked)
  const definitions = shipped(before)
  // top-level keys: the same, in the same order; `agent` and `command` appended only when absent; nothing else added
  expect(Object.keys(after)).toEqual([...Object.keys(before), ...("agent" in before ? [] : ["agent"]), ...("command" in before ? [] : ["command"])])
  for (const key of Object.keys(before)) if (key !== "agent" && key !== "provider" && key !== "command") same(after[key], before[key])
  // commands: the user's byte-identical and first, then the map's commands whose names are free
  const userCommands = isRecord(before.command) ? before.command : {}
  const commands = after.command as Json
  expect(Object.keys(commands)).toEqual([...Object.keys(userCommands), ...Object.keys(MAP_COMMANDS).filter((n) => !(n in userCommands))])
  for (const [name, command] of Object.entries(commands)) same(command, name in userCommands ? userCommands[name] : MAP_COMMANDS[name as keyof typeof MAP_COMMANDS])

  const userAgents = isRecord(before.agent) ? before.agent : {}
  const agents = after.agent as Json
  expect(isRecord(agents)).toBe(true)
  // the user's agents come first, in their order
  expect(Object.keys(agents).slice(0, Object.keys(userAgents).length)).toEqual(Object.keys(userAgents))
  for (const [name, mine] of Object.entries(userAgents)) {
    const v = variantSlot(name)
    if (v !== undefined && isRecord(mine)) {
      // a present variant: only its model is set to the slot's
      expect((agents[name] as Json).model).toBe(v.slot.model)
      same(without(agents[name] as Json, ["model"]), without(mine, ["model"]))
    } else {
      same(agents[name], mine)
    }
  }
  // what was added: the absent bases and the absent variants, nothing else
  const added = Object.keys(agents).filter((k) => !(k in userAgents))
  const expectedAdded = [...POOLED_BASES, "build", "plan", "general", ...POOLED_BASES.flatMap((b) => SLOTS.map((s) => `${b}-${s.index}`))].filter((n) => !(n in userAgents))
  expect([...added].sort()).toEqual(expectedAdded.sort())
  // the delegation policy (US-1) and the map's writers (SPEC §13): build, plan and general only where the user has not defined them
  for (const name of ["build", "plan", "general"] as const) if (!(name in userAgents)) same(agents[name], definitions[name])
  for (const base of POOLED_BASES) {
    if (!(base in userAgents)) {
      same(agents[base], definitions[base])
      expect((agents[base] as Json).mode).toBe("subagent")
      expect((agents[base] as Json).model).toBeUndefined()
      expect((agents[base] as Json).prompt).toContain("spawn the same base again")
    }
    const effective = isRecord(agents[base]) ? agents[base] : (definitions[base] as Json)
    for (const slot of SLOTS) {
      const name = `${base}-${slot.index}`
      const variant = agents[name] as Json
      expect(variant.model).toBe(slot.model)
      if (isRecord(userAgents[name])) continue
      // an absent variant: a deep copy of the effective base with hidden, mode, model and a description naming the base
      expect(variant).toMatchObject({ hidden: true, mode: "subagent", model: slot.model })
      expect(variant.description).toContain(`spawn "${base}"`)
      same(without(variant, ["hidden", "mode", "model", "description"]), without(effective, ["hidden", "mode", "model", "description"]))
      if (isRecord(agents[base])) expect(variant).not.toBe(agents[base])
    }
  }

  // providers: untouched except a slot provider's whitelist, which gains the slot's id once
  if (!("provider" in before)) return
  const providers = after.provider as Json
  const userProviders = before.provider
  if (!isRecord(userProviders)) return same(providers, userProviders)
  expect(Object.keys(providers)).toEqual(Object.keys(userProviders))
  for (const [id, block] of Object.entries(userProviders)) {
    const slot = SLOTS.find((s) => s.provider === id)
    if (slot === undefined || !isRecord(block) || !Array.isArray(block.whitelist)) {
      same(providers[id], block)
      continue
    }
    const out = providers[id] as Json
    same(without(out, ["whitelist"]), without(block, ["whitelist"]))
    same(out.whitelist, block.whitelist.includes(slot.id) ? block.whitelist : [...block.whitelist, slot.id])
  }
}

describe("config hook golden files: merges, never clobbers (SPEC §4)", () => {
  it("US-16 at least ten configs are covered, each with an input and (unless regenerating) a golden file", () => {
    expect(NAMES.length).toBeGreaterThanOrEqual(10)
    const onDisk = readdirSync(DIR)
      .filter((f) => f.endsWith(".input.json"))
      .map((f) => f.slice(0, -".input.json".length))
    expect(onDisk.sort()).toEqual([...NAMES].sort())
    if (!UPDATE) for (const name of NAMES) expect(existsSync(expectedPath(name)), `${name}.expected.json is missing: run with UPDATE_GOLDEN=1`).toBe(true)
  })

  it("US-16 the opencode-1.18.33 input is the recorded config hook sample of opencode 1.18.33", () => {
    const samples = JSON.parse(readFileSync(fileURLToPath(new URL("../fixtures/opencode-1.18.33/hook-samples.json", import.meta.url)), "utf8")) as Record<string, { input: unknown }>
    expect(input("opencode-1.18.33")).toEqual(samples.config!.input)
  })

  describe.each(NAMES)("%s", (name) => {
    it(`US-16 ${name}: the hook's result equals ${name}.expected.json byte for byte, with the expected warnings and one info line`, async () => {
      const config = input(name)
      const { warnings, infos } = await runHook(config)
      const text = serialise(config)
      if (UPDATE) writeFileSync(expectedPath(name), text)
      expect(text).toBe(readFileSync(expectedPath(name), "utf8"))
      expect(warnings).toEqual(CASES[name])
      // one info line binds the slots; a sign-in provider the user configured is named once as not sensed
      const signIn = Object.keys(isRecord(input(name).provider) ? (input(name).provider as Json) : {}).filter((p) => p === "anthropic" || p === "openai")
      expect(infos).toEqual([INFO, ...signIn.sort().map((p) => `provider ${p} has a fetch of its own (a sign-in plugin's or a config's); its rate-limit headers are not read`)])
    })

    it(`US-16 ${name}: every user-defined key is byte-identical after the hook; only the changes of §4 are made`, async () => {
      const before = input(name)
      const config = input(name)
      await runHook(config)
      checkMerge(before, config)
      // the golden file passes the same check (it cannot drift into a clobber)
      if (existsSync(expectedPath(name))) checkMerge(before, JSON.parse(readFileSync(expectedPath(name), "utf8")) as Json)
    })

    it(`US-16 ${name}: a second run in the same boot and a run in a fresh boot change nothing, and warn no more`, async () => {
      const config = input(name)
      const first = await runHook(config)
      const once = serialise(config)
      const again = await runHook(config, first.b)
      expect(serialise(config)).toBe(once)
      // the pinned variant now holds its slot's model: nothing left to warn about
      expect(again.warnings).toEqual(CASES[name]!.filter((w) => w.startsWith("provider ")))
      const fresh = input(name)
      await runHook(fresh)
      expect(serialise(fresh)).toBe(once)
      // a fresh boot fed the result gives it back unchanged too
      await runHook(config)
      expect(serialise(config)).toBe(once)
    })

    for (const [how, options, env] of [
      ["enabled:false", { enabled: false, models: POOL }, {}],
      ["OCPOOL_DISABLE=1", { models: POOL }, { OCPOOL_DISABLE: "1" }]
    ] as const) {
      it(`US-17 ${name}: with ${how} the config is left deep-equal and no file is created in HOME, the state dir or the project`, async () => {
        const { config, home, project } = await withTempHome(env, async (project) => {
          const config = input(name)
          const hooks = await opencodePool({ client: undefined, directory: project } as never, structuredClone(options) as never)
          try {
            await hooks.config?.(config as never)
          } finally {
            await (hooks as { dispose?: () => Promise<void> }).dispose?.()
          }
          return { config }
        })
        same(config, input(name))
        expect(config).toEqual(input(name))
        expect(readdirSync(home)).toEqual([])
        expect(readdirSync(project)).toEqual([])
      })
    }
  })

  it("US-17 control: the same entry, not switched off, does inject and does create its directories under the temp HOME", async () => {
    const { config, home } = await withTempHome({}, async (project) => {
      const config = input("empty")
      const hooks = await opencodePool({ client: undefined, directory: project } as never, { models: POOL, logLevel: "warn" } as never)
      try {
        await hooks.config!(config as never)
      } finally {
        await (hooks as { dispose?: () => Promise<void> }).dispose?.()
      }
      return { config }
    })
    expect(Object.keys(config.agent as Json)).toContain("explore-1")
    expect(readdirSync(home).length).toBeGreaterThan(0)
  })
})

/**
 * Runs `f` with HOME pointing at an empty temp dir and the XDG variables unset (so every default
 * directory of the plugin lies under it), and `extra` set in process.env; restores everything after.
 */
const withTempHome = async <A extends object>(extra: Readonly<Record<string, string>>, f: (project: string) => Promise<A>): Promise<A & { home: string; project: string }> => {
  const root = tmp("ocpool-golden-")
  const home = join(root, "home")
  const project = join(root, "project")
  mkdirSync(home)
  mkdirSync(project)
  const keys = ["HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR", "OCPOOL_DISABLE", "OCPOOL_TRACE", "OCPOOL_STATE_DIR", "OCPOOL_NOTIFY_HOST", ...Object.keys(extra)]
  const saved = Object.fromEntries(keys.map((k) => [k, process.env[k]]))
  for (const k of keys) delete process.env[k]
  process.env.HOME = home
  Object.assign(process.env, extra)
  try {
    return { ...(await f(project)), home, project }
  } finally {
    for (const k of keys) {
      if (saved[k] === undefined) delete process.env[k]
      else process.env[k] = saved[k]
    }
  }
}
