/**
 * Counters through the plugin's real hooks (issue 36) over a temp state directory's `state.db`: spawns,
 * a 429 on a pooled child and its abort, a release, two heavy commands taking turns; what the engines
 * counted is read back through the shared-state port (`read(now, { counters: true })`), per host. The
 * option `metrics: false` writes none; a new engine on the same directory adds to what is there. The
 * pool engine writes its counts at most once a second, and what it holds when it stops.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { CounterRow } from "../../src/core/metrics/counters.js"
import { AppLogMemory } from "../../src/layers/opencode/AppLogMemory.js"
import { sharedStateLayer } from "../../src/layers/state/sharedStateLayer.js"
import { StateDirFile } from "../../src/layers/state/StateDirFile.js"
import { SharedState } from "../../src/services/state/SharedState.js"
import { bootsPerTest, childCreated, event, POOL2, settle, sleep, spawn, type Booted } from "./boot.js"

const { start, forget } = bootsPerTest()

/** Every host's counters in `dir`'s state.db, through the port as `ocpool metrics` reads them (a view: it writes nothing). */
const countersIn = (dir: string): Promise<ReadonlyArray<CounterRow>> =>
  Effect.runPromise(
    Effect.scoped(Effect.flatMap(SharedState, (s) => Effect.map(s.read(Date.now(), { counters: true }), (snap) => snap.counters))).pipe(
      Effect.provide(sharedStateLayer({ backend: "sqlite", lockWaitMs: 250, view: true }).pipe(Layer.provide(StateDirFile(dir)), Layer.provide(AppLogMemory([]))))
    )
  )

/** `name{labels}` → value, over every host (one host here). */
const byName = (rows: ReadonlyArray<CounterRow>): Record<string, number> =>
  Object.fromEntries(rows.map((r) => [`${r.name}{${r.labels.join(",")}}`, r.value]))

const assistantError = (b: Booted, session: string, error: unknown, model = "zen/alpha") =>
  event(b, "message.updated", { info: { id: "msg_1", sessionID: session, role: "assistant", providerID: model.split("/")[0], modelID: model.split("/")[1], error } })

const taskEnd = (b: Booted, session: string, call: string) =>
  b.hooks["tool.execute.after"]!({ tool: "task", sessionID: session, callID: call, args: {} }, { title: "", output: "", metadata: {} })

const bash = (session: string, call: string, command: string) => ({
  input: { tool: "bash", sessionID: session, callID: call },
  output: { args: { command, description: "run" } }
})
const before = (b: Booted, c: ReturnType<typeof bash>) => b.hooks["tool.execute.before"]!(c.input as never, c.output as never)
const after = (b: Booted, c: ReturnType<typeof bash>) => b.hooks["tool.execute.after"]!({ ...c.input, args: c.output.args } as never, { title: "run", output: "ok\n", metadata: {} } as never)

/** A day's work in small: two spawns, a 429 on the first child (cooled, aborted, released), the second ended, two heavy commands in turn. */
const work = async (b: Booted) => {
  expect(await spawn(b, "p", "c1")).toBe("explore-1")
  await childCreated(b, "s1", "p", "explore-1")
  await assistantError(b, "s1", { name: "APIError", data: { statusCode: 429, message: "Slow down" } })
  await settle(b)
  expect(await spawn(b, "p", "c2")).toBe("explore-2")
  await taskEnd(b, "p", "c2")
  const first = bash("ses_a", "call_1", "npm test")
  const second = bash("ses_b", "call_2", "cargo build")
  await before(b, first)
  const waiting = before(b, second)
  await sleep(300)
  await after(b, first)
  await waiting
  await after(b, second)
}

describe("US-53 counters through the plugin's hooks", () => {
  it("US-53 spawns, a 429 and its abort, and a permit wait are counted in state.db per host, read back through the port", async () => {
    const b = await start({ models: POOL2, permits: { heavy: 1 } })
    await work(b)
    // the engine writes its counts at most once a second; what it holds when it goes quiet, a second after its last write
    await sleep(1_300)
    const rows = await countersIn(b.stateDir)
    expect(new Set(rows.map((r) => r.host)).size).toBe(1)
    const c = byName(rows)
    expect(c).toMatchObject({
      "routes_total{explore,first}": 2,
      "limits_total{zen,rate_limit}": 1,
      "cooldowns_total{rate_limit}": 1,
      "aborts_total{ok}": 1,
      "permit_requests_total{heavy}": 2,
      "permit_grants_total{heavy}": 2,
      "permit_wait_seconds_count{heavy}": 2,
      "permit_wait_seconds_bucket{heavy,1}": 2
    })
    // the second command waited for the first: the histogram's sum holds its wait
    expect(c["permit_wait_seconds_sum{heavy}"]).toBeGreaterThanOrEqual(0.25)
    // bounded labels only: no session, call or claim id
    for (const r of rows) for (const l of r.labels) expect(l).not.toMatch(/^(p|s1|ses_|call_|p:c)/)
  })

  it("US-53 option metrics: false writes no counter, and the work is decided the same", async () => {
    const b = await start({ models: POOL2, permits: { heavy: 1 }, metrics: false })
    await work(b)
    expect(await countersIn(b.stateDir)).toEqual([])
  })

  it("US-53 counters survive a restart: a new engine on the same state directory adds to them", async () => {
    const a = await start({ models: POOL2 })
    await spawn(a, "p", "c1")
    await taskEnd(a, "p", "c1")
    await a.hooks.dispose?.()
    forget(a)
    expect(byName(await countersIn(a.stateDir))["routes_total{explore,first}"]).toBe(1)
    const b = await start({ models: POOL2, stateDir: a.stateDir })
    await spawn(b, "p", "c2")
    await spawn(b, "p", "c3", "implement")
    // the first spawn's count is written at once, the next held: it goes when the engine stops
    await b.hooks.dispose?.()
    forget(b)
    expect(byName(await countersIn(a.stateDir))).toEqual({ "routes_total{explore,first}": 2, "routes_total{implement,first}": 1 })
  })

  it("US-53 an engine that went quiet writes what it holds a second after its last write, in a commit of its own", async () => {
    const b = await start({ models: POOL2 })
    await spawn(b, "p", "c1")
    await spawn(b, "p", "c2")
    await spawn(b, "p", "c3", "implement")
    // the first spawn's count went with its claim; the others are held
    expect(byName(await countersIn(b.stateDir))).toEqual({ "routes_total{explore,first}": 1 })
    await sleep(1_300)
    expect(byName(await countersIn(b.stateDir))).toEqual({ "routes_total{explore,first}": 2, "routes_total{implement,second}": 1 })
  })
})
