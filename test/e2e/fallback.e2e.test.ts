/**
 * Fallback models for the primary session (issue 12, US-50) inside the real opencode 1.18.33 (offline,
 * fake provider): a root session on fakeA/pool-a whose model runs out of quota continues, without the
 * user typing anything, on the first of `fallbackModels` (fakeB/pool-c) with one "continue" message:
 * after a 429 that opencode retries (the plugin aborts on the first retry, waits until the session is no
 * longer busy, then prompts), and after a 400 it does not retry (the plugin waits for the idle). A
 * context-limit error never switches, and with `fallbackModels: []` a quota answer changes nothing.
 * After a switch a message naming the cooling original runs on the fallback; one log line says so and
 * `ocpool status` lists the episode. A root whose model another process already cooled (here benched by
 * hand with `ocpool cool set`, reason `manual`, in the shared state dir) switches before its request
 * (issue 35, DECISIONS 291): the fake never sees the cooled model, one switch line, and the next
 * message naming the original runs on the fallback without a second one. `npm run test:e2e`.
 */
import { beforeAll, describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { poolLogLines } from "./poolLog.js"
import { e2eWorld } from "./world.js"
import {
  fakeConfig,
  sleep,
  textOf,
  type FakeLlm,
  type FakeQueueEntry,
  type FakeRequest,
  type HarnessEvent,
  type MessageWithParts,
  type OpencodeHandle,
  type PluginEntry
} from "./harness.js"

const ROOT = new URL("../../", import.meta.url).pathname
const CLI = join(ROOT, "bin/ocpool.js")
const TURN_MS = 60_000
/** How long "nothing happens" is watched for after the session settles. */
const QUIET_MS = 5_000
const SLOTS = ["fakeB/pool-b", "fakeB/pool-c"]
const ORIGINAL = { provider: "fakeA", model: "pool-a", full: "fakeA/pool-a" } as const
const FALLBACK = { provider: "fakeB", model: "pool-c", full: "fakeB/pool-c" } as const
const QUOTA_429 = "You exceeded your current quota, please check your plan and billing details."
const QUOTA_400 = "Monthly usage limit reached"
const CONTEXT_400 = "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens."
const SWITCH_LINE = `Switched to ${FALLBACK.full}: ${ORIGINAL.full} hit its quota, resets `

const pluginEntry = (fallbackModels: ReadonlyArray<string> | undefined): PluginEntry => [
  join(ROOT, "dist/opencode-plugin.js"),
  { models: { slots: SLOTS.map((model) => ({ model, weight: 1 })) }, ...(fallbackModels !== undefined ? { fallbackModels } : {}) }
]

const world = e2eWorld(80)
let fake: FakeLlm
beforeAll(() => {
  fake = world.fake
})

/** One opencode server per test: the original's cooldown is state shared by every session of a state dir. */
const start = (fallbackModels: ReadonlyArray<string> | undefined) => world.start({ configJson: fakeConfig({ fakeUrl: fake.url }), pluginPaths: [pluginEntry(fallbackModels)] })

const switchLines = (oc: OpencodeHandle) => poolLogLines(oc.readLog()).filter((l) => l.startsWith("Switched to "))

const isChat = (r: FakeRequest) => r.behavior !== "title"
const onFallback = (r: FakeRequest) => r.provider === FALLBACK.provider && r.model === FALLBACK.model
const onOriginal = (r: FakeRequest) => r.provider === ORIGINAL.provider && r.model === ORIGINAL.model

const userTexts = (messages: ReadonlyArray<MessageWithParts>) => messages.filter((m) => m.info.role === "user").map((m) => textOf(m))
const assistants = (messages: ReadonlyArray<MessageWithParts>) => messages.filter((m) => m.info.role === "assistant")
const modelOf = (m: MessageWithParts | undefined) => (m === undefined ? undefined : `${m.info["providerID"]}/${m.info["modelID"]}`)

/** Polls the session's messages until `pred` holds; returns them. */
const messagesUntil = async (oc: OpencodeHandle, session: string, pred: (ms: ReadonlyArray<MessageWithParts>) => boolean, timeoutMs = TURN_MS) => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const ms = await oc.messages(session)
    if (pred(ms)) return ms
    if (Date.now() >= deadline) throw new Error(`timeout (${timeoutMs} ms) waiting for the messages of ${session}:\n${summary(ms)}`)
    await sleep(200)
  }
}
const summary = (ms: ReadonlyArray<MessageWithParts>) =>
  ms
    .map((m) => `${m.info.role} ${modelOf(m)} agent=${m.info["agent"]} completed=${m.info["time"]?.completed !== undefined} error=${JSON.stringify(m.info["error"] ?? null).slice(0, 160)} text=${JSON.stringify(textOf(m).slice(0, 80))}`)
    .join("\n")

/** Polls GET /session/status until the session is listed neither busy nor retry. */
const notBusy = async (oc: OpencodeHandle, session: string, timeoutMs = TURN_MS) => {
  const deadline = Date.now() + timeoutMs
  while ((await oc.status())[session] !== undefined) {
    if (Date.now() >= deadline) throw new Error(`timeout (${timeoutMs} ms): ${session} still ${JSON.stringify((await oc.status())[session])}`)
    await sleep(100)
  }
}

const retryOf = (session: string) => (e: HarnessEvent) => e.type === "session.status" && e.properties["sessionID"] === session && e.properties["status"]?.type === "retry"
const errorOf = (session: string) => (e: HarnessEvent) => e.type === "session.error" && e.properties["sessionID"] === session

/** The root session's switch to the fallback has completed: a completed assistant reply of the fallback after a "continue". */
const switchedReply = (ms: ReadonlyArray<MessageWithParts>) => {
  const i = ms.findIndex((m) => m.info.role === "user" && textOf(m) === "continue")
  return i >= 0 && ms.slice(i + 1).some((m) => m.info.role === "assistant" && modelOf(m) === FALLBACK.full && m.info["time"]?.completed !== undefined)
}

/** The built CLI over this server's state dir, with a pool file naming the same slots. */
const ocpool = (oc: OpencodeHandle, args: ReadonlyArray<string>) => {
  const pool = join(oc.home, "fallback-e2e-pool.txt")
  writeFileSync(pool, SLOTS.join("\n") + "\n")
  const withPool = args[0] === "status" ? [...args, "--pool", pool] : args
  return spawnSync(process.execPath, [CLI, ...withPool, "--state-dir", oc.stateDir], { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } })
}

/** After the switch: exactly one "continue", the fallback's reply last, its provider request after the original's failure, and no second switch. */
const expectOneSwitch = async (oc: OpencodeHandle, session: string, opening: string, before: number, failedStatus: number) => {
  const ms = await messagesUntil(oc, session, switchedReply)
  await notBusy(oc, session)
  // settle: a second "continue" or a second switch would come within this window
  await sleep(2_000)
  const settled = await oc.messages(session)
  const users = settled.filter((m) => m.info.role === "user")
  expect(userTexts(settled), summary(settled)).toEqual([opening, "continue"])
  const [first, cont] = users
  // the "continue" names the fallback and keeps the agent of the user's message
  expect(cont!.info["agent"], summary(settled)).toBe(first!.info["agent"])
  expect(cont!.info["model"]).toMatchObject({ providerID: FALLBACK.provider, modelID: FALLBACK.model })
  const last = assistants(settled).at(-1)
  expect(modelOf(last), summary(settled)).toBe(FALLBACK.full)
  expect(last!.info["time"]?.completed).toBeDefined()
  expect(last!.info["error"]).toBeUndefined()
  expect(ms.length).toBeLessThanOrEqual(settled.length)

  const sent = (await fake.requests(before)).filter(isChat)
  const failed = sent.filter((r) => onOriginal(r) && r.status === failedStatus)
  expect(failed.length, JSON.stringify(sent.map((r) => [r.seq, r.provider, r.model, r.behavior, r.status]))).toBeGreaterThan(0)
  const toFallback = sent.filter(onFallback)
  expect(toFallback.length).toBeGreaterThan(0)
  expect(toFallback[0]!.seq).toBeGreaterThan(failed[0]!.seq)
  expect(toFallback.every((r) => r.lastUserText === "continue")).toBe(true)
  expect(toFallback.every((r) => r.status === 200)).toBe(true)

  // one log line per switch
  await expect.poll(() => switchLines(oc).length, { timeout: 5_000, interval: 100 }).toBe(1)
  const line = switchLines(oc)[0]!
  expect(line.startsWith(SWITCH_LINE), line).toBe(true)
  expect(line.slice(SWITCH_LINE.length)).toMatch(/^\d\d:\d\dZ$/)
  return settled
}

/** Nothing switched: no "continue", no request to the fallback, no switch line, within QUIET_MS of `settledAt`. */
const expectNoSwitch = async (oc: OpencodeHandle, session: string, opening: string, before: number) => {
  await sleep(QUIET_MS)
  const ms = await oc.messages(session)
  expect(userTexts(ms), summary(ms)).toEqual([opening])
  const sent = (await fake.requests(before)).filter(isChat)
  expect(sent.filter(onFallback), JSON.stringify(sent.map((r) => [r.seq, r.provider, r.model, r.behavior, r.status]))).toEqual([])
  expect(switchLines(oc)).toEqual([])
  return { ms, sent }
}

const debug = (what: string, value: unknown) => {
  if (process.env.E2E_DEBUG === "1") console.log(`[fallback.e2e] ${what}: ${typeof value === "string" ? value : JSON.stringify(value, null, 1)}`)
}
/** The session's events after `since`, condensed (for E2E_DEBUG). */
const eventTrail = (oc: OpencodeHandle, session: string, since: number) =>
  oc.events
    .filter((e) => e.i >= since && (e.properties["sessionID"] === session || e.properties["info"]?.sessionID === session) && /^session\.(status|idle|error)$/.test(e.type))
    .map((e) => `${e.at} ${e.type} ${JSON.stringify(e.type === "session.error" ? { name: e.properties["error"]?.name, message: e.properties["error"]?.data?.message } : (e.properties["status"] ?? {})).slice(0, 200)}`)

/**
 * A new root session whose first request on the original model gets `answer` (a fake queue entry):
 * the session, the fake's request count before it, and the prompt's mark.
 */
const openAnswered = async (oc: OpencodeHandle, answer: Omit<FakeQueueEntry, "model">, opening: string) => {
  const session = (await oc.createSession()).id
  const before = (await fake.health()).requests
  await fake.enqueue({ ...answer, model: ORIGINAL.model })
  const mark = await oc.prompt(session, opening)
  return { session, before, mark }
}

describe("fallback models for the primary session in the real opencode 1.18.33 (US-50)", () => {
  it("US-50 a quota 429 on the root's model: on the first retry the session is aborted and continued once on the fallback; the switch is logged and listed by ocpool status; a next message naming the original runs on the fallback", async () => {
    const oc = await start([FALLBACK.full])
    const opening = "work until the quota runs out"
    const { session, before, mark } = await openAnswered(oc, { behavior: "429", retryAfter: 120, message: QUOTA_429 }, opening)
    // opencode retries the 429 (retry-after 120): the plugin acts on that first retry
    const retry = await oc.waitForEvent(retryOf(session), TURN_MS, mark)
    debug("retry event", retry.properties)

    await expectOneSwitch(oc, session, opening, before, 429)
    debug("429 events", eventTrail(oc, session, mark))
    // the 429 was answered once: the plugin aborted before opencode's retry after 120 s
    const sent = (await fake.requests(before)).filter(isChat)
    expect(sent.filter((r) => onOriginal(r) && r.status === 429)).toHaveLength(1)

    // the user's next message names the original explicitly: it runs on the fallback while the original cools
    const mid = (await fake.health()).requests
    const next = "and now the next step"
    const mark2 = await oc.prompt(session, next, { model: ORIGINAL.full })
    await oc.waitIdle(session, mark2, TURN_MS)
    const turn = (await fake.requests(mid)).filter((r) => isChat(r) && r.lastUserText === next)
    expect(turn.length, JSON.stringify(turn)).toBeGreaterThan(0)
    expect(turn.map((r) => `${r.provider}/${r.model}`)).toEqual(turn.map(() => FALLBACK.full))
    const ms = await messagesUntil(oc, session, (xs) => {
      const a = assistants(xs).at(-1)
      return a !== undefined && a.info["time"]?.completed !== undefined && userTexts(xs).at(-1) === next
    })
    expect(modelOf(assistants(ms).at(-1)), summary(ms)).toBe(FALLBACK.full)
    // still one "continue" and one switch
    expect(userTexts(ms).filter((t) => t === "continue")).toHaveLength(1)
    expect(switchLines(oc)).toHaveLength(1)

    // ocpool status lists the episode (the original still cools): the session, original → active
    const status = ocpool(oc, ["status"])
    expect(status.status, status.stderr).toBe(0)
    debug("ocpool status", status.stdout)
    expect(status.stdout).toMatch(/(^|\n)fallbacks:\n/)
    const fallbackSection = status.stdout.slice(status.stdout.indexOf("fallbacks:"))
    const line = fallbackSection.split("\n").find((l) => l.includes(session))
    expect(line, status.stdout).toBeDefined()
    expect(line).toContain(`${ORIGINAL.full} → ${FALLBACK.full}`)
    const json = ocpool(oc, ["status", "--json"])
    expect(json.status, json.stderr).toBe(0)
    const fallbacks = (JSON.parse(json.stdout) as { fallbacks?: Array<{ session: string; original: string; active: string; until: unknown }> }).fallbacks
    expect(fallbacks, json.stdout).toEqual([expect.objectContaining({ session, original: ORIGINAL.full, active: FALLBACK.full })])
    // until: when the original recovers (epoch ms), the 429's retry-after of 120 s after it was answered
    const answered = sent.find((r) => onOriginal(r) && r.status === 429)!
    expect(typeof fallbacks![0]!.until).toBe("number")
    expect(Math.abs((fallbacks![0]!.until as number) - (answered.t + 120_000))).toBeLessThan(5_000)
    // the episode's file is a state file: the state dir stays trusted (no "not trusted … read only" warning)
    expect(`${status.stdout}${status.stderr}${json.stderr}`).not.toMatch(/not trusted/)
  })

  it("US-50 a root session whose model another process cooled switches to its fallback before sending: no request for the cooled model, one switch line, and the next message runs on the fallback too", async () => {
    // the title generator on the fallback's provider too, so that nothing at all asks the cooled model
    const oc = await world.start({ configJson: fakeConfig({ fakeUrl: fake.url, smallModel: "fakeB/pool-b" }), pluginPaths: [pluginEntry([FALLBACK.full])] })
    // another process benches the original by hand, in the state every process shares (reason `manual`)
    const set = ocpool(oc, ["cool", "set", ORIGINAL.full, "--for", "10m"])
    expect(set.status, `${set.stdout}${set.stderr}`).toBe(0)
    const cool = ocpool(oc, ["cool", "--json"])
    expect(cool.status, cool.stderr).toBe(0)
    const cooling = (JSON.parse(cool.stdout) as { cooling: Array<{ model: string; reason: string; until: number }> }).cooling
    expect(cooling, cool.stdout).toEqual([expect.objectContaining({ model: ORIGINAL.full, reason: "manual" })])
    const until = cooling[0]!.until

    const session = (await oc.createSession()).id
    const before = (await fake.health()).requests
    // the first message on the session's default model (the cooled original)
    const opening = "start on the cooled model"
    const mark = await oc.prompt(session, opening)
    await oc.waitIdle(session, mark, TURN_MS)
    const first = await messagesUntil(oc, session, (xs) => {
      const a = assistants(xs).at(-1)
      return a !== undefined && a.info["time"]?.completed !== undefined && userTexts(xs).at(-1) === opening
    })
    debug("pre-send switch messages", summary(first))
    // the user's message itself was rewritten: no abort, no "continue"
    expect(userTexts(first), summary(first)).toEqual([opening])
    expect(first.find((m) => m.info.role === "user")!.info["model"], summary(first)).toMatchObject({ providerID: FALLBACK.provider, modelID: FALLBACK.model })
    expect(assistants(first).map(modelOf), summary(first)).toEqual(assistants(first).map(() => FALLBACK.full))
    expect(assistants(first).at(-1)!.info["error"]).toBeUndefined()
    // (1) no request for the cooled model, title generator included; the turn's requests went to the fallback
    const turn1 = await fake.requests(before)
    const trail = JSON.stringify(turn1.map((r) => [r.seq, r.provider, r.model, r.behavior, r.status, r.lastUserText]))
    expect(turn1.filter(onOriginal), trail).toEqual([])
    const chat1 = turn1.filter(isChat)
    expect(chat1.length, trail).toBeGreaterThan(0)
    expect(chat1.every((r) => onFallback(r) && r.status === 200 && r.lastUserText === opening), trail).toBe(true)
    // (2) exactly one switch line, naming the original's cooldown end
    await expect.poll(() => switchLines(oc).length, { timeout: 5_000, interval: 100 }).toBe(1)
    const line = switchLines(oc)[0]!
    expect(line, line).toBe(`Switched to ${FALLBACK.full}: ${ORIGINAL.full} hit its quota, resets ${new Date(until).toISOString().slice(11, 16)}Z`)
    expect(oc.events.filter((e) => e.i >= mark && errorOf(session)(e))).toEqual([])
    // the message's own rewrite (the `model` decision after the switch): one line for this message
    const rewriteLine = `session ${session}: message on ${ORIGINAL.full} runs on ${FALLBACK.full} while ${ORIGINAL.full} cools`
    const rewrites = () => poolLogLines(oc.readLog()).filter((l) => l === rewriteLine).length
    expect(rewrites()).toBe(1)

    // (3) a second message naming the original explicitly also runs on the fallback, without a second switch
    const mid = (await fake.health()).requests
    const next = "and the next step"
    const mark2 = await oc.prompt(session, next, { model: ORIGINAL.full })
    await oc.waitIdle(session, mark2, TURN_MS)
    const second = await messagesUntil(oc, session, (xs) => {
      const a = assistants(xs).at(-1)
      return a !== undefined && a.info["time"]?.completed !== undefined && userTexts(xs).at(-1) === next
    })
    expect(userTexts(second), summary(second)).toEqual([opening, next])
    expect(assistants(second).map(modelOf), summary(second)).toEqual(assistants(second).map(() => FALLBACK.full))
    const turn2 = await fake.requests(mid)
    const trail2 = JSON.stringify(turn2.map((r) => [r.seq, r.provider, r.model, r.behavior, r.status, r.lastUserText]))
    expect(turn2.filter(onOriginal), trail2).toEqual([])
    const chat2 = turn2.filter(isChat)
    expect(chat2.length, trail2).toBeGreaterThan(0)
    expect(chat2.every((r) => onFallback(r) && r.status === 200 && r.lastUserText === next), trail2).toBe(true)
    // settle: a late second switch would come within this window
    await sleep(1_000)
    expect(switchLines(oc)).toHaveLength(1)
    expect(rewrites()).toBe(2)
  })

  it("US-50 a quota 400 that opencode does not retry: once the session is idle it is continued once on the fallback", async () => {
    const oc = await start([FALLBACK.full])
    const opening = "work until the monthly limit"
    const { session, before, mark } = await openAnswered(oc, { behavior: "limit-400", message: QUOTA_400 }, opening)
    const error = await oc.waitForEvent(errorOf(session), TURN_MS, mark)
    expect(error.properties["error"]?.data?.message).toContain(QUOTA_400)

    await expectOneSwitch(oc, session, opening, before, 400)
    debug("400 events", eventTrail(oc, session, mark))
    // opencode did not retry the 400, and no retry status came
    const sent = (await fake.requests(before)).filter(isChat)
    expect(sent.filter((r) => onOriginal(r) && r.status === 400)).toHaveLength(1)
    expect(oc.events.filter((e) => e.i >= mark && retryOf(session)(e))).toEqual([])
  })

  it("US-50 a context-limit error on the root's model never switches, even with a fallback configured", async () => {
    const oc = await start([FALLBACK.full])
    const opening = "a prompt that is too long"
    const { session, before, mark } = await openAnswered(oc, { behavior: "error", status: 400, message: CONTEXT_400 }, opening)
    const error = await oc.waitForEvent(errorOf(session), TURN_MS, mark)
    debug("context-limit session.error", error.properties)
    await notBusy(oc, session)
    const { sent } = await expectNoSwitch(oc, session, opening, before)
    expect(sent.filter((r) => onOriginal(r) && r.status === 400).length).toBeGreaterThan(0)
    debug("context-limit events", eventTrail(oc, session, mark))
  })

  it("US-50 with fallbackModels [] a quota 429 and a quota 400 change nothing: no continue, no request to another model", async () => {
    const oc = await start([])
    // the 429: opencode parks the session in retry (retry-after 120) and nothing else happens
    const { session: s429, before, mark } = await openAnswered(oc, { behavior: "429", retryAfter: 120, message: QUOTA_429 }, "no fallback, 429")
    const retry = await oc.waitForEvent(retryOf(s429), TURN_MS, mark)
    debug("429 retry (no fallback)", retry.properties)
    await expectNoSwitch(oc, s429, "no fallback, 429", before)
    expect((await oc.status())[s429]?.type).toBe("retry")
    // the user's own abort: opencode's view of it, and still nothing switches
    const abortMark = oc.mark()
    const aborted = await oc.abort(s429)
    expect(aborted.status).toBe(200)
    const statusTrail: Array<string> = []
    for (let i = 0; i < 10; i++) {
      statusTrail.push(`${Date.now()} ${JSON.stringify((await oc.status())[s429] ?? null)}`)
      await sleep(50)
    }
    debug("status after abort (GET /session/status, every 50 ms)", statusTrail)
    await notBusy(oc, s429)
    debug("events after abort", eventTrail(oc, s429, abortMark))
    debug("429 messages after abort (no fallback)", (await oc.messages(s429)).map((m) => m.info))
    await expectNoSwitch(oc, s429, "no fallback, 429", before)

    // the 400: session.error, idle, and nothing else
    const { session: s400, before: before400, mark: mark400 } = await openAnswered(oc, { behavior: "limit-400", message: QUOTA_400 }, "no fallback, 400")
    await oc.waitForEvent(errorOf(s400), TURN_MS, mark400)
    await notBusy(oc, s400)
    const { sent } = await expectNoSwitch(oc, s400, "no fallback, 400", before400)
    expect(sent.filter((r) => onOriginal(r) && r.status === 400)).toHaveLength(1)
    debug("400 events (no fallback)", eventTrail(oc, s400, mark400))
    const ms = await oc.messages(s400)
    debug("400 messages (no fallback)", ms.map((m) => m.info))
  })

  it("US-50 without the fallbackModels option a quota 400 changes nothing", async () => {
    const oc = await start(undefined)
    const { session, before, mark } = await openAnswered(oc, { behavior: "limit-400", message: QUOTA_400 }, "no option, 400")
    await oc.waitForEvent(errorOf(session), TURN_MS, mark)
    await notBusy(oc, session)
    const { sent } = await expectNoSwitch(oc, session, "no option, 400", before)
    expect(sent.filter((r) => onOriginal(r) && r.status === 400)).toHaveLength(1)
  })
})
