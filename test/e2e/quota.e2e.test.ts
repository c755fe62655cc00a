/**
 * Quota sensing (issue 12, US-48) inside the real opencode 1.18.33 (offline, fake provider): a slot
 * model whose successful response states that its requests are down to the reserve is cooled as
 * `quota_low` before it ever answers 429, so the next spawn goes to the next slot; `ocpool status` and
 * `ocpool quota` show it. A response with plenty left cools nothing. `npm run test:e2e`.
 */
import { beforeAll, describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { cooldownIn } from "../support/stateDb.js"
import { exploreTree } from "./flows.js"
import { e2eWorld } from "./world.js"
import { fakeConfig, type FakeLlm, type FakeRequest, type OpencodeHandle, type PluginEntry } from "./harness.js"

const ROOT = new URL("../../", import.meta.url).pathname
const CLI = join(ROOT, "bin/ocpool.js")
const TURN_MS = 60_000
const SLOTS = ["fakeB/pool-b", "fakeB/pool-c"]
const PLUGIN_ENTRY: PluginEntry = [join(ROOT, "dist/opencode-plugin.js"), { models: { slots: SLOTS.map((model) => ({ model, weight: 1 })) } }]

const world = e2eWorld(60)
let fake: FakeLlm
beforeAll(() => {
  fake = world.fake
})

const start = () => world.start({ configJson: fakeConfig({ fakeUrl: fake.url }), pluginPaths: [PLUGIN_ENTRY] })

/** A root session that spawns one `explore` with `prompt`; returns the root, the child and the fake's request sequence before the prompt. */
const spawnExplore = async (oc: OpencodeHandle, prompt: string) => {
  const before = (await fake.health()).requests
  const { session, child } = await exploreTree(oc, prompt, TURN_MS)
  return { session, child, before }
}

/** The child's first assistant message: its model and its text. */
const childReply = async (oc: OpencodeHandle, child: string): Promise<{ model: string; text: string } | undefined> => {
  const deadline = Date.now() + TURN_MS
  while (Date.now() < deadline) {
    const a = (await oc.messages(child)).find((m) => m.info.role === "assistant" && m.info["time"]?.completed !== undefined)
    if (a !== undefined) {
      const text = a.parts.filter((p) => p.type === "text").map((p) => String(p["text"] ?? "")).join("")
      return { model: `${a.info["providerID"]}/${a.info["modelID"]}`, text }
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  return undefined
}

interface Cooldown {
  readonly reason: string
  readonly strikes: number
  readonly until: number
}
/** `model`'s cooldown in the state dir's database, if any. */
const cooldownOf = (oc: OpencodeHandle, model: string): Cooldown | undefined => cooldownIn(oc.stateDir, model)
const POLL = { timeout: 10_000, interval: 100 }

/** The built CLI over this server's state dir, with a pool file naming the same two slots. */
const ocpool = (oc: OpencodeHandle, args: ReadonlyArray<string>) => {
  const pool = join(oc.home, "quota-e2e-pool.txt")
  writeFileSync(pool, SLOTS.join("\n") + "\n")
  const withPool = args[0] === "status" ? [...args, "--pool", pool] : args
  return spawnSync(process.execPath, [CLI, ...withPool, "--state-dir", oc.stateDir], { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } })
}

/** A child's provider requests: the ones whose first user text is its prompt (the root's carry the whole directive). */
const requestsOf = (requests: ReadonlyArray<FakeRequest>, prompt: string) => requests.filter((r) => r.firstUserText === prompt)

describe("quota sensing in the real opencode 1.18.33 (US-48)", () => {
  it("US-48 a 200 stating 1 of 100 requests left cools slot 1 as quota_low before any 429; the next spawn runs on slot 2; status and quota show it", async () => {
    const oc = await start()
    const t0 = Date.now()
    const low = "nearly out [[fake:ratelimit:1/100/120]]"
    const first = await spawnExplore(oc, low)

    // the child ran on slot 1, its reply is the fake's text (the wrapper returned the response untouched)
    const sent = requestsOf(await fake.requests(first.before), low)
    const limited = sent.find((r) => r.behavior === "ratelimit")
    expect(limited, JSON.stringify(sent)).toBeDefined()
    expect(limited).toMatchObject({ provider: "fakeB", model: "pool-b", status: 200 })
    expect(limited!.extraHeaders).toEqual({ "x-ratelimit-remaining-requests": "1", "x-ratelimit-limit-requests": "100", "x-ratelimit-reset-requests": "120s" })
    const reply = await childReply(oc, first.child)
    expect(reply).toEqual({ model: "fakeB/pool-b", text: limited!.replyText })
    expect(reply!.text).toMatch(/^FAKE-OK from model=pool-b \(request #\d+\)$/)
    // the provider request carried the child's session, which the wrapper reads
    expect(limited!.headers["x-session-affinity"]).toBe(first.child)

    // slot 1 cools as quota_low until about now + 120 s, with no 429 sent at all
    await expect.poll(() => cooldownOf(oc, "fakeB/pool-b"), POLL).toMatchObject({ reason: "quota_low", strikes: 0 })
    const cd = cooldownOf(oc, "fakeB/pool-b")
    expect(cd!.until).toBeGreaterThanOrEqual(t0 + 115_000)
    expect(cd!.until).toBeLessThanOrEqual(Date.now() + 121_000)
    expect(cooldownOf(oc, "fakeB/pool-c")).toBeUndefined()

    const second = await spawnExplore(oc, "after the low quota")
    expect((await childReply(oc, second.child))?.model).toBe("fakeB/pool-c")
    const all = await fake.requests(first.before)
    expect(all.filter((r) => r.status === 429 || r.behavior === "429")).toEqual([])
    const afterLow = requestsOf(all, "after the low quota")
    expect(afterLow.length).toBeGreaterThan(0)
    expect(afterLow.map((r) => `${r.provider}/${r.model}`)).toEqual(afterLow.map(() => "fakeB/pool-c"))

    // ocpool status: slot 1 COOLING quota_low, its reset about 120 s out; the quota section
    const status = ocpool(oc, ["status"])
    expect(status.status, status.stderr).toBe(0)
    const slot1 = status.stdout.split("\n").find((l) => l.includes("1. fakeB/pool-b"))
    expect(slot1, status.stdout).toMatch(/COOLING quota_low strike 0 until \d\d:\d\d:\d\dZ \((1m[45]\ds|2m00s)\)/)
    expect(status.stdout.split("\n").find((l) => l.includes("2. fakeB/pool-c"))).not.toMatch(/COOLING/)
    expect(status.stdout).toMatch(/quota:\n {2}fakeB\/pool-b {2}requests 1\/100 \(1%\) reset \d\d:\d\d:\d\dZ \(in (1m[45]\ds|2m00s)\)/)
    const statusJson = JSON.parse(ocpool(oc, ["status", "--json"]).stdout) as { slots: Array<{ model: string; cooling: { reason: string; until: number } | null }>; next: { model: string } | null }
    const cooling = statusJson.slots.find((s) => s.model === "fakeB/pool-b")?.cooling
    expect(cooling?.reason).toBe("quota_low")
    expect(Math.abs(cooling!.until - (limited!.t + 120_000))).toBeLessThan(3_000)
    expect(statusJson.next?.model).toBe("fakeB/pool-c")

    // ocpool quota --json: the record the headers stated
    const quota = ocpool(oc, ["quota", "--json"])
    expect(quota.status, quota.stderr).toBe(0)
    const models = (JSON.parse(quota.stdout) as { models: Array<{ model: string; requests: { remaining: number; limit: number | null; resetAt: number | null } | null }> }).models
    const b = models.find((m) => m.model === "fakeB/pool-b")
    expect(b?.requests).toMatchObject({ remaining: 1, limit: 100 })
    expect(Math.abs(b!.requests!.resetAt! - (limited!.t + 120_000))).toBeLessThan(3_000)
  })

  it("US-48 (control) a 200 stating 90 of 100 requests left cools nothing; the next spawn stays on slot 1", async () => {
    const oc = await start()
    const plentyLeft = "plenty left [[fake:ratelimit:90/100/120]]"
    const first = await spawnExplore(oc, plentyLeft)
    const sent = requestsOf(await fake.requests(first.before), plentyLeft)
    const plenty = sent.find((r) => r.behavior === "ratelimit")
    expect(plenty, JSON.stringify(sent)).toMatchObject({ provider: "fakeB", model: "pool-b", status: 200 })
    expect(plenty!.extraHeaders?.["x-ratelimit-remaining-requests"]).toBe("90")
    expect(await childReply(oc, first.child)).toEqual({ model: "fakeB/pool-b", text: plenty!.replyText })
    // the observation arrived (the quota record says 90/100), and it cooled nothing
    const quotaOfB = () => (JSON.parse(ocpool(oc, ["quota", "--json"]).stdout) as { models: Array<{ model: string; requests: unknown }> }).models.find((m) => m.model === "fakeB/pool-b")?.requests
    await expect.poll(quotaOfB, POLL).toMatchObject({ remaining: 90, limit: 100 })
    expect(cooldownOf(oc, "fakeB/pool-b")).toBeUndefined()

    const second = await spawnExplore(oc, "still slot one")
    expect((await childReply(oc, second.child))?.model).toBe("fakeB/pool-b")
    const status = ocpool(oc, ["status"])
    expect(status.stdout, status.stderr).not.toMatch(/COOLING/)
    // the engine registered itself (issue 33): status names the opencode process that has the plugin loaded
    expect(status.stdout.split("\n")[1]).toMatch(new RegExp(`^plugin loaded in 1 opencode process: pid ${oc.pid} \\(v[^,]+, sqlite, since \\d+[sm]\\)$`))
    // and the plugin's lines in opencode's log carry the service name (issue 33)
    expect(oc.readLog().split("\n").find((l) => l.includes("reaper armed"))).toContain("service=opencode-pool")
  })
})

describe("coaching in the real opencode 1.18.33 (US-49)", () => {
  it("US-49 the root's provider request carries one coaching line with the verdict and figures; the title generator's and the child's carry none; a stated 5/100 turns the next line to THROTTLE", async () => {
    const oc = await start()
    const session = (await oc.createSession()).id
    const before = (await fake.health()).requests

    // first turn: GO (nothing stated yet); the root's own response then states 5 of 100 requests left on fakeA/pool-a
    const opening = "hello [[fake:ratelimit:5/100/600]]"
    const mark = await oc.prompt(session, opening)
    await oc.waitIdle(session, mark, TURN_MS)
    const first = await fake.requests(before)
    const rootFirst = first.find((r) => r.firstUserText === opening && r.behavior === "ratelimit")
    expect(rootFirst, JSON.stringify(first.map((r) => [r.behavior, r.firstUserText]))).toBeDefined()
    expect(rootFirst!.coachLines).toHaveLength(1)
    expect(rootFirst!.coachLines[0]).toMatch(/^opencode-pool quota: GO\. fakeA\/pool-a: no quota stated; pool: 0 of 2 slot\(s\) cooling\. Work normally/)
    for (const title of first.filter((r) => r.behavior === "title")) expect(title.coachLines).toEqual([])

    // the next turn of the same session spawns a child: the class changed (5 % left), so its request says THROTTLE with
    // the figures; the child's requests carry no line
    const mid = (await fake.health()).requests
    const next = "spawn [[task:explore:child work]]"
    const mark2 = await oc.prompt(session, next)
    await oc.waitIdle(session, mark2, TURN_MS)
    const second = await fake.requests(mid)
    const root = second.filter((r) => r.behavior !== "title" && r.lastUserText === next)
    expect(root.length).toBeGreaterThan(0)
    const lines = root.flatMap((r) => r.coachLines)
    expect(lines.some((l) => /^opencode-pool quota: THROTTLE\. fakeA\/pool-a: 5\/100 requests left \(5%\), resets \d\d:\d\dZ; pool: 0 of 2 slot\(s\) cooling\./.test(l)), JSON.stringify(lines)).toBe(true)
    const child = second.filter((r) => r.firstUserText === "child work")
    expect(child.length).toBeGreaterThan(0)
    for (const r of child) expect(r.coachLines).toEqual([])
  })
})
