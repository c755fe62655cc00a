/**
 * opencode-pool inside the real opencode 1.18.33 (offline, fake provider): routing, cooling, hang and
 * spin recovery, refusal, a budget shared by two servers, and the off switch. `npm run test:e2e`.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { allClaimsIn, cooldownIn } from "../support/stateDb.js"
import { replayText } from "../../src/core/trace/replay.js"
import { fakeConfig, type OpencodeHandle } from "./harness.js"
import { until } from "./flows.js"
import { e2eWorld } from "./world.js"

const root = new URL("../../", import.meta.url).pathname
const PLUGIN = join(root, "dist/opencode-plugin.js")
const TURN_MS = 60_000
const POOL = { slots: [{ model: "fakeB/pool-b", weight: 1 }, { model: "fakeB/pool-c", weight: 1 }] }

const world = e2eWorld()

const start = (options: Record<string, unknown> = {}, extra: { env?: Record<string, string | undefined>; home?: string; plugin?: boolean } = {}) =>
  world.start({
    configJson: fakeConfig({ fakeUrl: world.fake.url }),
    pluginPaths: extra.plugin === false ? [] : [[PLUGIN, { models: POOL, ...options }]],
    ...(extra.env === undefined ? {} : { env: extra.env }),
    ...(extra.home === undefined ? {} : { home: extra.home })
  })

/** Prompts a new root session to spawn the given subagents; returns the session and the children it created. */
const spawnTasks = async (oc: OpencodeHandle, tasks: ReadonlyArray<{ agent: string; prompt: string }>, wait: "idle" | "children" = "idle") => {
  const session = await oc.createSession()
  const text = `spawn ${tasks.map((t) => `[[task:${t.agent}:${t.prompt}]]`).join(" ")}`
  const mark = await oc.prompt(session.id, text)
  const children: Array<string> = []
  for (let i = 0; i < tasks.length; i++) {
    const e = await oc.waitForEvent((ev) => ev.type === "session.created" && ev.properties["info"]?.parentID === session.id && !children.includes(String(ev.properties["info"].id)), TURN_MS, mark)
    children.push(String(e.properties["info"].id))
  }
  if (wait === "idle") await oc.waitIdle(session.id, mark, TURN_MS)
  return { session: session.id, children, mark }
}

const childModel = async (oc: OpencodeHandle, child: string): Promise<string | undefined> => {
  const deadline = Date.now() + TURN_MS
  while (Date.now() < deadline) {
    const messages = await oc.messages(child)
    const a = messages.find((m) => m.info.role === "assistant")
    if (a !== undefined) return `${a.info["providerID"]}/${a.info["modelID"]}`
    await new Promise((r) => setTimeout(r, 100))
  }
  return undefined
}

const claimsIn = (oc: OpencodeHandle): Readonly<Record<string, { model: string; targetSession: string | null }>> => allClaimsIn(oc.stateDir)

const cooldownOf = (oc: OpencodeHandle, model: string) => cooldownIn(oc.stateDir, model)


describe("opencode-pool in the real opencode 1.18.33", () => {
  it("US-5 (a) a task spawn of explore runs on the slot-1 variant's model and the claim is released after", async () => {
    const oc = await start()
    const { children } = await spawnTasks(oc, [{ agent: "explore", prompt: "say hi" }])
    expect(await childModel(oc, children[0]!)).toBe("fakeB/pool-b")
    const agents = (await oc.request("GET", "/agent")).body as Array<{ name: string }>
    expect(agents.map((a) => a.name)).toEqual(expect.arrayContaining(["explore", "explore-1", "explore-2", "implement-1", "context-2"]))
    expect(await until(() => claimsIn(oc), (c) => Object.keys(c).length === 0, 10_000)).toEqual({})
  })

  it("US-5 (b) with slot 1 at its weight, the next spawn runs on slot 2", async () => {
    const oc = await start()
    const first = await spawnTasks(oc, [{ agent: "explore", prompt: "hold [[fake:hang]]" }], "children")
    expect(await until(() => claimsIn(oc), (c) => Object.values(c).some((x) => x.targetSession === first.children[0]), 10_000)).not.toEqual({})
    const second = await spawnTasks(oc, [{ agent: "explore", prompt: "say hi" }])
    expect(await childModel(oc, second.children[0]!)).toBe("fakeB/pool-c")
    await oc.abort(first.session)
  })

  it("US-4 (c) a 429 with retry-after 120 on slot 1's model cools it until about now+120 s and the next spawn goes to slot 2", async () => {
    const oc = await start()
    const t0 = Date.now()
    const first = await spawnTasks(oc, [{ agent: "explore", prompt: "limited [[fake:429:120]]" }], "children")
    const cd = await until(() => cooldownOf(oc, "fakeB/pool-b"), (c) => c !== undefined, 30_000)
    expect(cd).toMatchObject({ reason: "rate_limit", strikes: 1 })
    expect(cd!.until).toBeGreaterThanOrEqual(t0 + 110_000)
    expect(cd!.until).toBeLessThanOrEqual(Date.now() + 125_000)
    expect(await until(() => claimsIn(oc), (c) => Object.keys(c).length === 0, 20_000)).toEqual({})
    const second = await spawnTasks(oc, [{ agent: "explore", prompt: "say hi" }])
    expect(await childModel(oc, second.children[0]!)).toBe("fakeB/pool-c")
    await oc.abort(first.session)
  })

  it("US-4 (c2) `ocpool cool clear` in another process makes the next pick in the running opencode use that model again", async () => {
    const oc = await start()
    const first = await spawnTasks(oc, [{ agent: "explore", prompt: "limited [[fake:429:120]]" }], "children")
    expect(await until(() => cooldownOf(oc, "fakeB/pool-b"), (c) => c !== undefined, 30_000)).toMatchObject({ reason: "rate_limit", strikes: 1 })
    expect(await until(() => claimsIn(oc), (c) => Object.keys(c).length === 0, 20_000)).toEqual({})
    const cleared = spawnSync(process.execPath, [join(root, "bin/ocpool.js"), "cool", "clear", "fakeB/pool-b", "--state-dir", oc.stateDir], { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } })
    expect([cleared.status, cleared.stdout]).toEqual([0, expect.stringMatching(/^cleared fakeB\/pool-b \(rate_limit, strike 1, was until \d\d:\d\dZ\)\n$/)])
    const second = await spawnTasks(oc, [{ agent: "explore", prompt: "say hi" }])
    expect(await childModel(oc, second.children[0]!)).toBe("fakeB/pool-b")
    await oc.abort(first.session)
  })

  it("US-4 (c3) an upgrade: opencode started on a state directory an earlier version wrote keeps its cooldown (imported into state.db)", async () => {
    const state = join(mkdtempSync(join(tmpdir(), "ocpool-e2e-upgrade-")), "state")
    mkdirSync(state, { mode: 0o700 })
    const now = Date.now()
    writeFileSync(join(state, "cooldown.fakeB_2fpool-b.json"), JSON.stringify({ version: 1, model: "fakeB/pool-b", reason: "quota", strikes: 3, scope: "model", since: now - 60_000, until: now + 6 * 3_600_000, source: "flat" }), { mode: 0o600 })
    const oc = await start({}, { env: { OCPOOL_STATE_DIR: state } })
    const first = await spawnTasks(oc, [{ agent: "explore", prompt: "say hi" }])
    expect(await childModel(oc, first.children[0]!)).toBe("fakeB/pool-c")
    expect(cooldownOf(oc, "fakeB/pool-b")).toMatchObject({ reason: "quota", strikes: 3 })
    expect(existsSync(join(state, "cooldown.fakeB_2fpool-b.json.imported"))).toBe(true)
  })

  it("US-8 (d) a hanging child is aborted by the reaper, confirmed, released, and its model cooled", async () => {
    const oc = await start({ reapMs: 1000, hangMinAgeMs: 1000, hangSilenceMs: 1000 })
    const { children } = await spawnTasks(oc, [{ agent: "explore", prompt: "hang here [[fake:hang]]" }], "children")
    const cd = await until(() => cooldownOf(oc, "fakeB/pool-b"), (c) => c !== undefined, 30_000)
    expect(cd).toMatchObject({ reason: "hang", strikes: 0 })
    expect(await until(() => claimsIn(oc), (c) => Object.keys(c).length === 0, 10_000)).toEqual({})
    const status = await oc.status()
    expect(status[children[0]!]?.type ?? "idle").toBe("idle")
    const hung = (await world.fake.requests()).filter((r) => r.behavior === "hang")
    expect(hung.some((r) => r.closedAt !== undefined)).toBe(true)
  })

  it("US-5 (e) a hand-named explore-2 spawn is refused with a message naming explore", async () => {
    const oc = await start()
    const session = (await oc.createSession()).id
    const mark = await oc.prompt(session, "spawn [[task:explore-2:by hand]]")
    await oc.waitIdle(session, mark, TURN_MS)
    const messages = await oc.messages(session)
    const parts = messages.flatMap((m) => m.parts as Array<{ type: string; tool?: string; state?: { status?: string; error?: string } }>)
    const task = parts.find((p) => p.type === "tool" && p.tool === "task")
    expect(task?.state?.status).toBe("error")
    expect(task?.state?.error).toContain('spawn "explore"')
    expect(claimsIn(oc)).toEqual({})
    expect(oc.events.some((e) => e.type === "session.created" && e.properties["info"]?.parentID === session)).toBe(false)
  })

  it("US-47 (f) a provider answering empty streams is detected as spinning and stopped", async () => {
    const oc = await start()
    const { children, session } = await spawnTasks(oc, [{ agent: "explore", prompt: "spin [[fake:empty]]" }], "children")
    const cd = await until(() => cooldownOf(oc, "fakeB/pool-b"), (c) => c !== undefined, 30_000)
    expect(cd).toMatchObject({ reason: "hang" })
    const status = await until(() => oc.status(), (s) => (s[children[0]!]?.type ?? "idle") === "idle", 10_000)
    expect(status[children[0]!]?.type ?? "idle").toBe("idle")
    await oc.abort(session)
  })

  it("US-40 (g) two opencode servers on one state dir share one budget", async () => {
    const a = await start()
    const b = await start({}, { env: { OCPOOL_STATE_DIR: a.stateDir } })
    const first = await spawnTasks(a, [{ agent: "explore", prompt: "hold [[fake:hang]]" }], "children")
    await until(() => claimsIn(a), (c) => Object.values(c).some((x) => x.targetSession === first.children[0]), 10_000)
    const second = await spawnTasks(b, [{ agent: "explore", prompt: "say hi" }])
    expect(await childModel(b, second.children[0]!)).toBe("fakeB/pool-c")
    await a.abort(first.session)
  })

  it("US-45 a trace recorded inside opencode (OCPOOL_TRACE, %p) replays to its own decisions with ocpool replay --expect", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ocpool-e2e-trace-"))
    const oc = await start({}, { env: { OCPOOL_TRACE: join(dir, "pool-%p.jsonl") } })
    await spawnTasks(oc, [{ agent: "explore", prompt: "say hi" }])
    const limited = await spawnTasks(oc, [{ agent: "explore", prompt: "limited [[fake:429:120]]" }], "children")
    await until(() => cooldownOf(oc, "fakeB/pool-b"), (c) => c !== undefined, 30_000)
    await oc.abort(limited.session)
    const trace = join(dir, `pool-${oc.pid}.jsonl`)
    // a line whose handling aborts is written once the abort's outcome is known (TRACE.md §4)
    await until(() => readFileSync(trace, "utf8"), (t) => t.includes('"type":"retry"'), 10_000)
    const types = readFileSync(trace, "utf8").trim().split("\n").map((l) => (JSON.parse(l) as { type: string }).type)
    expect(types[0], types.join(",")).toBe("pool")
    expect(types).toEqual(expect.arrayContaining(["spawn", "bind", "release", "retry"]))
    const r = spawnSync(process.execPath, [join(root, "bin/ocpool.js"), "replay", trace, "--expect", `${trace}.decisions.jsonl`], { encoding: "utf8" })
    expect(r.status).toBe(0)
    expect(readFileSync(`${trace}.decisions.jsonl`, "utf8")).toContain('"type":"cool","models":["fakeB/pool-b"]')
  })

  it("US-45 US-8 a recording made while three children run at once, one hangs and one gets a 429, replays with --expect; its routes, aborts and cooldowns are what opencode, the fake provider and the state dir saw", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ocpool-e2e-trace-"))
    const oc = await start({ reapMs: 1000, hangMinAgeMs: 4000, hangSilenceMs: 3000 }, { env: { OCPOOL_TRACE: join(dir, "pool-%p.jsonl") } })
    const { session, children } = await spawnTasks(
      oc,
      [
        { agent: "explore", prompt: "say hi" },
        { agent: "explore", prompt: "hang here [[fake:hang]]" },
        { agent: "explore", prompt: "limited [[fake:429:120]]" }
      ],
      "children"
    )
    const trace = join(dir, `pool-${oc.pid}.jsonl`)
    const lines = () => (existsSync(trace) ? readFileSync(trace, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>) : [])
    // both aborts have come back: one for the hang, one for the 429
    await until(lines, (ls) => ls.filter((l) => l.type === "aborted" && l.ok === true).length >= 2, 60_000)
    await until(() => claimsIn(oc), (c) => Object.keys(c).length === 0, 30_000)
    await oc.abort(session)
    const text = readFileSync(trace, "utf8")
    const r = spawnSync(process.execPath, [join(root, "bin/ocpool.js"), "replay", trace, "--expect", `${trace}.decisions.jsonl`], { encoding: "utf8" })
    expect(r.status, r.stderr).toBe(0)
    const replay = replayText(text)
    const decisions = replay.decisions
    // routes: each bound child ran on the model its route named
    const binds = lines().filter((l) => l.type === "bind")
    for (const d of decisions) {
      if (d.type !== "route") continue
      const child = binds.find((b) => b.claim === d.claim)?.session as string | undefined
      expect(child, `claim ${d.claim} was bound`).toBeDefined()
      expect(await childModel(oc, child!)).toBe(d.model)
    }
    // aborts: the hung child and the limited child, each confirmed stopped
    const aborted = decisions.flatMap((d) => (d.type === "abort" && d.ok ? [d.session] : []))
    expect(aborted.length).toBe(2)
    for (const s of aborted) expect(children).toContain(s)
    const status = await oc.status()
    for (const s of aborted) expect(status[s]?.type ?? "idle").toBe("idle")
    expect(decisions.some((d) => d.type === "release" && d.reason === "hung")).toBe(true)
    expect(decisions.some((d) => d.type === "cool" && d.reason === "rate_limit")).toBe(true)
    expect((await world.fake.requests()).some((x) => x.behavior === "hang" && x.closedAt !== undefined)).toBe(true)
    // cooldowns: the state dir holds what the machine holds
    for (const model of ["fakeB/pool-b", "fakeB/pool-c"]) {
      const mine = replay.state.cooldowns.get(model)
      const file = cooldownOf(oc, model)
      expect(file === undefined ? undefined : [file.reason, file.until, file.strikes]).toEqual(mine === undefined ? undefined : [mine.reason, mine.until, mine.strikes])
    }
  })

  it("US-17 (h) OCPOOL_DISABLE=1 leaves opencode's agents and behaviour untouched", async () => {
    const oc = await start({}, { env: { OCPOOL_DISABLE: "1" } })
    const agents = (await oc.request("GET", "/agent")).body as Array<{ name: string }>
    expect(agents.map((x) => x.name).filter((n) => /^(explore|implement|context)-\d+$/.test(n))).toEqual([])
    const { children } = await spawnTasks(oc, [{ agent: "explore", prompt: "say hi" }])
    expect(await childModel(oc, children[0]!)).toBe("fakeB/pool-b")
    expect(existsSync(oc.stateDir)).toBe(false)
  })
})
