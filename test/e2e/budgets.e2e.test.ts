/**
 * The fake provider's hidden budgets (issue 35, item 6) in front of the real opencode 1.18.33: the pooled
 * models of one group share a budget the provider never states; the request over it is a 429 stating
 * its reset (here OpenRouter's body-carried form), and it reaches the plugin, which cools the model. The
 * harness facts only: what learned budgets make of them is for their own tests. `npm run test:e2e`.
 */
import { describe, expect, it } from "@effect/vitest"
import { existsSync, mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { cooldownIn } from "../support/stateDb.js"
import { fakeConfig } from "./harness.js"
import { spawnExplore, until } from "./flows.js"
import { e2eWorld } from "./world.js"

const root = new URL("../../", import.meta.url).pathname
const PLUGIN = join(root, "dist/opencode-plugin.js")
const TURN_MS = 60_000
const POOL = { slots: [{ model: "fakeB/pool-b", weight: 1 }, { model: "fakeB/pool-c", weight: 1 }] }

const world = e2eWorld()



describe("hidden budgets in front of the real opencode (issue 35)", () => {
  it("US-48 a group's day budget of 1 request: the first child is answered with no rate-limit header, the next request of the group is a 429 stating its reset in the body, and the plugin cools that model", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ocpool-e2e-budgets-"))
    const trace = join(dir, "pool-%p.jsonl")
    const oc = await world.start({
      configJson: fakeConfig({ fakeUrl: world.fake.url }),
      pluginPaths: [[PLUGIN, { models: POOL }]],
      env: { OCPOOL_TRACE: trace }
    })
    // a per-day budget, so the test holds whatever the minute (only a run across 00:00 UTC could differ)
    await world.fake.setBudgets([{ name: "free-models", models: ["pool-b", "pool-c"], perDay: 1, stated: "body" }])
    const since = (await world.fake.health()).requests

    const first = await spawnExplore(oc, "say hi", TURN_MS)
    await oc.waitIdle(first.session, first.mark, TURN_MS)
    const granted = (await world.fake.requests(since)).filter((r) => r.budgetGroup === "free-models")
    expect(granted.map((r) => [r.model, r.status, r.extraHeaders])).toEqual([["pool-b", 200, undefined]])

    const second = await spawnExplore(oc, "say hi again", TURN_MS)
    const refused = await world.fake.waitForRequest((r) => r.seq > since && r.behavior === "budget-429", TURN_MS)
    expect(refused).toMatchObject({ provider: "fakeB", status: 429, budget: { group: "free-models", window: "day" } })
    const reset = Number(JSON.parse(refused.errorBody!).error.metadata.headers["X-RateLimit-Reset"])
    expect(reset % 86_400_000).toBe(0)
    expect(reset).toBeGreaterThan(Date.now())
    // the plugin saw the 429 of the pooled child and cooled its model
    const cooled = await until(() => cooldownIn(oc.stateDir, `fakeB/${refused.model}`), (c) => c !== undefined, 30_000)
    expect(cooled?.until).toBeGreaterThan(Date.now())
    const file = join(dir, `pool-${oc.pid}.jsonl`)
    const lines = existsSync(file) ? readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>) : []
    expect(lines.some((l) => (l["type"] === "retry" || l["type"] === "limit") && l["session"] === second.child)).toBe(true)
    const counts = (await world.fake.budgets()).counts
    expect(counts.map((c) => [c.key, c.group, c.granted])).toEqual([["not-a-secret", "free-models", 1]])
    expect(counts[0]!.refused).toBeGreaterThanOrEqual(1)
    await oc.abort(second.session)
  })
})
