/**
 * Notifications in the plugin (SPEC §10): opencode's recorded bus events through the event hook into
 * the notification engine, a recording notifier and scripted session lookups; fade timings on the
 * TestClock.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, TestClock } from "effect"
import { readFileSync } from "node:fs"
import { NotifyEngineTest, type NotifyEngineTestOptions } from "../../src/layers/notify/NotifyEngineTest.js"
import type { MemoryClose, MemorySend } from "../../src/layers/notify/NotifierMemory.js"
import { notifyInputs } from "../../src/plugin/notifyEvents.js"
import { NotifyEngine } from "../../src/services/notify/NotifyEngine.js"
import type { SessionFacts } from "../../src/services/opencode/SessionLookup.js"
import type { LogLevel } from "../../src/services/opencode/AppLog.js"
import { boot, event } from "./boot.js"
import { recordSpans } from "../support/spans.js"

const samples = JSON.parse(readFileSync(new URL("../fixtures/opencode-1.18.33/event-samples.json", import.meta.url), "utf8")) as Record<string, Array<unknown>>
const sample = (type: string, i = 0) => samples[`event:${type}`]![i] as { type: string; properties: Record<string, unknown> }

interface Rig {
  readonly sends: Array<MemorySend>
  readonly closes: Array<MemoryClose>
  readonly logs: Array<{ level: LogLevel; message: string }>
  readonly lookups: Array<string>
  readonly feed: (e: unknown) => Effect.Effect<void>
  readonly settle: Effect.Effect<void>
}

/** The engine over a recording notifier, on the test's clock; its log lines (Effect.log* included) in `logs`. */
const rig = (opts: NotifyEngineTestOptions = {}) =>
  Effect.gen(function* () {
    const t = NotifyEngineTest(opts)
    const engine = Context.get(yield* Layer.build(t.layer), NotifyEngine)
    const feed = (e: unknown) => Effect.forEach(notifyInputs(e), engine.apply, { discard: true })
    return { sends: t.sends, closes: t.closes, logs: t.logs, lookups: t.lookups, feed, settle: engine.settle } satisfies Rig
  })

const created = (id: string, title: string, parentID?: string, agent?: string) => ({
  type: "session.created",
  properties: { sessionID: id, info: { id, title, ...(parentID === undefined ? {} : { parentID }), ...(agent === undefined ? {} : { agent }), time: { created: 1 } } }
})
const status = (id: string, type: "busy" | "idle") => ({ type: "session.status", properties: { sessionID: id, status: { type } } })
const idle = (id: string) => ({ type: "session.idle", properties: { sessionID: id } })

describe("notifications in the plugin (SPEC §10)", () => {
  it.scoped("US-11 the recorded root session: busy then idle sends one done with its title, urgency normal, sound done", () =>
    Effect.gen(function* () {
      const r = yield* rig()
      yield* r.feed(sample("session.created"))
      yield* r.feed(sample("session.updated"))
      yield* r.feed(sample("session.status"))
      yield* r.feed(sample("session.idle"))
      yield* r.settle
      expect(r.sends).toHaveLength(1)
      expect(r.sends[0]!.n).toEqual({
        kind: "done",
        title: "opencode — New session - 2026-11-30T05:53:17.014Z",
        message: "Finished — waiting for your review",
        urgency: "normal",
        icon: "emblem-default",
        sound: "done"
      })
      expect(r.sends[0]!.key).toBe("ses_dd4fc3b29ffeCUaMGfmT1t8JVE")
      expect(r.logs.some((l) => l.level === "info" && l.message === "notified done via notify-send")).toBe(true)
    })
  )

  it.scoped("US-11 every input is the span NotifyEngine.apply; the send it decides is Notifier.send", () =>
    Effect.gen(function* () {
      const r = yield* rig()
      const spans = recordSpans()
      yield* Effect.zipRight(Effect.forEach([created("ses_r", "Root"), status("ses_r", "busy"), idle("ses_r")], r.feed), r.settle).pipe(Effect.withTracer(spans.tracer))
      expect(spans.names().filter((n) => n === "NotifyEngine.apply").length).toBeGreaterThanOrEqual(3)
      expect(spans.spans.find((s) => s.name === "Notifier.send")).toBeDefined()
      expect(r.sends).toHaveLength(1)
    })
  )

  it.scoped("US-11 the recorded child (@explore-2 subagent) going busy and idle sends nothing", () =>
    Effect.gen(function* () {
      const r = yield* rig()
      const child = sample("session.created", 2)
      yield* r.feed(child)
      const id = (child.properties.info as { id: string }).id
      yield* r.feed(status(id, "busy"))
      yield* r.feed(idle(id))
      yield* r.settle
      expect(r.sends).toEqual([])
      expect(r.lookups).toEqual([])
    })
  )

  it.scoped("US-11 error then idle, as opencode sends them: one critical Failed with the first line of the message, no done", () =>
    Effect.gen(function* () {
      const r = yield* rig()
      const e = sample("session.error", 2)
      const id = e.properties.sessionID as string
      yield* r.feed(created(id, "Fix login"))
      yield* r.feed(status(id, "busy"))
      yield* r.feed(e)
      yield* r.feed(idle(id))
      yield* r.settle
      expect(r.sends.map((s) => [s.n.kind, s.n.urgency, s.n.title, s.n.message])).toEqual([["error", "critical", "opencode — Fix login", "Failed: Type validation failed: Value: {\"error\":\"limit reached\"}."]])
    })
  )

  it.scoped("US-11 a notify-send failure is logged as notification failed via notify-send, and the hook goes on", () =>
    Effect.gen(function* () {
      const r = yield* rig({ outcomes: ["notify-send exited 1: no bus"] })
      yield* r.feed(created("ses_a", "A"))
      yield* r.feed(status("ses_a", "busy"))
      yield* r.feed(idle("ses_a"))
      yield* r.settle
      expect(r.logs.filter((l) => l.message.startsWith("notification failed"))).toEqual([{ level: "warn", message: "notification failed via notify-send: notify-send exited 1: no bus" }])
    })
  )

  it.scoped("US-11 notify-send failing the same way again is logged at debug level; a new reason, or one after a success, warns again", () =>
    Effect.gen(function* () {
      const r = yield* rig({ outcomes: ["no bus", "no bus", "ok", "no bus", "timed out", "timed out"] })
      for (const id of ["ses_a", "ses_b", "ses_c", "ses_d", "ses_e", "ses_f"]) {
        yield* r.feed(created(id, id))
        yield* r.feed(status(id, "busy"))
        yield* r.feed(idle(id))
        yield* r.settle
      }
      expect(r.logs.filter((l) => l.message.startsWith("notif")).map((l) => `${l.level} ${l.message}`)).toEqual([
        "warn notification failed via notify-send: no bus",
        "debug notification failed via notify-send: no bus",
        "info notified done via notify-send",
        "warn notification failed via notify-send: no bus",
        "warn notification failed via notify-send: timed out",
        "debug notification failed via notify-send: timed out"
      ])
    })
  )

  it.scoped("US-30 over the hop a popup raised while the root's close waits is sent after that close, so the desktop's close by key cannot take it too", () =>
    Effect.gen(function* () {
      const r = yield* rig({ channel: "ssh" })
      const q = sample("question.asked")
      const root = q.properties.sessionID as string
      yield* r.feed(created(root, "Plan"))
      yield* r.feed(status(root, "busy"))
      yield* r.feed(q)
      yield* TestClock.adjust(1_000)
      yield* r.feed(sample("question.replied"))
      yield* r.feed(idle(root))
      // the done is decided now but waits behind the close due at raised + 5 s
      expect(r.sends.map((s) => s.n.kind)).toEqual(["question"])
      yield* TestClock.adjust(4_000)
      yield* r.settle
      expect(r.closes).toEqual([{ key: root, ids: [] }])
      expect(r.sends.map((s) => s.n.kind)).toEqual(["question", "done"])
    })
  )

  it.scoped("US-14 three failed hops in one process: one warning, then two debug lines", () =>
    Effect.gen(function* () {
      const r = yield* rig({ outcomes: ["ssh exited 255: Connection refused"], channel: "ssh" })
      for (const id of ["ses_a", "ses_b", "ses_c"]) {
        yield* r.feed(created(id, id))
        yield* r.feed(status(id, "busy"))
        yield* r.feed(idle(id))
      }
      yield* r.settle
      expect(r.logs.filter((l) => l.message.startsWith("notification failed")).map((l) => l.level)).toEqual(["warn", "debug", "debug"])
    })
  )

  it.scoped("US-12 the recorded permission ask in a child: one permission notification for the root, naming bash and its pattern; done waits for the reply", () =>
    Effect.gen(function* () {
      const r = yield* rig()
      const ask = sample("permission.asked")
      const child = ask.properties.sessionID as string
      yield* r.feed(created("ses_root", "Deploy"))
      yield* r.feed(created(child, "x (@explore-1 subagent)", "ses_root", "explore-1"))
      yield* r.feed(status("ses_root", "busy"))
      yield* r.feed(ask)
      yield* r.feed(idle("ses_root"))
      yield* r.settle
      expect(r.sends.map((s) => [s.key, s.n.kind, s.n.message, s.n.sound])).toEqual([["ses_root", "permission", "Permission needed: bash (echo probe-bash)", "permission"]])
      yield* r.feed(sample("permission.replied"))
      yield* r.feed(status("ses_root", "busy"))
      yield* TestClock.adjust(6_000)
      yield* r.feed(idle("ses_root"))
      yield* r.settle
      expect(r.sends.map((s) => s.n.kind)).toEqual(["permission", "done"])
    })
  )

  it.scoped("US-12 the recorded question: Question: Pick one? with sound question", () =>
    Effect.gen(function* () {
      const r = yield* rig()
      const q = sample("question.asked")
      yield* r.feed(created(q.properties.sessionID as string, "Plan"))
      yield* r.feed(q)
      yield* r.settle
      expect(r.sends.map((s) => [s.n.kind, s.n.message, s.n.icon, s.n.sound])).toEqual([["question", "Question: Pick one?", "dialog-information", "question"]])
    })
  )

  it.scoped("US-11 a session never seen: its idle waits for session.get; a root that was busy then sends done, a failed lookup sends nothing", () =>
    Effect.gen(function* () {
      const known = new Map<string, SessionFacts>([["ses_old", { id: "ses_old", title: "Old work" }]])
      const r = yield* rig({ known })
      yield* r.feed(status("ses_old", "busy"))
      yield* r.feed(idle("ses_old"))
      yield* r.feed(status("ses_gone", "busy"))
      yield* r.feed(idle("ses_gone"))
      yield* r.settle
      expect(r.lookups).toEqual(["ses_old", "ses_gone"])
      expect(r.sends.map((s) => [s.key, s.n.title])).toEqual([["ses_old", "opencode — Old work"]])
      expect(r.logs.some((l) => l.level === "debug" && l.message.includes("ses_gone") && l.message.includes("lookup failed"))).toBe(true)
    })
  )

  it.scoped("US-30 a popup raised at t0 closes when the question is replied at t0+2 s, at t0+5 s and not before, with the id notify-send gave", () =>
    Effect.gen(function* () {
      const r = yield* rig({ outcomes: [{ id: 42 }] })
      const q = sample("question.asked")
      yield* r.feed(created(q.properties.sessionID as string, "Plan"))
      yield* r.feed(created("ses_other", "Other"))
      yield* r.feed(q)
      yield* r.feed(status("ses_other", "busy"))
      yield* r.feed(idle("ses_other"))
      yield* TestClock.adjust(2_000)
      yield* r.feed(sample("question.replied"))
      yield* TestClock.adjust(2_999)
      expect(r.closes).toEqual([])
      yield* TestClock.adjust(1)
      yield* r.settle
      expect(r.closes).toEqual([{ key: q.properties.sessionID, ids: [42] }])
    })
  )

  it.scoped("US-30 a popup a slow hop showed 2 s late stays up 5 s after it showed: the close waits until then, not until the decision + 5 s", () =>
    Effect.gen(function* () {
      const r = yield* rig({ channel: "ssh", latencyMs: 2_000 })
      const q = sample("question.asked")
      yield* r.feed(created(q.properties.sessionID as string, "Plan"))
      yield* r.feed(q)
      yield* TestClock.adjust(1_000)
      yield* r.feed(sample("question.replied"))
      // the decision's time (raised + 5 s) passes; the send only returned at raised + 2 s
      yield* TestClock.adjust(5_999)
      expect(r.closes).toEqual([])
      yield* TestClock.adjust(1)
      expect(r.closes).toEqual([{ key: q.properties.sessionID, ids: [] }])
      yield* TestClock.adjust(2_000)
      yield* r.settle
    })
  )

  it.scoped("US-30 a permission popup closed because the user typed in that chat answers nothing: the ask stays pending and holds the done back", () =>
    Effect.gen(function* () {
      const r = yield* rig({ outcomes: [{ id: 5 }] })
      const ask = sample("permission.asked")
      const asker = ask.properties.sessionID as string
      yield* r.feed(created(asker, "Deploy"))
      yield* r.feed(status(asker, "busy"))
      yield* r.feed(ask)
      yield* TestClock.adjust(6_000)
      yield* r.feed({ type: "message.updated", properties: { sessionID: asker, info: { id: "msg_2", role: "user", sessionID: asker } } })
      yield* r.feed(idle(asker))
      yield* r.settle
      expect(r.closes).toEqual([{ key: asker, ids: [5] }])
      expect(r.sends.map((x) => x.n.kind)).toEqual(["permission"])
      expect(r.logs.some((l) => l.message === `no done for ${asker}: a question or permission is pending`)).toBe(true)
    })
  )

  it.scoped("US-30 a user message 8 s after the popup closes it at once; with fade off nothing closes", () =>
    Effect.gen(function* () {
      for (const fade of [true, false]) {
        const r = yield* rig({ outcomes: [{ id: 7 }], fade })
        yield* r.feed(created("ses_a", "A"))
        yield* r.feed(status("ses_a", "busy"))
        yield* r.feed(idle("ses_a"))
        yield* TestClock.adjust(8_000)
        yield* r.feed({ type: "message.updated", properties: { sessionID: "ses_a", info: { id: "msg_1", role: "user", sessionID: "ses_a" } } })
        yield* r.settle
        expect(r.closes).toEqual(fade ? [{ key: "ses_a", ids: [7] }] : [])
      }
    })
  )
})

describe("notifications through the plugin's hooks", () => {
  it("US-29 option sound:false makes the done silent; OCPOOL_SOUND=1 turns it back on", async () => {
    for (const [env, sound] of [[{}, "none"], [{ OCPOOL_SOUND: "1" }, "done"]] as const) {
      const b = await boot({ sound: false }, ["ok"], env)
      await event(b, "session.created", { sessionID: "ses_a", info: { id: "ses_a", title: "A" } })
      await event(b, "session.status", { sessionID: "ses_a", status: { type: "busy" } })
      await event(b, "session.idle", { sessionID: "ses_a" })
      await Effect.runPromise(b.hooks.notifications.settle)
      expect(b.sends.map((s) => s.n.sound)).toEqual([sound])
      await b.hooks.dispose!()
    }
  })

  it("US-11 session.error and session.idle handed to the event hook at once, as opencode does (not awaited): one Failed, no done", async () => {
    const b = await boot()
    await event(b, "session.created", { sessionID: "ses_a", info: { id: "ses_a", title: "A" } })
    await event(b, "session.status", { sessionID: "ses_a", status: { type: "busy" } })
    const both = [event(b, "session.error", { sessionID: "ses_a", error: { name: "APIError", data: { message: "quota exceeded" } } }), event(b, "session.idle", { sessionID: "ses_a" })]
    await Promise.all(both)
    await Effect.runPromise(b.hooks.notifications.settle)
    expect(b.sends.map((s) => [s.n.kind, s.n.message])).toEqual([["error", "Failed: quota exceeded"]])
    await b.hooks.dispose!()
  })

  it("US-17 option notify:false sends nothing, but a busy child is still tracked by the pool engine", async () => {
    const b = await boot({ notify: false })
    await event(b, "session.created", { sessionID: "ses_a", info: { id: "ses_a", title: "A" } })
    await event(b, "session.status", { sessionID: "ses_a", status: { type: "busy" } })
    await event(b, "session.idle", { sessionID: "ses_a" })
    await Effect.runPromise(b.hooks.notifications.settle)
    expect(b.sends).toEqual([])
    await b.hooks.dispose!()
  })
})

