/**
 * The fake provider drives the real opencode 1.18.33 into asking a person (a bash permission ask, a
 * question), and the harness answers over HTTP. Config: `"permission": {"bash": "ask"}`, no plugin.
 * Run alone: `npx vitest run --config vitest.e2e.config.ts test/e2e/asks.e2e.test.ts`.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { ensureOpencode, fakeConfig, sleep, startFakeLlm, startOpencode, textOf, type FakeLlm, type HarnessEvent, type OpencodeHandle } from "./harness.js"
import type { PermissionRequest, QuestionRequest } from "./server.js"

// The first turn of a fresh server is slow (tool registry + provider SDK init): give it room.
const FIRST_TURN_MS = 60_000
const TURN_MS = 30_000
/** How long a pending ask is left alone to show that nothing moves on its own. */
const HOLD_MS = 1_000

const show = (e: HarnessEvent | undefined): string => JSON.stringify(e?.raw)

describe("US-12 asks: the fake provider drives the real opencode into permission asks and questions", () => {
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
    const binary = await ensureOpencode()
    fake = await startFakeLlm()
    const base = fakeConfig({ fakeUrl: fake.url })
    oc = await startOpencode({
      binary,
      configJson: fakeConfig({ fakeUrl: fake.url, extra: { permission: { ...(base["permission"] as Record<string, unknown>), bash: "ask" } } })
    })
  }, 240_000)

  afterAll(async () => {
    await oc?.stop()
    await fake?.stop()
  }, 30_000)

  /** The session's status events after `since`, as `busy`/`idle`/`retry`. */
  const statusesOf = (oc: OpencodeHandle, sessionId: string, since: number, before = Number.POSITIVE_INFINITY): ReadonlyArray<string> =>
    oc.events
      .filter((e) => e.i >= since && e.i < before && e.properties["sessionID"] === sessionId && (e.type === "session.status" || e.type === "session.idle"))
      .map((e) => (e.type === "session.idle" ? "session.idle" : String(e.properties["status"]?.type)))

  const toolPart = async (oc: OpencodeHandle, sessionId: string, tool: string) =>
    (await oc.messages(sessionId)).flatMap((m) => m.parts).find((p) => p.type === "tool" && p["tool"] === tool)

  it("US-12 fake provider drives a permission ask: [[fake:bash]] emits permission.asked (bash, the command), the session stays busy, reply once emits permission.replied and the turn ends idle", async () => {
    const oc = server()
    const session = await oc.createSession({ title: "US-12 permission" })
    const t0 = Date.now()
    const mark = await oc.prompt(session.id, "run it [[fake:bash]]")

    const asked = await oc.waitForType("permission.asked", FIRST_TURN_MS, { since: mark, sessionId: session.id })
    const tAsked = Date.now()
    const ask = asked.properties as PermissionRequest
    expect(ask).toMatchObject({ sessionID: session.id, permission: "bash", patterns: ["echo probe-bash"], metadata: { command: "echo probe-bash" }, always: ["echo *"] })
    expect(ask.id).toMatch(/^per_/)
    expect(ask.tool?.callID).toMatch(/^call_fake_/)
    expect(ask.tool?.messageID).toMatch(/^msg_/)

    // pending: listed, busy, and nothing moves while nobody answers
    expect(await oc.permissions()).toEqual([ask])
    expect((await oc.status())[session.id]).toEqual({ type: "busy" })
    await sleep(HOLD_MS)
    expect((await oc.status())[session.id]).toEqual({ type: "busy" })
    expect(oc.events.some((e) => e.i > asked.i && e.properties["sessionID"] === session.id && (e.type === "session.idle" || e.type === "session.error"))).toBe(false)
    const bashPending = await toolPart(oc, session.id, "bash")
    expect(bashPending?.["state"]?.status).toBe("running")

    const beforeReply = oc.mark()
    const tReply = Date.now()
    const reply = await oc.replyPermission(ask.id, "once")
    expect(reply).toMatchObject({ status: 200, body: true })
    const replied = await oc.waitForType("permission.replied", TURN_MS, { since: beforeReply, sessionId: session.id })
    expect(replied.properties).toEqual({ sessionID: session.id, requestID: ask.id, reply: "once" })
    const tReplied = Date.now()
    const idle = await oc.waitForEvent(
      (e) => e.properties["sessionID"] === session.id && (e.type === "session.idle" || (e.type === "session.status" && e.properties["status"]?.type === "idle")),
      TURN_MS,
      beforeReply
    )
    const tIdle = Date.now()

    expect(statusesOf(oc, session.id, mark, asked.i)).toContain("busy")
    expect(statusesOf(oc, session.id, mark, asked.i)).not.toContain("idle")
    expect(await oc.permissions()).toEqual([])
    expect(await oc.status()).not.toHaveProperty(session.id)
    const bash = await toolPart(oc, session.id, "bash")
    expect(bash?.["state"]).toMatchObject({ status: "completed", input: { command: "echo probe-bash", description: "Echo probe" } })
    expect(String(bash?.["state"]?.output)).toContain("probe-bash")
    // the request that carried the tool result got plain text, which ended the turn
    const turn = (await llm().requests()).filter((r) => r.behavior !== "title" && r.firstUserText.includes("run it [[fake:bash]]"))
    expect(turn.map((r) => [r.behavior, r.why, r.lastRole])).toEqual([
      ["bash", "directive", "user"],
      ["text", "after-tool-result", "tool"]
    ])
    expect(textOf((await oc.messages(session.id)).filter((m) => m.info.role === "assistant").at(-1))).toContain("FAKE-OK")

    console.info(
      `[e2e asks] permission: prompt→asked ${tAsked - t0} ms; reply HTTP ${reply.ms} ms; reply→replied ${tReplied - tReply} ms; reply→idle ${tIdle - tReply} ms\n` +
        `  asked:   ${show(asked)}\n  replied: ${show(replied)}\n  idle:    ${show(idle)}\n` +
        `  statuses after the prompt: ${statusesOf(oc, session.id, mark).join(" ")}`
    )
  })

  it("US-12 fake provider drives a question: [[fake:question:TEXT]] emits question.asked with that text; reply [[\"A\"]] emits question.replied and the turn ends idle", async () => {
    const oc = server()
    const session = await oc.createSession({ title: "US-12 question" })
    const t0 = Date.now()
    const mark = await oc.prompt(session.id, "ask [[fake:question:Should the migration be reversible?]]")

    const asked = await oc.waitForType("question.asked", TURN_MS, { since: mark, sessionId: session.id })
    const tAsked = Date.now()
    const q = asked.properties as QuestionRequest
    expect(q).toMatchObject({
      sessionID: session.id,
      questions: [
        {
          question: "Should the migration be reversible?",
          header: "Probe",
          options: [
            { label: "A", description: "option A" },
            { label: "B", description: "option B" }
          ]
        }
      ]
    })
    expect(q.id).toMatch(/^que_/)
    expect(q.tool?.callID).toMatch(/^call_fake_/)
    expect(await oc.questions()).toEqual([q])
    expect((await oc.status())[session.id]).toEqual({ type: "busy" })
    await sleep(HOLD_MS)
    expect((await oc.status())[session.id]).toEqual({ type: "busy" })

    const beforeReply = oc.mark()
    const tReply = Date.now()
    const reply = await oc.replyQuestion(q.id, [["A"]])
    expect(reply).toMatchObject({ status: 200, body: true })
    const replied = await oc.waitForType("question.replied", TURN_MS, { since: beforeReply, sessionId: session.id })
    expect(replied.properties).toEqual({ sessionID: session.id, requestID: q.id, answers: [["A"]] })
    const tReplied = Date.now()
    const idle = await oc.waitForEvent(
      (e) => e.properties["sessionID"] === session.id && (e.type === "session.idle" || (e.type === "session.status" && e.properties["status"]?.type === "idle")),
      TURN_MS,
      beforeReply
    )
    const tIdle = Date.now()

    expect(await oc.questions()).toEqual([])
    const part = await toolPart(oc, session.id, "question")
    expect(part?.["state"]?.status).toBe("completed")
    const turn = (await llm().requests()).filter((r) => r.behavior !== "title" && r.firstUserText.includes("Should the migration be reversible?"))
    expect(turn.map((r) => [r.behavior, r.why])).toEqual([
      ["question", "directive"],
      ["text", "after-tool-result"]
    ])
    console.info(
      `[e2e asks] question reply: prompt→asked ${tAsked - t0} ms; reply HTTP ${reply.ms} ms; reply→replied ${tReplied - tReply} ms; reply→idle ${tIdle - tReply} ms\n` +
        `  asked:   ${show(asked)}\n  replied: ${show(replied)}\n  idle:    ${show(idle)}\n` +
        `  tool part state: ${JSON.stringify(part?.["state"]).slice(0, 600)}\n` +
        `  statuses after the prompt: ${statusesOf(oc, session.id, mark).join(" ")}`
    )
  })

  it("US-12 fake provider drives a question that is rejected: [[fake:question]] asks \"Pick one?\", reject emits question.rejected and the turn ends", async () => {
    const oc = server()
    const session = await oc.createSession({ title: "US-12 question reject" })
    const t0 = Date.now()
    const mark = await oc.prompt(session.id, "ask again [[fake:question]]")

    const asked = await oc.waitForType("question.asked", TURN_MS, { since: mark, sessionId: session.id })
    const tAsked = Date.now()
    const q = asked.properties as QuestionRequest
    expect(q.questions[0]?.question).toBe("Pick one?")
    expect((await oc.status())[session.id]).toEqual({ type: "busy" })

    const beforeReject = oc.mark()
    const tReject = Date.now()
    const reject = await oc.rejectQuestion(q.id)
    expect(reject).toMatchObject({ status: 200, body: true })
    const rejected = await oc.waitForType("question.rejected", TURN_MS, { since: beforeReject, sessionId: session.id })
    expect(rejected.properties).toEqual({ sessionID: session.id, requestID: q.id })
    const tRejected = Date.now()
    const idle = await oc.waitForEvent(
      (e) => e.properties["sessionID"] === session.id && (e.type === "session.idle" || (e.type === "session.status" && e.properties["status"]?.type === "idle")),
      TURN_MS,
      beforeReject
    )
    const tIdle = Date.now()

    expect(await oc.questions()).toEqual([])
    expect(await oc.status()).not.toHaveProperty(session.id)
    const part = await toolPart(oc, session.id, "question")
    const turn = (await llm().requests()).filter((r) => r.behavior !== "title" && r.firstUserText.includes("ask again [[fake:question]]"))
    const errors = oc.events.filter((e) => e.i >= beforeReject && e.type === "session.error" && e.properties["sessionID"] === session.id)
    console.info(
      `[e2e asks] question reject: prompt→asked ${tAsked - t0} ms; reject HTTP ${reject.ms} ms; reject→rejected ${tRejected - tReject} ms; reject→idle ${tIdle - tReject} ms\n` +
        `  asked:    ${show(asked)}\n  rejected: ${show(rejected)}\n  idle:     ${show(idle)}\n` +
        `  tool part state: ${JSON.stringify(part?.["state"]).slice(0, 600)}\n` +
        `  fake requests of the turn: ${JSON.stringify(turn.map((r) => [r.behavior, r.why]))}\n` +
        `  session.error after reject: ${errors.map(show).join(" ")}\n` +
        `  statuses after the prompt: ${statusesOf(oc, session.id, mark).join(" ")}`
    )
    // a rejected question fails the tool and stops the loop: no follow-up request, no session.error
    expect(part?.["state"]).toMatchObject({ status: "error", error: "The user dismissed this question" })
    expect(turn.map((r) => r.behavior)).toEqual(["question"])
    expect(errors).toEqual([])
  })

  it("US-12 a subagent's permission ask carries the CHILD's sessionID: [[task:explore:… [[fake:bash:CMD]]]], parent and child busy while pending, reply once ends both", async () => {
    const oc = server()
    const session = await oc.createSession({ title: "US-12 child permission" })
    const t0 = Date.now()
    const mark = await oc.prompt(session.id, "delegate [[task:explore:child runs [[fake:bash:echo from-the-child]]]]")
    const created = await oc.waitForEvent((e) => e.type === "session.created" && e.properties["info"]?.parentID === session.id, TURN_MS, mark)
    const childId = String(created.properties["info"].id)

    const asked = await oc.waitForType("permission.asked", TURN_MS, { since: mark })
    const tAsked = Date.now()
    const ask = asked.properties as PermissionRequest
    expect(childId).not.toBe(session.id)
    expect(ask).toMatchObject({ sessionID: childId, permission: "bash", patterns: ["echo from-the-child"], metadata: { command: "echo from-the-child" } })
    expect(await oc.permissions()).toEqual([ask])
    const pendingStatus = await oc.status()
    expect(pendingStatus[session.id]).toEqual({ type: "busy" })
    expect(pendingStatus[childId]).toEqual({ type: "busy" })

    const beforeReply = oc.mark()
    const tReply = Date.now()
    const reply = await oc.replyPermission(ask.id)
    expect(reply).toMatchObject({ status: 200, body: true })
    const replied = await oc.waitForType("permission.replied", TURN_MS, { since: beforeReply })
    expect(replied.properties).toEqual({ sessionID: childId, requestID: ask.id, reply: "once" })
    await oc.waitIdle(session.id, mark, TURN_MS)
    const tIdle = Date.now()

    const bash = await toolPart(oc, childId, "bash")
    expect(bash?.["state"]).toMatchObject({ status: "completed", input: { command: "echo from-the-child" } })
    const task = await toolPart(oc, session.id, "task")
    expect(task?.["state"]?.status).toBe("completed")
    const status = await oc.status()
    expect(status).not.toHaveProperty(session.id)
    expect(status).not.toHaveProperty(childId)
    const turn = (await llm().requests()).filter((r) => r.behavior !== "title" && r.firstUserText.includes("child runs"))
    expect(turn.map((r) => [r.provider, r.model, r.behavior, r.why])).toEqual([
      ["fakeA", "pool-a", "task", "task-directive"],
      ["fakeB", "pool-b", "bash", "directive"],
      ["fakeB", "pool-b", "text", "after-tool-result"],
      ["fakeA", "pool-a", "text", "after-tool-result"]
    ])
    console.info(
      `[e2e asks] child permission: prompt→asked ${tAsked - t0} ms; reply HTTP ${reply.ms} ms; reply→parent idle ${tIdle - tReply} ms\n` +
        `  asked:   ${show(asked)}\n  replied: ${show(replied)}\n  status while pending: ${JSON.stringify(pendingStatus)}`
    )
  })

  it("US-12 [[fake:limit-400]] ends a root session with session.error (APIError 400, not retryable) after one request, without retries", async () => {
    const oc = server()
    const session = await oc.createSession({ title: "US-12 limit-400" })
    const t0 = Date.now()
    const mark = await oc.prompt(session.id, "fail now [[fake:limit-400]]")
    const error = await oc.waitForType("session.error", TURN_MS, { since: mark, sessionId: session.id })
    const tError = Date.now()
    await oc.waitIdle(session.id, mark, TURN_MS)
    const tIdle = Date.now()
    expect(error.properties["error"]).toMatchObject({ name: "APIError", data: { message: "limit reached", statusCode: 400, isRetryable: false } })
    expect(statusesOf(oc, session.id, mark)).not.toContain("retry")
    const turn = (await llm().requests()).filter((r) => r.behavior !== "title" && r.firstUserText.includes("fail now"))
    expect(turn.map((r) => r.behavior)).toEqual(["limit-400"])
    console.info(`[e2e asks] limit-400: prompt→session.error ${tError - t0} ms, →idle ${tIdle - t0} ms\n  session.error: ${show(error).slice(0, 800)}`)
  })
})
