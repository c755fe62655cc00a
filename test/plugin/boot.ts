/** Boots the plugin from sources over real files in a temp state dir, with a collecting log and a scripted abort client. */
import { afterEach, beforeEach } from "@effect/vitest"
import { type Clock, Effect, Layer } from "effect"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseSettings } from "../../src/core/options.js"
import { AbortClientMemory } from "../../src/layers/opencode/AbortClientMemory.js"
import { AppLogMemory } from "../../src/layers/opencode/AppLogMemory.js"
import { NotifierMemory, type MemoryClose, type MemoryOutcome, type MemorySend } from "../../src/layers/notify/NotifierMemory.js"
import { SessionLookupMemory } from "../../src/layers/opencode/SessionLookupMemory.js"
import type { SessionFacts } from "../../src/services/opencode/SessionLookup.js"
import { makeHooks } from "../../src/plugin/hooks.js"
import { liveLayer, type LayerOverrides } from "../../src/plugin/live.js"
import type { LogLevel } from "../../src/services/opencode/AppLog.js"

export const tmp = (prefix = "ocpool-plugin-") => mkdtempSync(join(tmpdir(), prefix))

export interface Booted {
  readonly hooks: Awaited<ReturnType<typeof makeHooks>>
  readonly logs: Array<{ level: LogLevel; message: string }>
  readonly aborts: Array<string>
  readonly stateDir: string
  readonly dir: string
  /** Notifications raised and closed (a recording notifier: no popup is ever shown). */
  readonly sends: Array<MemorySend>
  readonly closes: Array<MemoryClose>
  /** Sessions `session.get` knows, and the lookups made. */
  readonly known: Map<string, SessionFacts>
  readonly lookups: Array<string>
}

/** `clock`: the plugin runs on it (a test's `TestClock`, so `TestClock.adjust` moves the plugin's time too); the live clock when absent. */
export const boot = async (
  options: Record<string, unknown> = {},
  abortOutcomes: Array<string> = ["ok"],
  env: Record<string, string | undefined> = {},
  abortLatencyMs = 0,
  clock?: Clock.Clock,
  notifyOutcomes: Array<MemoryOutcome> = ["ok"],
  overrides: Pick<LayerOverrides, "prices" | "prompt" | "wrapState" | "keyEndpoint"> & { readonly project?: string } = {}
): Promise<Booted> => {
  const { project, ...layerOverrides } = overrides
  const dir = project ?? tmp()
  const stateDir = (options.stateDir as string | undefined) ?? join(dir, "state")
  const logs: Booted["logs"] = []
  const aborts: Array<string> = []
  const { settings, warnings } = parseSettings({ reapMs: 3_600_000, ...options, stateDir }, env)
  const sends: Array<MemorySend> = []
  const closes: Array<MemoryClose> = []
  const known = new Map<string, SessionFacts>()
  const lookups: Array<string> = []
  const layer = liveLayer({ client: undefined, directory: dir }, settings, {
    log: AppLogMemory(logs),
    abort: AbortClientMemory(abortOutcomes, aborts, abortLatencyMs),
    notifier: NotifierMemory(notifyOutcomes, sends, closes),
    lookup: SessionLookupMemory(known, lookups),
    ...layerOverrides
  })
  // `project`: the context map's refresh runs in that directory (issue 23); other tests record no context line
  const hooks = await makeHooks(clock === undefined ? layer : Layer.merge(layer, Layer.setClock(clock)), { settings, warnings, env, ...(project === undefined ? {} : { directory: project }) })
  return { hooks, logs, aborts, stateDir, dir, sends, closes, known, lookups }
}

export const POOL2 = { slots: [{ model: "zen/alpha", weight: 1 }, { model: "go/gamma", weight: 1 }] }

/** A `task` call through `tool.execute.before`; returns the rewritten agent. */
export const spawn = async (b: Booted, session: string, call: string, base = "explore"): Promise<string> => {
  const output = { args: { description: "d", prompt: "p", subagent_type: base } as Record<string, unknown> }
  await b.hooks["tool.execute.before"]!({ tool: "task", sessionID: session, callID: call }, output)
  return output.args.subagent_type as string
}

export const event = (b: Booted, type: string, properties: Record<string, unknown>) => b.hooks.event!({ event: { type, properties } as never })

export const childCreated = (b: Booted, id: string, parentID: string, agent: string) =>
  event(b, "session.created", { sessionID: id, info: { id, parentID, agent, title: `x (@${agent} subagent)` } })

/** Waits until every abort the engine started has come back with its outcome. */
export const settle = (b: Booted) => Effect.runPromise(b.hooks.engine.settle)

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * For a test file: each test gets a fresh XDG_CONFIG_HOME (no pool.txt of the machine running the
 * tests can reach the plugin), and every plugin booted through `start`, or handed to `keep`, is
 * disposed after the test (`forget` one the test disposed itself).
 */
export const bootsPerTest = () => {
  let booted: Array<Booted> = []
  const saved = process.env.XDG_CONFIG_HOME
  beforeEach(() => {
    process.env.XDG_CONFIG_HOME = tmp("ocpool-config-")
  })
  afterEach(async () => {
    for (const b of booted) await b.hooks.dispose?.()
    booted = []
    if (saved === undefined) delete process.env.XDG_CONFIG_HOME
    else process.env.XDG_CONFIG_HOME = saved
  })
  const keep = (b: Booted): Booted => {
    booted.push(b)
    return b
  }
  return {
    start: async (...args: Parameters<typeof boot>): Promise<Booted> => keep(await boot(...args)),
    keep,
    forget: (b: Booted): void => {
      booted = booted.filter((x) => x !== b)
    }
  }
}
