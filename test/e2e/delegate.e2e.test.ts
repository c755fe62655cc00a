/**
 * The delegation policy (US-1) inside the real opencode 1.18.33: the rules opencode itself reports and
 * applies for the injected `build`, and twelve delegated spawns that all land on slot models.
 * `npm run test:e2e`.
 */
import { describe, expect, it } from "@effect/vitest"
import { join } from "node:path"
import { evaluate, type Rule } from "../support/permission.js"
import { fakeConfig, type OpencodeHandle } from "./harness.js"
import { e2eWorld } from "./world.js"

const root = new URL("../../", import.meta.url).pathname
const PLUGIN = join(root, "dist/opencode-plugin.js")
const TURN_MS = 90_000
const POOL = { slots: [{ model: "fakeB/pool-b", weight: 1 }, { model: "fakeB/pool-c", weight: 1 }] }
const SLOT_MODELS = POOL.slots.map((s) => s.model)

const world = e2eWorld()

const start = (options: Record<string, unknown> = {}) => world.start({ configJson: fakeConfig({ fakeUrl: world.fake.url }), pluginPaths: [[PLUGIN, { models: POOL, ...options }]] })

interface AgentInfo {
  readonly name: string
  readonly prompt?: string
  readonly permission: ReadonlyArray<Rule>
}
const agent = async (oc: OpencodeHandle, name: string): Promise<AgentInfo> => {
  const agents = (await oc.request("GET", "/agent")).body as ReadonlyArray<AgentInfo>
  const found = agents.find((a) => a.name === name)
  if (found === undefined) throw new Error(`no agent ${name}`)
  return found
}

type Part = { type: string; tool?: string; state?: { status: string; error?: string; input?: Record<string, unknown> } }
const toolParts = async (oc: OpencodeHandle, session: string, tool: string): Promise<ReadonlyArray<Part>> =>
  (await oc.messages(session)).flatMap((m) => m.parts as ReadonlyArray<Part>).filter((p) => p.type === "tool" && p.tool === tool)

describe("the delegation policy in the real opencode 1.18.33 (US-1)", () => {
  it("US-1 opencode's own rules for the injected build deny the read family and let task reach only the pooled bases; of the read family only `read` is offered (the context map's files), and a read of anything else is refused by opencode", async () => {
    const oc = await start()
    const build = await agent(oc, "build")
    for (const tool of ["read", "glob", "grep", "list", "webfetch", "websearch"]) expect(evaluate(build.permission, tool, "README.md"), tool).toBe("deny")
    for (const name of ["explore", "implement", "context", "explore-1", "implement-2"]) expect(evaluate(build.permission, "task", name), name).toBe("allow")
    for (const name of ["general", "plan", "explore-deep"]) expect(evaluate(build.permission, "task", name), name).toBe("deny")
    expect(evaluate(build.permission, "edit", "src/a.ts")).toBe("allow")
    expect(build.prompt).toContain('Always spawn the bare names "explore", "implement" and "context"')
    const plan = await agent(oc, "plan")
    expect(evaluate(plan.permission, "task", "implement")).toBe("deny")
    expect(evaluate(plan.permission, "task", "explore-2")).toBe("allow")

    const session = await oc.createSession()
    const mark = await oc.prompt(session.id, "look [[fake:read:README.md]]")
    await oc.waitIdle(session.id, mark, TURN_MS)
    // what the model was offered: none of the read family but `read` (the context map's files only, US-21),
    // and a task tool that lists the pooled bases, not general
    const request = (await world.fake.requests()).find((r) => r.firstUserText === "look [[fake:read:README.md]]" && r.behavior === "read")
    expect(request?.tools).toEqual(expect.arrayContaining(["bash", "edit", "task", "read"]))
    for (const tool of ["glob", "grep", "list", "webfetch", "websearch"]) expect(request?.tools, tool).not.toContain(tool)
    expect(request?.systemHead).toMatch(/^You are the primary coding agent, and you delegate/)
    expect(request?.taskToolDescription).toMatch(/- explore:/)
    expect(request?.taskToolDescription).not.toMatch(/- general:/)
    // and a read of anything but the map is refused by opencode's own permission check
    const parts = (await oc.messages(session.id)).flatMap((m) => m.parts as ReadonlyArray<Part>)
    const read = parts.find((p) => p.type === "tool" && p.tool === "read")
    expect(JSON.stringify(read?.state)).toMatch(/"status":"error".*prevents you from using this specific tool call/)
  })

  it("US-1 twelve spawns from the injected build, alternating explore and implement, all run, each on a slot model", async () => {
    const oc = await start()
    const session = await oc.createSession()
    const tasks = Array.from({ length: 12 }, (_, i) => `[[task:${i % 2 === 0 ? "explore" : "implement"}:say hi ${i}]]`)
    const mark = await oc.prompt(session.id, `spawn ${tasks.join(" ")}`)
    await oc.waitIdle(session.id, mark, TURN_MS)
    const calls = await toolParts(oc, session.id, "task")
    expect(calls).toHaveLength(12)
    // opencode checked each call's permission against the variant the pool rewrote it to, and let it run
    for (const c of calls) expect(c.state, JSON.stringify(c.state)).toMatchObject({ status: "completed" })
    expect(calls.map((c) => String(c.state!.input!["subagent_type"]).replace(/-\d+$/, ""))).toEqual(Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? "explore" : "implement")))
    const children = await oc.children(session.id)
    expect(children).toHaveLength(12)
    for (const child of children) {
      const assistant = (await oc.messages(child.id)).find((m) => m.info.role === "assistant")
      expect(SLOT_MODELS).toContain(`${assistant?.info["providerID"]}/${assistant?.info["modelID"]}`)
      expect(String(assistant?.info["agent"])).toMatch(/^(explore|implement)-[12]$/)
    }
  })

  it("US-1 with delegate:false opencode's build is its own: reading allowed, no injected prompt", async () => {
    const oc = await start({ delegate: false })
    const build = await agent(oc, "build")
    expect(evaluate(build.permission, "read", "README.md")).toBe("allow")
    expect(evaluate(build.permission, "task", "general")).toBe("allow")
    expect(build.prompt ?? "").not.toContain("bare names")
  })
})
