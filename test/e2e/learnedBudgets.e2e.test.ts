/**
 * Learned budgets (issue 35's done-when) in the real opencode 1.18.33 (offline, the fake provider with
 * hidden budgets): a provider `orf` whose two `:free` models share a budget of 3 requests a minute that no
 * success states; the pool takes both, then `fakeB/pool-c`. Children are spawned one after another: the
 * first three run on the first `:free` slot (each success counted in the group `orf/*:free`), the fourth
 * gets the fake's 429 (retry-after to the minute's end), which teaches the group its budget (3 a minute).
 * From then until the minute ends no request reaches the group (not even the other `:free` model, which the
 * 429 itself did not cool): every spawn runs on `fakeB/pool-c`. `ocpool quota` (`--json` and text) shows the
 * learned budget. The whole budget phase runs inside one calendar minute (the test waits for a fresh one
 * when too little of the current is left). The second test goes on with the same server in the next
 * minute (it waits for it): the group is used again up to the 3 it learned, and its third success cools
 * both `:free` slots before the provider refuses anything, so the next spawns run on `fakeB/pool-c` and
 * the one 429 stays the only one. `npm run test:e2e`.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { cooldownIn } from "../support/stateDb.js"
import { exploreTree } from "./flows.js"
import { fakeConfig, sleep, type FakeRequest, type OpencodeHandle } from "./harness.js"
import { e2eWorld } from "./world.js"

const ROOT = new URL("../../", import.meta.url).pathname
const PLUGIN = join(ROOT, "dist/opencode-plugin.js")
const CLI = join(ROOT, "dist/ocpool.cjs")
const TURN_MS = 30_000
const MINUTE_MS = 60_000
/** The budget phase needs this much of one calendar minute (it takes ~10–20 s). */
const PHASE_MS = 42_000
const PROVIDER = "orf"
const FREE = ["alpha:free", "beta:free"] as const
const GROUP = `${PROVIDER}/*:free`
const OTHER = "fakeB/pool-c"
const SLOTS = [...FREE.map((m) => `${PROVIDER}/${m}`), OTHER]
const PER_MINUTE = 3

const world = e2eWorld(80)
/** The server of the first test, once it learned the budget; the second test goes on with it in the next minute. */
let learnedRun: { readonly oc: OpencodeHandle; readonly dir: string; readonly minuteEnd: number } | undefined
const traceDirs: Array<string> = []
afterAll(() => {
  for (const dir of traceDirs) rmSync(dir, { recursive: true, force: true })
})

const config = () => {
  const base = fakeConfig({ fakeUrl: world.fake.url })
  const model = (name: string) => ({ name, tool_call: true, limit: { context: 128_000, output: 4_096 } })
  return {
    ...base,
    enabled_providers: [...(base["enabled_providers"] as Array<string>), PROVIDER],
    provider: {
      ...(base["provider"] as object),
      [PROVIDER]: {
        npm: "@ai-sdk/openai-compatible",
        name: "Fake free tier",
        options: { baseURL: `${world.fake.url}/${PROVIDER}/v1`, apiKey: "not-a-secret" },
        models: Object.fromEntries(FREE.map((m) => [m, model(m)]))
      }
    }
  }
}

const ocpool = (oc: OpencodeHandle, args: ReadonlyArray<string>) =>
  spawnSync(process.execPath, [CLI, ...args, "--state-dir", oc.stateDir], { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } })

/** The requests of a child: the ones whose first user text is its prompt (the root's carry the directive). */
const childRequests = (all: ReadonlyArray<FakeRequest>, prompt: string) => all.filter((r) => r.firstUserText === prompt && r.behavior !== "title")
const where = (r: FakeRequest) => `${r.provider}/${r.model}`

const debug = (...args: ReadonlyArray<unknown>) => {
  if (process.env.E2E_DEBUG === "1") console.log(...args)
}

describe("learned budgets in the real opencode 1.18.33 (issue 35)", () => {
  it("US-48 after one 429 of a hidden 3-a-minute :free budget, the group is learned: no request reaches either :free model until the minute ends, every spawn runs on the other provider, and ocpool quota shows the learned budget", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ocpool-e2e-learned-"))
    traceDirs.push(dir)
    const oc = await world.start({
      configJson: config(),
      pluginPaths: [[PLUGIN, { models: { slots: SLOTS.map((model) => ({ model, weight: 1 })) } }]],
      env: { OCPOOL_TRACE: join(dir, "pool-%p.jsonl") }
    })
    const fake = world.fake
    await fake.setBudgets([{ name: "free-models", models: [...FREE], perMinute: PER_MINUTE, stated: "retry-after" }])

    // one calendar minute for the whole budget phase: wait for a fresh one when too little is left
    const left = MINUTE_MS - (Date.now() % MINUTE_MS)
    if (left < PHASE_MS) await sleep(left + 200)
    const t0 = Date.now()
    const minuteEnd = Math.floor(t0 / MINUTE_MS) * MINUTE_MS + MINUTE_MS
    const since = (await fake.health()).requests

    // the budget: three children on the first :free slot, each answered with no rate-limit header
    for (let i = 1; i <= PER_MINUTE; i++) {
      const prompt = `learn ${i}`
      await exploreTree(oc, prompt, TURN_MS)
      const sent = childRequests(await fake.requests(since), prompt)
      expect(sent.map((r) => [where(r), r.status, r.budgetGroup, r.extraHeaders])).toEqual([[SLOTS[0], 200, "free-models", undefined]])
    }

    // the fourth child: the group's 429, stating its reset (the minute's end) in retry-after
    const spent = await exploreTree(oc, "over budget", TURN_MS)
    const refusals = (await fake.requests(since)).filter((r) => r.behavior === "budget-429")
    expect(refusals).toHaveLength(1)
    const refused = refusals[0]!
    expect(refused).toMatchObject({ provider: PROVIDER, model: FREE[0], status: 429, firstUserText: "over budget", budget: { group: "free-models", window: "minute", resetAt: minuteEnd } })
    // whole seconds to the minute's end (counted from the fake's own clock reading, a few ms after `t`)
    expect(Math.abs(Number(refused.retryAfter) * 1000 - (minuteEnd - refused.t))).toBeLessThan(1_100)
    debug("over budget child", spent.child, "requests", childRequests(await fake.requests(since), "over budget").map((r) => [where(r), r.status, r.behavior]))

    // the lesson is written: both :free slots cool until the minute's end (the other one as quota_low from the learned budget)
    await expect.poll(() => cooldownIn(oc.stateDir, SLOTS[1]!), { timeout: 10_000, interval: 100 }).toMatchObject({ reason: "quota_low", source: "learned", until: minuteEnd })
    expect(cooldownIn(oc.stateDir, SLOTS[0]!)?.until).toBeGreaterThanOrEqual(minuteEnd)
    expect(cooldownIn(oc.stateDir, OTHER)).toBeUndefined()

    // the next spawns, in the same minute: all on the other provider's slot
    const after = (await fake.health()).requests
    for (let i = 1; i <= 4; i++) {
      const prompt = `after ${i}`
      await exploreTree(oc, prompt, TURN_MS)
      const sent = childRequests(await fake.requests(after), prompt)
      expect(sent.length).toBeGreaterThan(0)
      expect(sent.map((r) => [where(r), r.status])).toEqual(sent.map(() => [OTHER, 200]))
    }

    // no request reached the group after its 429 (neither :free model), no further refusal
    const all = await fake.requests(since)
    const toGroup = all.filter((r) => r.provider === PROVIDER && r.seq > refused.seq)
    debug("requests to the group after the 429", toGroup.map((r) => [r.seq, where(r), r.status, r.firstUserText]))
    expect(toGroup.map((r) => [where(r), r.status, r.firstUserText])).toEqual([])
    const counts = (await fake.budgets()).counts
    expect(counts.map((c) => [c.group, c.granted, c.refused, c.minute.used])).toEqual([["free-models", PER_MINUTE, 1, PER_MINUTE]])

    // ocpool quota --json: the learned budget of the group, a minute's 3, none left, reset at the minute's end
    const json = ocpool(oc, ["quota", "--json"])
    expect(json.status, json.stderr).toBe(0)
    const learned = (JSON.parse(json.stdout) as { learned: ReadonlyArray<Record<string, unknown>> }).learned
    expect(learned).toHaveLength(1)
    expect(learned[0]).toMatchObject({ group: GROUP, window: "minute", limit: PER_MINUTE, remaining: 0, resetAt: minuteEnd, samples: 1, used: { minute: PER_MINUTE, day: PER_MINUTE } })
    expect(learned[0]!["limits"]).toEqual([{ window: "minute", limit: PER_MINUTE, samples: 1, learnedAt: expect.any(Number) }])
    // and as text
    const text = ocpool(oc, ["quota"])
    expect(text.status, text.stderr).toBe(0)
    const hh = new Date(minuteEnd).toISOString().slice(11, 19)
    const line = text.stdout.split("\n").find((l) => l.startsWith(GROUP))
    expect(line, text.stdout).toMatch(
      new RegExp(`^orf/\\*:free {2}requests 0/${PER_MINUTE} a minute \\(learned, seen once\\) reset ${hh}Z \\(in (?:\\d+s|1m00s)\\) {2}used ${PER_MINUTE} this minute, ${PER_MINUTE} today$`)
    )

    // the trace: three counted successes, one lesson, each of the group's slot model
    const file = join(dir, `pool-${oc.pid}.jsonl`)
    const lines = existsSync(file) ? readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>) : []
    const budgets = lines.filter((l) => l["type"] === "budget")
    debug("budget lines", budgets)
    expect(budgets.filter((l) => l["outcome"] === "ok" && l["model"] === SLOTS[0]).length).toBe(PER_MINUTE)
    expect(budgets.filter((l) => l["outcome"] === "limit").map((l) => l["model"])).toEqual([SLOTS[0]])

    // all of it inside the minute the group spent: "until the window ends" was watched, not assumed
    debug("budget phase took ms", Date.now() - t0)
    expect(Date.now()).toBeLessThan(minuteEnd)
    learnedRun = { oc, dir, minuteEnd }
  })

  it("US-48 in the next minute the learned budget is used again and cools the group at its third success, before any 429: the next spawns run on the other provider", async () => {
    // the server of the test above, which learned 3 a minute (this one waits for the next minute)
    expect(learnedRun).toBeDefined()
    const { oc, dir, minuteEnd: spentEnd } = learnedRun!
    const fake = world.fake
    // the 429's own cooldown of the first :free slot ends with the minute (its retry-after rounded up to a second)
    const ends = Math.max(spentEnd, cooldownIn(oc.stateDir, SLOTS[0]!)?.until ?? 0)
    await sleep(ends - Date.now() + 200)
    const t0 = Date.now()
    const minuteEnd = spentEnd + MINUTE_MS
    expect(minuteEnd - t0).toBeGreaterThan(PHASE_MS)
    const since = (await fake.health()).requests

    // the group is used again, up to what it learned
    for (let i = 1; i <= PER_MINUTE; i++) {
      const prompt = `again ${i}`
      await exploreTree(oc, prompt, TURN_MS)
      const sent = childRequests(await fake.requests(since), prompt)
      expect(sent.map((r) => [where(r), r.status, r.budgetGroup])).toEqual([[SLOTS[0], 200, "free-models"]])
    }
    // its third success left it at its reserve: both :free slots cool as quota_low (learned) until this minute's end
    for (const model of SLOTS.slice(0, 2))
      await expect.poll(() => cooldownIn(oc.stateDir, model), { timeout: 10_000, interval: 100 }).toMatchObject({ reason: "quota_low", source: "learned", until: minuteEnd })

    // so the next spawns run on the other provider, and the group is never asked
    for (let i = 1; i <= 3; i++) {
      const prompt = `then ${i}`
      await exploreTree(oc, prompt, TURN_MS)
      const sent = childRequests(await fake.requests(since), prompt)
      expect(sent.length).toBeGreaterThan(0)
      expect(sent.map((r) => [where(r), r.status])).toEqual(sent.map(() => [OTHER, 200]))
    }
    const all = await fake.requests(since)
    expect(all.filter((r) => r.status === 429)).toEqual([])
    expect(all.filter((r) => r.provider === PROVIDER).map((r) => r.firstUserText)).toEqual(["again 1", "again 2", "again 3"])
    // the provider refused nothing more: still the one 429 that taught the budget
    const counts = (await fake.budgets()).counts
    expect(counts.map((c) => [c.group, c.granted, c.refused, c.minute.used])).toEqual([["free-models", 2 * PER_MINUTE, 1, PER_MINUTE]])

    // ocpool quota --json: the same learned budget (seen once: no 429 confirmed it), this minute spent
    const json = ocpool(oc, ["quota", "--json"])
    expect(json.status, json.stderr).toBe(0)
    const learned = (JSON.parse(json.stdout) as { learned: ReadonlyArray<Record<string, unknown>> }).learned
    expect(learned).toEqual([expect.objectContaining({ group: GROUP, window: "minute", limit: PER_MINUTE, remaining: 0, resetAt: minuteEnd, samples: 1, used: { minute: PER_MINUTE, day: 2 * PER_MINUTE } })])

    // the trace: no lesson this minute (no 429), three more counted successes of the group
    const file = join(dir, `pool-${oc.pid}.jsonl`)
    const budgets = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l["type"] === "budget" && Number(l["at"]) >= t0)
    expect(budgets.filter((l) => l["outcome"] === "limit")).toEqual([])
    expect(budgets.filter((l) => l["outcome"] === "ok" && l["model"] === SLOTS[0]).length).toBe(PER_MINUTE)
    debug("next-minute phase took ms", Date.now() - t0)
    expect(Date.now()).toBeLessThan(minuteEnd)
  })
})
