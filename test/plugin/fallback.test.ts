/**
 * Fallback models for the primary session (issue 12, US-50) through the plugin's hooks, over real state
 * files, a scripted abort client and a recording prompter: the switch, its log line, notification,
 * status record and trace; the message rewrite while the original cools; what never switches.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { readFileSync } from "node:fs"
import { hostname } from "node:os"
import { join } from "node:path"
import { formatDecision } from "../../src/core/trace/format.js"
import { replayText } from "../../src/core/trace/replay.js"
import { SessionPromptMemory, type PromptCall } from "../../src/layers/opencode/SessionPromptMemory.js"
import { sharedStateLayer } from "../../src/layers/state/sharedStateLayer.js"
import { SharedState } from "../../src/services/state/SharedState.js"
import { StateDir } from "../../src/services/state/StateDir.js"
import { bootsPerTest, childCreated, event, POOL2, settle, tmp, type Booted } from "./boot.js"

const { start } = bootsPerTest()

const ROOT = "ses_root"
const QUOTA = "You exceeded your current quota, please check your plan and billing details"

const boot = async (options: Record<string, unknown>, prompts: Array<PromptCall>, failWith?: string) =>
  start({ models: POOL2, ...options }, ["ok"], {}, 0, undefined, ["ok"], { prompt: SessionPromptMemory(prompts, failWith === undefined ? {} : { failWith }) })

/** The user's message on `model` (as the TUI sends it: the model named explicitly); returns the model it runs on. */
const userMessage = async (b: Booted, session: string, model: string, agent = "build"): Promise<string> => {
  const [providerID, ...rest] = model.split("/")
  const message = { id: "msg_1", sessionID: session, role: "user", agent, model: { providerID, modelID: rest.join("/") } }
  await b.hooks["chat.message"]!({ sessionID: session, agent, model: message.model } as never, { message, parts: [] } as never)
  return `${message.model.providerID}/${message.model.modelID}`
}

/**
 * The shared state as another process on this host reads it (`ocpool status`'s read, the port without
 * the lock), the directory only read: a pid no process has, so it never shares a claim file's name.
 */
const reader = (dir: string) =>
  sharedStateLayer({ backend: "sqlite", lockWaitMs: 0 }).pipe(Layer.provide(Layer.succeed(StateDir, { dir, trusted: false, pid: 4_194_303, host: hostname(), startTime: null })))

const retry = (b: Booted, session: string, message: string) =>
  event(b, "session.status", { sessionID: session, status: { type: "retry", attempt: 1, message, next: Date.now() + 2_000 } })

const apiError = (message: string, statusCode: number) => ({ name: "APIError", data: { message, statusCode, isRetryable: false, responseHeaders: {} } })

describe("fallback models (issue 12)", () => {
  it("US-50 the title generator's request under the root session does not become the agent or model that \"continue\" runs as", async () => {
    const prompts: Array<PromptCall> = []
    const b = await boot({ fallbackModels: ["fb/one"] }, prompts)
    await userMessage(b, ROOT, "main/big", "build")
    // opencode's title generator runs under the root's session id, as agent `title`, often on a small model
    await b.hooks["chat.params"]!({ sessionID: ROOT, agent: "title", model: { providerID: "main", id: "small" }, provider: {}, message: {} } as never, { temperature: 0, topP: 1, options: {} } as never)
    await retry(b, ROOT, QUOTA)
    await settle(b)
    expect(prompts).toEqual([{ session: ROOT, model: { providerID: "fb", modelID: "one" }, agent: "build", text: "continue" }])
  })

  it("US-50 a quota retry on a root session aborts it and continues it on the first fallback, once: log line, notification, status record, pool_status", async () => {
    const prompts: Array<PromptCall> = []
    const b = await boot({ fallbackModels: ["fb/one", "fb/two"] }, prompts)
    await userMessage(b, ROOT, "main/big", "plan")
    await retry(b, ROOT, QUOTA)
    await settle(b)
    expect(b.aborts).toEqual([ROOT])
    expect(prompts).toEqual([{ session: ROOT, model: { providerID: "fb", modelID: "one" }, agent: "plan", text: "continue" }])
    const line = b.logs.find((l) => l.message.startsWith("Switched to "))
    expect(line?.level).toBe("info")
    expect(line?.message).toMatch(/^Switched to fb\/one: main\/big hit its quota, resets \d\d:\d\dZ$/)
    await Effect.runPromise(b.hooks.notifications.settle)
    expect(b.sends.map((s) => [s.key, s.n.message, s.n.sound])).toEqual([[ROOT, line!.message, "none"]])
    // opencode's next retries of the same quota say the same: nothing more happens
    await retry(b, ROOT, QUOTA)
    await settle(b)
    expect(prompts).toHaveLength(1)
    const { fallbacks: records } = await Effect.runPromise(Effect.scoped(Effect.flatMap(SharedState, (s) => s.read(Date.now(), { fallbacks: true })).pipe(Effect.provide(reader(b.stateDir)))))
    expect(records.map((r) => [r.session, r.original, r.active])).toEqual([[ROOT, "main/big", "fb/one"]])
    // the in-chat pool_status tool shows it as ocpool status does
    const text = await (b.hooks.tool!.pool_status as unknown as { execute: (a: unknown, c: unknown) => Promise<string> }).execute({}, {})
    expect(text).toMatch(new RegExp(`^fallbacks:\n  ${ROOT}  main/big → fb/one  until \\d\\d:\\d\\d:\\d\\dZ`, "m"))
  })

  it("US-50 a quota error opencode does not retry takes the idle path: no abort, the prompt once the session is idle", async () => {
    const prompts: Array<PromptCall> = []
    const b = await boot({ fallbackModels: ["fb/one"] }, prompts)
    await userMessage(b, ROOT, "main/big")
    await event(b, "session.error", { sessionID: ROOT, error: apiError("Monthly usage limit reached", 400) })
    await settle(b)
    expect(b.aborts).toEqual([])
    expect(prompts.map((p) => `${p.model.providerID}/${p.model.modelID} ${p.agent} ${p.text}`)).toEqual(["fb/one build continue"])
  })

  it("US-50 while the original cools a message naming it runs on the fallback; other models are left alone, another root on the cooling model switches before sending", async () => {
    const prompts: Array<PromptCall> = []
    const b = await boot({ fallbackModels: ["fb/one"] }, prompts)
    await userMessage(b, ROOT, "main/big")
    await retry(b, ROOT, QUOTA)
    await settle(b)
    expect(await userMessage(b, ROOT, "main/big")).toBe("fb/one")
    expect(await userMessage(b, ROOT, "other/model")).toBe("other/model")
    // another root session on the cooling model switches before its request (issue 35), in an episode of its own
    expect(await userMessage(b, "ses_other_root", "main/big")).toBe("fb/one")
    expect(b.logs.some((l) => l.message === `session ${ROOT}: message on main/big runs on fb/one while main/big cools`)).toBe(true)
  })

  it("US-50 a context limit, bad credentials, an abort, a child's quota and an empty list never switch", async () => {
    const prompts: Array<PromptCall> = []
    const b = await boot({ fallbackModels: ["fb/one"] }, prompts)
    await userMessage(b, ROOT, "main/big")
    await event(b, "session.error", { sessionID: ROOT, error: apiError("This model's maximum context length is 8192 tokens", 400) })
    await event(b, "session.error", { sessionID: ROOT, error: apiError("Invalid API key", 401) })
    await event(b, "session.error", { sessionID: ROOT, error: { name: "MessageAbortedError", data: { message: "aborted" } } })
    await childCreated(b, "ses_child", ROOT, "general")
    await userMessage(b, "ses_child", "main/big")
    await retry(b, "ses_child", QUOTA)
    await settle(b)
    expect(prompts).toEqual([])
    const none: Array<PromptCall> = []
    const off = await boot({}, none)
    await userMessage(off, ROOT, "main/big")
    await retry(off, ROOT, QUOTA)
    await event(off, "session.error", { sessionID: ROOT, error: apiError("Monthly usage limit reached", 400) })
    await settle(off)
    expect(none).toEqual([])
    expect(off.aborts).toEqual([])
    expect(off.logs.some((l) => l.message.startsWith("Switched"))).toBe(false)
  })

  it("US-50 a prompt that cannot be sent is one warning; the session stays, nothing loops", async () => {
    const prompts: Array<PromptCall> = []
    const b = await boot({ fallbackModels: ["fb/one"] }, prompts, "prompt: HTTP 500")
    await userMessage(b, ROOT, "main/big")
    await retry(b, ROOT, QUOTA)
    await settle(b)
    expect(b.logs.filter((l) => l.level === "warn").map((l) => l.message)).toContain(`session ${ROOT} was not switched to fb/one: prompt: HTTP 500; it stays where it is`)
  })

  it("US-50 a message on a model another process already cools switches before it is sent (issue 35): no abort, no continue, the message itself on the fallback; one log line and notification; replays", async () => {
    const prompts: Array<PromptCall> = []
    const path = join(tmp(), "trace.jsonl")
    const b = await boot({ fallbackModels: ["fb/one", "fb/two"], trace: path }, prompts)
    const now = Date.now()
    const cooled = { model: "main/big", reason: "rate_limit" as const, strikes: 1, scope: "model" as const, since: now, until: now + 10 * 60_000, source: "header" as const }
    await Effect.runPromise(Effect.scoped(Effect.flatMap(SharedState, (s) => s.commit(now, { cool: [cooled], uncool: [] })).pipe(Effect.provide(reader(b.stateDir)))))
    expect(await userMessage(b, ROOT, "main/big", "plan")).toBe("fb/one")
    await settle(b)
    expect(b.aborts).toEqual([])
    expect(prompts).toEqual([])
    const lines = b.logs.filter((l) => l.message.startsWith("Switched to "))
    expect(lines.map((l) => l.message)).toEqual([expect.stringMatching(/^Switched to fb\/one: main\/big hit its (rate limit|quota), resets \d\d:\d\dZ$/)])
    await Effect.runPromise(b.hooks.notifications.settle)
    expect(b.sends.map((s) => s.n.message)).toEqual([lines[0]!.message])
    // the next message naming it runs on the fallback too, without a second switch; another model is left alone
    expect(await userMessage(b, ROOT, "main/big", "plan")).toBe("fb/one")
    expect(await userMessage(b, ROOT, "other/model", "plan")).toBe("other/model")
    await settle(b)
    expect(b.logs.filter((l) => l.message.startsWith("Switched to "))).toHaveLength(1)
    const { fallbacks: records } = await Effect.runPromise(Effect.scoped(Effect.flatMap(SharedState, (s) => s.read(Date.now(), { fallbacks: true })).pipe(Effect.provide(reader(b.stateDir)))))
    expect(records.map((r) => [r.session, r.original, r.active])).toEqual([[ROOT, "main/big", "fb/one"]])
    const decisions = readFileSync(`${path}.decisions.jsonl`, "utf8")
    expect(decisions).toContain(`"type":"switch","session":"${ROOT}","from":"main/big","to":"fb/one","via":"message"`)
    const replayed = replayText(readFileSync(path, "utf8"))
    expect(replayed.error).toBeUndefined()
    expect(replayed.decisions.map((d) => `${formatDecision(d)}\n`).join("")).toBe(decisions)
  })

  it("US-50 the switch is recorded and replays to the same decisions", async () => {
    const prompts: Array<PromptCall> = []
    const path = join(tmp(), "trace.jsonl")
    const c = await boot({ fallbackModels: ["fb/one", "fb/two"], trace: path }, prompts)
    await userMessage(c, ROOT, "main/big")
    await retry(c, ROOT, QUOTA)
    await settle(c)
    await userMessage(c, ROOT, "main/big")
    await event(c, "session.error", { sessionID: ROOT, error: apiError("Monthly usage limit reached", 400) })
    await settle(c)
    const recorded = readFileSync(path, "utf8")
    const decisions = readFileSync(`${path}.decisions.jsonl`, "utf8")
    expect(decisions).toContain(`"type":"switch","session":"${ROOT}","from":"main/big","to":"fb/one","via":"abort"`)
    expect(decisions).toContain(`"type":"model","session":"${ROOT}","requested":"main/big","model":"fb/one"`)
    expect(decisions).toContain(`"type":"switch","session":"${ROOT}","from":"fb/one","to":"fb/two","via":"idle"`)
    expect(recorded).toContain(`"type":"switched"`)
    const replayed = replayText(recorded)
    expect(replayed.error).toBeUndefined()
    expect(replayed.decisions.map((d) => `${formatDecision(d)}\n`).join("")).toBe(decisions)
  })
})
