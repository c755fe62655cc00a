/**
 * The one bus decoder (core/bus/decode.ts): each opencode bus event both engines read, as recorded
 * from opencode 1.18.33 and as hostile data, normalised once; the pool engine's events and the
 * notification inputs are mappings of it (plugin/events.ts, plugin/notifyEvents.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { readFileSync } from "node:fs"
import { decodeBusEvent, type BusEvent } from "../../../src/core/bus/decode.js"
import { TEXT_MAX } from "../../../src/core/extract.js"
import { SHOWN_MAX } from "../../../src/core/session/facts.js"
import { engineEventsOf } from "../../../src/plugin/hooks/bus.js"
import { notifyInputsOf } from "../../../src/plugin/notifyEvents.js"
import { cyclic, revoked, throwingGetters, trapEverything } from "../../plugin/hostile.js"

const SAMPLES = JSON.parse(readFileSync(new URL("../../fixtures/opencode-1.18.33/event-samples.json", import.meta.url), "utf8")) as Record<string, ReadonlyArray<unknown>>
const sample = (type: string, i = 0): unknown => SAMPLES[`event:${type}`]![i]
const ev = (type: string, properties: unknown): unknown => ({ type, properties })

describe("opencode 1.18.33's recorded events", () => {
  it("US-11 a root's session.created: its facts, no parent; the engine learns nothing, the notifications learn the session", () => {
    const e = decodeBusEvent(sample("session.created"))
    expect(e).toMatchObject({ type: "session", created: true, info: { id: "ses_dd4fc3b29ffeCUaMGfmT1t8JVE", parent: undefined, compacting: false } })
    expect(engineEventsOf(e)).toEqual([])
    expect(notifyInputsOf(e)).toEqual([{ type: "session", id: "ses_dd4fc3b29ffeCUaMGfmT1t8JVE", parent: undefined, title: "New session - 2026-11-30T05:53:17.014Z", agent: undefined, compacting: false }])
  })

  it("US-4 session.error: a bounded copy for the engine, name and message for the notification", () => {
    const e = decodeBusEvent(sample("session.error"))
    expect(e?.type).toBe("sessionError")
    const [engine] = engineEventsOf(e)
    expect(engine).toMatchObject({ type: "error", session: "ses_dd4fc1628ffeVec1jNp8CqF8xN", error: { name: "APIError", data: { statusCode: 429 } } })
    expect(notifyInputsOf(e)).toEqual([{ type: "error", session: "ses_dd4fc1628ffeVec1jNp8CqF8xN", name: "APIError", message: "Rate limit exceeded (fake 429)" }])
  })

  it("US-12 asks and their answers: the engine's ask and answer, the notification's question and permission", () => {
    const q = decodeBusEvent(sample("question.asked"))
    expect(q).toEqual({ type: "question", session: "ses_dd4fbc08dffeZZec4kBq9XWuJo", id: "que_22b04403b001LPE7HKY6xAGEca", texts: ["Pick one?"] })
    expect(engineEventsOf(q)).toEqual([{ type: "ask", session: "ses_dd4fbc08dffeZZec4kBq9XWuJo", id: "que_22b04403b001LPE7HKY6xAGEca" }])
    const p = decodeBusEvent(sample("permission.asked"))
    expect(notifyInputsOf(p)).toEqual([{ type: "permission", session: "ses_dd4fbc412ffexGHeQDq161zasX", id: "per_22b043d6e001tvJG6q8C0p5Uyr", permission: "bash", pattern: "echo probe-bash" }])
    const a = decodeBusEvent(sample("question.replied"))
    expect(engineEventsOf(a)).toEqual([{ type: "answered", session: "ses_dd4fbc08dffeZZec4kBq9XWuJo", id: "que_22b04403b001LPE7HKY6xAGEca" }])
    expect(notifyInputsOf(a)).toEqual([{ type: "answered", session: "ses_dd4fbc08dffeZZec4kBq9XWuJo", id: "que_22b04403b001LPE7HKY6xAGEca" }])
  })

  it("US-8 every recorded event decodes without throwing, and busy and idle reach both engines alike", () => {
    for (const events of Object.values(SAMPLES)) for (const raw of events) decodeBusEvent(raw)
    const busy = decodeBusEvent(sample("session.status"))
    expect(engineEventsOf(busy)).toEqual(notifyInputsOf(busy))
    const idle = decodeBusEvent(sample("session.idle"))
    expect(idle?.type).toBe("idle")
    expect(engineEventsOf(idle)).toEqual(notifyInputsOf(idle))
  })
})

describe("each kind of event, normalised", () => {
  const child = { id: "C", parentID: "P", agent: "explore-2", title: "t (@explore-2 subagent)", time: { compacting: 5 } }
  it.each<readonly [string, unknown, BusEvent | undefined]>([
    ["a child's creation", ev("session.created", { info: child }), { type: "session", created: true, info: { id: "C", parent: "P", agent: "explore-2", title: "t (@explore-2 subagent)", shown: "t (@explore-2 subagent)", compacting: true } }],
    ["an update without an id", ev("session.updated", { info: { title: "x" } }), undefined],
    ["a deletion by info", ev("session.deleted", { info: { id: "S" } }), { type: "deleted", id: "S" }],
    ["a deletion by session id", ev("session.deleted", { sessionID: "S" }), { type: "deleted", id: "S" }],
    ["a user message", ev("message.updated", { info: { sessionID: "S", role: "user" } }), { type: "message", session: "S", role: "user" }],
    ["an assistant error", ev("message.updated", { info: { sessionID: "S", role: "assistant", error: { name: "APIError" }, providerID: "p", modelID: "m" } }), { type: "assistantError", session: "S", error: { name: "APIError" }, model: "p/m" }],
    ["an assistant message with a null error", ev("message.updated", { info: { sessionID: "S", role: "assistant", error: null } }), { type: "message", session: "S", role: "assistant" }],
    ["a text part", ev("message.part.updated", { part: { sessionID: "S", type: "text" } }), { type: "part", session: "S", signal: "output" }],
    ["a retry part", ev("message.part.updated", { part: { sessionID: "S", type: "retry" } }), undefined],
    ["a step part", ev("message.part.updated", { part: { sessionID: "S", type: "step-start" } }), { type: "part", session: "S", signal: "activity" }],
    ["a retry status", ev("session.status", { sessionID: "S", status: { type: "retry", message: "busy", next: 5, action: { provider: "p" } } }), { type: "retry", session: "S", message: "busy", next: 5, provider: "p" }],
    ["a retry status with nothing readable", ev("session.status", { sessionID: "S", status: { type: "retry", next: Infinity } }), { type: "retry", session: "S", message: "", next: 0, provider: undefined }],
    ["an unknown status", ev("session.status", { sessionID: "S", status: { type: "compacting" } }), undefined],
    ["a session error without an error", ev("session.error", { sessionID: "S" }), { type: "sessionError", session: "S", error: undefined }],
    ["an answer naming no request", ev("permission.replied", { sessionID: "S" }), { type: "answered", session: "S", id: undefined }],
    ["an answer by permission id", ev("permission.replied", { sessionID: "S", permissionID: "p1" }), { type: "answered", session: "S", id: "p1" }],
    ["an event neither engine reads", ev("todo.updated", { sessionID: "S" }), undefined]
  ])("US-8 %s", (_name, raw, expected) => {
    expect(decodeBusEvent(raw)).toEqual(expected)
  })

  it("US-5 only a created child is the engine's `child`; an answer naming no request answers every ask", () => {
    expect(engineEventsOf(decodeBusEvent(ev("session.created", { info: { id: "C", parentID: "P", agent: "explore-2", title: "t" } })))).toEqual([{ type: "child", id: "C", parent: "P", agent: "explore-2", title: "t" }])
    expect(engineEventsOf(decodeBusEvent(ev("session.updated", { info: { id: "C", parentID: "P" } })))).toEqual([])
    expect(engineEventsOf(decodeBusEvent(ev("question.rejected", { sessionID: "S" })))).toEqual([{ type: "answered", session: "S", id: "*" }])
    expect(engineEventsOf(decodeBusEvent(ev("message.part.updated", { part: { sessionID: "S", type: "tool" } })))).toEqual([
      { type: "output", session: "S" },
      { type: "activity", session: "S" }
    ])
  })

  it("US-8 an assistant message is activity that starts the first-token wait (issue 35); a user message is plain activity", () => {
    expect(engineEventsOf(decodeBusEvent(ev("message.updated", { info: { sessionID: "S", role: "assistant", error: null } })))).toEqual([{ type: "activity", session: "S", assistant: true }])
    expect(engineEventsOf(decodeBusEvent(ev("message.updated", { info: { sessionID: "S", role: "user" } })))).toEqual([{ type: "activity", session: "S" }])
  })

  it("US-11 a title past TEXT_MAX is no title for binding; the notification still shows its first SHOWN_MAX characters", () => {
    const title = "a".repeat(TEXT_MAX) + " (@explore-2 subagent)"
    const e = decodeBusEvent(ev("session.created", { info: { id: "C", parentID: "P", title } }))
    expect(e?.type === "session" && e.info.title).toBe(undefined)
    expect(e?.type === "session" && e.info.shown?.length).toBe(SHOWN_MAX)
  })
})

describe("hostile events", () => {
  const hostile = fc.constantFrom<() => unknown>(
    () => revoked(),
    () => cyclic({ type: "session.error", sessionID: "S" }),
    () => trapEverything(),
    () => ev("session.error", throwingGetters({ sessionID: "S", error: { name: "E" } }, ["error"])),
    () => ev("session.created", { info: throwingGetters({ id: "C", parentID: "P", title: "t" }, ["title", "agent", "time"]) }),
    () => ev("question.asked", { sessionID: "S", id: "q", questions: trapEverything() }),
    () => ev("message.updated", { info: { sessionID: "S", role: "assistant", error: cyclic({ message: "m" }) } }),
    () => ev("session.status", revoked()),
    () => ({ type: 7, properties: null }),
    () => null
  )
  it.prop("US-4 a hostile event never throws, nor does either mapping of it", [hostile], ([make]) => {
    const e = decodeBusEvent(make())
    expect(() => JSON.stringify(engineEventsOf(e))).not.toThrow()
    expect(() => notifyInputsOf(e)).not.toThrow()
  })
})
