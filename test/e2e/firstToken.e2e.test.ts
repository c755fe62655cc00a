/**
 * Time lost before the first token (issue 35, item 5) in the real opencode 1.18.33: a pooled child whose
 * provider never streams a first token is aborted within `firstTokenMs` + 5 s and its slot freed, its
 * model not cooled; the second such child in a row on that model cools it (`hang`), and the next spawn
 * goes to slot 2. The trace replays to the same decisions. `npm run test:e2e`.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { allClaimsIn, cooldownIn } from "../support/stateDb.js"
import { fakeConfig, type OpencodeHandle } from "./harness.js"
import { spawnExplore, until } from "./flows.js"
import { e2eWorld } from "./world.js"

const root = new URL("../../", import.meta.url).pathname
const PLUGIN = join(root, "dist/opencode-plugin.js")
const TURN_MS = 60_000
const FIRST_TOKEN_MS = 3_000
const POOL = { slots: [{ model: "fakeB/pool-b", weight: 1 }, { model: "fakeB/pool-c", weight: 1 }] }

const world = e2eWorld()



const childModel = async (oc: OpencodeHandle, child: string): Promise<string | undefined> => {
  const m = await until(
    async () => (await oc.messages(child)).find((x) => x.info.role === "assistant"),
    (a) => a !== undefined,
    TURN_MS
  )
  return m === undefined ? undefined : `${m.info["providerID"]}/${m.info["modelID"]}`
}

describe("no first token within firstTokenMs in the real opencode (issue 35)", () => {
  it("US-8 a child whose provider stalls before its first token is aborted within firstTokenMs + 5 s, its model not cooled; the second in a row cools it and the next spawn goes to slot 2; the trace replays", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ocpool-e2e-first-token-"))
    const oc = await world.start({
      configJson: fakeConfig({ fakeUrl: world.fake.url }),
      pluginPaths: [[PLUGIN, { models: POOL, firstTokenMs: FIRST_TOKEN_MS, reapMs: 1000 }]],
      env: { OCPOOL_TRACE: join(dir, "pool-%p.jsonl") }
    })
    const stalled = async (label: string) => {
      const since = (await world.fake.health()).requests
      const { session, child, mark } = await spawnExplore(oc, `${label} [[fake:hang]]`, TURN_MS)
      expect(await childModel(oc, child)).toBe("fakeB/pool-b")
      // the child's request that never streams a token is closed by the abort
      const hung = await world.fake.waitForRequest((r) => r.seq > since && r.behavior === "hang" && r.lastUserText.includes(label), TURN_MS)
      const closed = await until(
        async () => (await world.fake.requests(since)).find((r) => r.seq === hung.seq),
        (r) => r?.closedAt !== undefined,
        FIRST_TOKEN_MS + 10_000
      )
      // measured from the request (just after the spawn) to the abort that closed it
      expect(closed?.closedAfterMs).toBeDefined()
      expect(closed!.closedAfterMs!).toBeLessThanOrEqual(FIRST_TOKEN_MS + 5_000)
      expect(await until(() => allClaimsIn(oc.stateDir), (c) => Object.keys(c).length === 0, 10_000)).toEqual({})
      await oc.waitIdle(session, mark, TURN_MS)
      return closed!.closedAfterMs!
    }

    const first = await stalled("first stall")
    expect(first).toBeGreaterThanOrEqual(FIRST_TOKEN_MS - 1_000)
    expect(cooldownIn(oc.stateDir, "fakeB/pool-b")).toBeUndefined()
    expect(oc.readLog()).toMatch(/no first token session=\S+ model=fakeB\/pool-b after=\d+s \(firstTokenMs 3s\)/)
    expect(oc.readLog()).toMatch(/reaped claim=\S+ session=\S+ model=fakeB\/pool-b .* outcome=no_first_token/)

    await stalled("second stall")
    expect(cooldownIn(oc.stateDir, "fakeB/pool-b")).toMatchObject({ reason: "hang" })

    const { child } = await spawnExplore(oc, "say hi", TURN_MS)
    expect(await childModel(oc, child)).toBe("fakeB/pool-c")

    const trace = join(dir, `pool-${oc.pid}.jsonl`)
    const lines = readFileSync(trace, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { type: string; stalled?: Array<string> })
    expect(lines.filter((l) => l.type === "sweep" && l.stalled !== undefined).length).toBe(2)
    const r = spawnSync(process.execPath, [join(root, "bin/ocpool.js"), "replay", trace, "--expect", `${trace}.decisions.jsonl`], { encoding: "utf8" })
    expect([r.status, r.stderr]).toEqual([0, expect.stringMatching(/^ocpool: \d+ decisions match /)])
  })
})
