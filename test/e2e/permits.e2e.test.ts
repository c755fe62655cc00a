/**
 * Heavy work takes turns (issue 21, US-51) inside the real opencode 1.18.33 (offline, fake provider),
 * with a budget of 1: two sessions' `make` runs take turns (marker file timestamps), a light command in
 * between runs at once, `ocpool status` shows the queue meanwhile and the waited line reaches the tool
 * output; aborting a waiting session ends its wait within a second and its command never runs; a
 * subagent that waits 20 s with `hangSilenceMs` at 2 s is not reaped. `npm run test:e2e`.
 */
import { beforeAll, describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { permitEntriesIn } from "../support/stateDb.js"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { e2eWorld } from "./world.js"
import { fakeConfig, sleep, type FakeLlm, type OpencodeHandle, type PluginEntry } from "./harness.js"

const ROOT = new URL("../../", import.meta.url).pathname
const CLI = join(ROOT, "bin/ocpool.js")
const TURN_MS = 90_000
const SLOTS = ["fakeB/pool-b", "fakeB/pool-c"]
const OPTIONS = { models: { slots: SLOTS.map((model) => ({ model, weight: 1 })) }, permits: { heavy: 1 }, hangSilenceMs: 2_000, hangMinAgeMs: 1_000, reapMs: 1_000 }
const PLUGIN_ENTRY: PluginEntry = [join(ROOT, "dist/opencode-plugin.js"), OPTIONS]

/** Each target writes its start and end times (ms) beside the Makefile; `hold` keeps the permit 20 s. */
const MAKEFILE = [
  ["one", 10],
  ["two", 1],
  ["hold", 15],
  ["waiter", 1],
  ["long", 20],
  ["child", 1]
]
  .map(([t, s]) => `${t}:\n\t@date +%s%3N > ${t}.start; sleep ${s}; date +%s%3N > ${t}.end\n`)
  .join("\n")

const world = e2eWorld(80)
let fake: FakeLlm
let oc: OpencodeHandle
let marks: string
beforeAll(async () => {
  fake = world.fake
  oc = await world.start({
    configJson: fakeConfig({ fakeUrl: fake.url }),
    pluginPaths: [PLUGIN_ENTRY],
    setup: (dirs) => {
      marks = join(dirs.workDir, "marks")
      mkdirSync(marks)
      writeFileSync(join(marks, "Makefile"), MAKEFILE)
    }
  })
}, 240_000)

const at = (name: string): number | undefined => {
  const file = join(marks, name)
  return existsSync(file) ? Number(readFileSync(file, "utf8").trim()) : undefined
}
const until = async (cond: () => boolean | Promise<boolean>, ms: number): Promise<boolean> => {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await cond()) return true
    await sleep(50)
  }
  return false
}
const make = (target: string) => `[[fake:bash:make -s -C ${marks} ${target}]]`

const ocpool = async (args: ReadonlyArray<string>): Promise<{ stdout: string }> =>
  promisify(execFile)(process.execPath, [CLI, ...args, "--state-dir", oc.stateDir], { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } })

/** The requests queued in the state dir's database now (read directly: no process start in the timing). */
const queued = (): number => permitEntriesIn(oc.stateDir).filter((e) => e.grantedAt === undefined).length

const bashOutput = async (session: string): Promise<string> =>
  (await oc.messages(session))
    .flatMap((m) => m.parts)
    .filter((p) => p.type === "tool" && p["tool"] === "bash")
    .map((p) => String(p["state"]?.output ?? ""))
    .join("\n")

describe("US-51 heavy work takes turns in the real opencode", () => {
  it("US-51 two sessions' heavy commands take turns with a budget of 1; a light command runs at once; ocpool status shows the queue; the waited line reaches the tool output", async () => {
    const a = (await oc.createSession({ title: "heavy one" })).id
    const b = (await oc.createSession({ title: "heavy two" })).id
    const c = (await oc.createSession({ title: "light" })).id
    const markA = await oc.prompt(a, `first ${make("one")}`)
    expect(await until(() => at("one.start") !== undefined, TURN_MS)).toBe(true)
    const markB = await oc.prompt(b, `second ${make("two")}`)
    // the second waits in the hook: ocpool status shows it queued behind the first
    expect(await until(() => queued() === 1, 30_000)).toBe(true)
    const status = (await ocpool(["status"])).stdout
    expect(status).toMatch(/permits:\n {2}heavy: 1\/1 units used, 1 waiting/)
    expect(status).toContain("make -s -C")
    const markC = await oc.prompt(c, `light [[fake:bash:date +%s%3N > ${marks}/light.at]]`)
    await oc.waitIdle(c, markC, TURN_MS)
    await oc.waitIdle(a, markA, TURN_MS)
    await oc.waitIdle(b, markB, TURN_MS)
    const [oneStart, oneEnd, twoStart, light] = [at("one.start")!, at("one.end")!, at("two.start")!, at("light.at")!]
    expect(twoStart).toBeGreaterThanOrEqual(oneEnd)
    expect(light).toBeLessThan(oneEnd)
    expect(light).toBeGreaterThan(oneStart)
    expect(await bashOutput(b)).toMatch(/\[opencode-pool\] waited \d+ (ms|s) for a heavy-work permit; 1 command ran before it/)
    expect(await bashOutput(a)).not.toContain("[opencode-pool] waited")
  }, 240_000)

  it("US-51 aborting the waiting session ends its wait within 1 s and its command never runs", async () => {
    const h = (await oc.createSession({ title: "holder" })).id
    const w = (await oc.createSession({ title: "waiter" })).id
    const markH = await oc.prompt(h, `hold ${make("hold")}`)
    expect(await until(() => at("hold.start") !== undefined, TURN_MS)).toBe(true)
    await oc.prompt(w, `wait ${make("waiter")}`)
    expect(await until(() => queued() === 1, 30_000)).toBe(true)
    const t0 = Date.now()
    await oc.abort(w)
    expect(await until(() => queued() === 0, 5_000)).toBe(true)
    expect(Date.now() - t0).toBeLessThan(1_000)
    await oc.waitIdle(h, markH, TURN_MS)
    await sleep(1_500)
    expect(at("waiter.start")).toBeUndefined()
  }, 240_000)

  it("US-51 a subagent that waits 20 s for a permit with hangSilenceMs at 2 s is blocked, not hung: it is not reaped and finishes", async () => {
    const h = (await oc.createSession({ title: "long holder" })).id
    const markH = await oc.prompt(h, `hold long ${make("long")}`)
    expect(await until(() => at("long.start") !== undefined, TURN_MS)).toBe(true)
    const root = (await oc.createSession({ title: "delegating root" })).id
    const markR = await oc.prompt(root, `delegate [[task:explore:child builds ${make("child")}]]`)
    await oc.waitIdle(h, markH, TURN_MS)
    await oc.waitIdle(root, markR, TURN_MS)
    const childStart = at("child.start")
    expect(childStart).toBeGreaterThanOrEqual(at("long.end")!)
    expect((JSON.parse((await ocpool(["status", "--json"])).stdout) as { reaped: number }).reaped).toBe(0)
  }, 240_000)
})
