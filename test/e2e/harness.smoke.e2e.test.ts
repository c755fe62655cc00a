/**
 * Smoke test of the e2e harness itself: the real opencode 1.18.33, offline, against the fake LLM,
 * with no plugin. Run with `npm run test:e2e`.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { ensureOpencode, fakeConfig, startFakeLlm, startOpencode, textOf, type FakeLlm, type OpencodeHandle } from "./harness.js"

// The first turn of a fresh server is slow (tool registry + provider SDK init): give it room.
const FIRST_TURN_MS = 60_000
const TURN_MS = 30_000

describe("e2e harness (real opencode, fake LLM, no plugin)", () => {
  let fake: FakeLlm | undefined
  let oc: OpencodeHandle | undefined
  const server = (): OpencodeHandle => {
    if (oc === undefined) throw new Error("opencode did not start")
    return oc
  }
  const llm = (): FakeLlm => {
    if (fake === undefined) throw new Error("fake LLM did not start")
    return fake
  }

  beforeAll(async () => {
    const t0 = Date.now()
    const binary = await ensureOpencode()
    const t1 = Date.now()
    fake = await startFakeLlm()
    oc = await startOpencode({ binary, configJson: fakeConfig({ fakeUrl: fake.url }) })
    console.info(`[e2e smoke] ensureOpencode: ${t1 - t0} ms; fake LLM + opencode ready (healthy, instance booted, SSE connected): ${Date.now() - t1} ms`)
  }, 240_000)

  afterAll(async () => {
    await oc?.stop()
    await fake?.stop()
  }, 30_000)

  it("US-15 harness: a prompt runs on the configured model against the fake provider and the assistant replies", async () => {
    const oc = server()
    const session = await oc.createSession()
    expect(session.id).toMatch(/^ses_/)

    const t0 = Date.now()
    const mark = await oc.prompt(session.id, "hello from the e2e smoke test [[fake:text]]")
    await oc.waitIdle(session.id, mark, FIRST_TURN_MS)
    const turnMs = Date.now() - t0

    const requests = await llm().requests()
    const turn = requests.filter((r) => r.behavior !== "title" && r.lastUserText.includes("hello from the e2e smoke test"))
    expect(turn.length).toBeGreaterThanOrEqual(1)
    expect(turn[0]).toMatchObject({ provider: "fakeA", model: "pool-a", behavior: "text", stream: true })

    const messages = await oc.messages(session.id)
    const assistant = messages.filter((m) => m.info.role === "assistant").at(-1)
    expect(assistant?.info).toMatchObject({ providerID: "fakeA", modelID: "pool-a" })
    expect(textOf(assistant)).toContain("FAKE-OK from model=pool-a")
    // no session is left busy
    expect(await oc.status()).not.toHaveProperty(session.id)
    console.info(`[e2e smoke] first turn: ${turnMs} ms`)
  })

  it("US-15 harness: a task call spawns the explore subagent, whose child session runs on fakeB/pool-b", async () => {
    const oc = server()
    const session = await oc.createSession({ title: "task smoke" })
    const since = (await llm().health()).requests

    const t0 = Date.now()
    const mark = await oc.prompt(session.id, "spawn a subagent [[task:explore:child prompt from the smoke test]]")
    const created = await oc.waitForEvent((e) => e.type === "session.created" && e.properties["info"]?.parentID === session.id, TURN_MS, mark)
    const childId = String(created.properties["info"].id)
    await oc.waitIdle(session.id, mark, TURN_MS)
    const turnMs = Date.now() - t0

    const requests = await llm().requests(since)
    // the parent asked for the task on fakeA/pool-a
    const parentCall = requests.find((r) => r.behavior === "task")
    expect(parentCall).toMatchObject({ provider: "fakeA", model: "pool-a", why: "task-directive" })
    expect(parentCall?.toolCalls).toEqual([
      { name: "task", args: { description: "e2e explore task", prompt: "child prompt from the smoke test", subagent_type: "explore" } }
    ])
    // the child ran on fakeB/pool-b with the child prompt
    const childCalls = requests.filter((r) => r.lastUserText.includes("child prompt from the smoke test") && r.behavior !== "title")
    expect(childCalls.map((r) => [r.provider, r.model, r.behavior])).toContainEqual(["fakeB", "pool-b", "text"])
    // and the parent finished with a final text after the tool result
    expect(requests.some((r) => r.model === "pool-a" && r.why === "after-tool-result")).toBe(true)

    const childMessages = await oc.messages(childId)
    const childAssistant = childMessages.find((m) => m.info.role === "assistant")
    expect(childAssistant?.info).toMatchObject({ agent: "explore", providerID: "fakeB", modelID: "pool-b" })
    expect(textOf(childAssistant)).toContain("FAKE-OK from model=pool-b")

    const parentMessages = await oc.messages(session.id)
    const taskPart = parentMessages.flatMap((m) => m.parts).find((p) => p.type === "tool" && p["tool"] === "task")
    expect(taskPart?.["state"]?.status).toBe("completed")
    expect((await oc.children(session.id)).map((s) => s.id)).toEqual([childId])
    console.info(`[e2e smoke] task turn (parent + child): ${turnMs} ms`)
  })
})
