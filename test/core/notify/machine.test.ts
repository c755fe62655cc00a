import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc, HashMap, HashSet } from "effect"
import { FADE_MIN_MS } from "../../../src/core/notify/fade.js"
import { NOTIFY_DEDUPE_MS, NOTIFY_KEYS_MAX } from "../../../src/core/notify/limits.js"
import { DEFERRED_EVENTS_MAX, DEFERRED_SESSIONS_MAX, initialNotifyState, notifyStep, type NotifyConfig, type NotifyEffect, type NotifyInput, type NotifyState } from "../../../src/core/notify/machine.js"
import { T0 } from "../../helpers.js"

const ON: NotifyConfig = { sounds: true, fade: true }

type Timed = readonly [number, NotifyInput]
interface Fed {
  readonly at: number
  readonly input: NotifyInput
  readonly effect: NotifyEffect
}

/** Feeds the inputs in order, each at its own time; returns the final state and every effect with its time. */
const run = (inputs: ReadonlyArray<Timed>, config: NotifyConfig = ON, state: NotifyState = initialNotifyState) => {
  let s = state
  const effects: Array<Fed> = []
  for (const [at, input] of inputs) {
    const step = notifyStep(s, input, at, config)
    s = step.state
    for (const effect of step.effects) effects.push({ at, input, effect })
  }
  return { state: s, effects }
}

const sendsOf = (effects: ReadonlyArray<Fed>) =>
  effects.flatMap(({ at, effect }) => (effect.type === "send" ? [{ at, root: effect.root, ...effect.notification }] : []))
const closesOf = (effects: ReadonlyArray<Fed>) => effects.flatMap(({ at, effect }) => (effect.type === "close" ? [{ handledAt: at, root: effect.root, at: effect.at }] : []))
const lookupsOf = (effects: ReadonlyArray<Fed>) => effects.flatMap(({ effect }) => (effect.type === "lookup" ? [effect.session] : []))
const logsOf = (effects: ReadonlyArray<Fed>) => effects.flatMap(({ effect }) => (effect.type === "log" ? [effect] : []))

const session = (id: string, over: Partial<Omit<Extract<NotifyInput, { type: "session" }>, "type" | "id">> = {}): NotifyInput => ({ type: "session", id, ...over })
const root = (id: string, title?: string): NotifyInput => session(id, { title })
const child = (id: string, parent: string, agent = "explore-1"): NotifyInput => session(id, { parent, agent, title: `work (@${agent} subagent)` })
const busy = (s: string): NotifyInput => ({ type: "busy", session: s })
const idle = (s: string): NotifyInput => ({ type: "idle", session: s })
const error = (s: string, name?: string, message?: string): NotifyInput => ({ type: "error", session: s, name, message })
const question = (s: string, id: string, ...texts: ReadonlyArray<string>): NotifyInput => ({ type: "question", session: s, id, texts })
const permission = (s: string, id: string, perm?: string, pattern?: string): NotifyInput => ({ type: "permission", session: s, id, permission: perm, pattern })
const answered = (s: string, id?: string): NotifyInput => ({ type: "answered", session: s, id })
const userMessage = (s: string): NotifyInput => ({ type: "userMessage", session: s })

/** Every input at T0 + ms. */
const at = (ms: number, input: NotifyInput): Timed => [T0 + ms, input]
/** Inputs all at T0. */
const now = (...inputs: ReadonlyArray<NotifyInput>): ReadonlyArray<Timed> => inputs.map((i) => at(0, i))

describe("done and error (US-11, SPEC §10.1)", () => {
  it("US-11 a root titled `Fix login` that goes busy then idle sends one done: title, message, urgency normal, sound done", () => {
    const { effects } = run(now(root("A", "Fix login"), busy("A"), idle("A")))
    expect(sendsOf(effects)).toEqual([
      { at: T0, root: "A", kind: "done", title: "opencode — Fix login", message: "Finished — waiting for your review", urgency: "normal", icon: "emblem-default", sound: "done" }
    ])
  })

  it("US-11 two session.error events in the same second send two critical notifications starting with `Failed`", () => {
    const { effects } = run([at(0, root("A", "Fix login")), at(0, busy("A")), at(100, error("A", "APIError", "Rate limit exceeded\ntrace")), at(900, error("A", "UnknownError"))])
    const sends = sendsOf(effects)
    expect(sends.map((s) => [s.kind, s.urgency, s.message])).toEqual([
      ["error", "critical", "Failed: Rate limit exceeded"],
      ["error", "critical", "Failed"]
    ])
    expect(sends.every((s) => s.title === "opencode — Fix login" && s.sound === "error" && s.icon === "dialog-error")).toBe(true)
  })

  it("US-11 a root that never went busy sends nothing when it idles", () => {
    expect(sendsOf(run(now(root("A"), idle("A"), idle("A"))).effects)).toEqual([])
  })

  it("US-11 a subagent session that goes busy then idle sends nothing (nor does an error in it)", () => {
    const { effects } = run(now(root("A"), child("C", "A"), child("G", "C"), busy("C"), idle("C"), busy("G"), idle("G"), error("C", "APIError", "boom"), error("G")))
    expect(sendsOf(effects)).toEqual([])
  })

  it.each([
    ["agent context", session("X", { agent: "context" })],
    ["agent context-2", session("X", { agent: "context-2" })],
    ["title with (@context subagent)", session("X", { title: "Map refresh (@context subagent)" })],
    ["title with (@context-3 subagent)", session("X", { title: "Map refresh (@context-3 subagent)" })]
  ] as const)("US-11 a context-agent session (%s) sends nothing on busy/idle, error, question or permission", (_, info) => {
    const { effects } = run(now(info, busy("X"), idle("X"), error("X", "APIError", "boom"), question("X", "q1", "Really?"), permission("X", "p1", "edit", "*")))
    expect(sendsOf(effects)).toEqual([])
  })

  it("US-11 a session below a context-agent session is suppressed too", () => {
    const { effects } = run(now(session("X", { agent: "context" }), child("Y", "X"), question("Y", "q1", "Really?"), permission("Y", "p1", "bash", "ls")))
    expect(sendsOf(effects)).toEqual([])
  })

  it.each(["contextual", "my-context", "context-x", "build"])("US-11 an agent named %j is not the context agent: its root notifies", (agent) => {
    expect(sendsOf(run(now(session("A", { agent }), busy("A"), idle("A"))).effects).map((s) => s.kind)).toEqual(["done"])
  })

  it("US-11 a session learnt as context later stays suppressed when an update omits the agent", () => {
    const { effects } = run(now(session("X", { agent: "context" }), session("X", { title: "renamed" }), busy("X"), idle("X")))
    expect(sendsOf(effects)).toEqual([])
  })

  it("US-11 busy, idle, busy, idle within 1 s, then busy and idle at +6 s: exactly two done, the second at +6 s", () => {
    const { effects } = run([at(0, root("A")), at(0, busy("A")), at(200, idle("A")), at(500, busy("A")), at(900, idle("A")), at(6_000, busy("A")), at(6_000, idle("A"))])
    expect(sendsOf(effects).map((s) => [s.kind, s.at - T0])).toEqual([
      ["done", 0 + 200],
      ["done", 6_000]
    ])
  })

  it("US-11 an error named MessageAbortedError sends nothing", () => {
    const { effects } = run(now(root("A"), busy("A"), error("A", "MessageAbortedError", "aborted"), idle("A")))
    expect(sendsOf(effects)).toEqual([])
  })

  it("US-11 a root with time.compacting set that idles sends nothing; once compaction ended it notifies again", () => {
    const { effects, state } = run(now(session("A", { compacting: true }), busy("A"), idle("A")))
    expect(sendsOf(effects)).toEqual([])
    const after = run([at(10, session("A", { compacting: false })), at(10, busy("A")), at(20, idle("A"))], ON, state)
    expect(sendsOf(after.effects).map((s) => s.kind)).toEqual(["done"])
  })

  it("US-11 an error clears the worked mark of the root: the idle that follows the error sends no done", () => {
    const { effects } = run([at(0, root("A")), at(0, busy("A")), at(10, error("A", "APIError", "boom")), at(10, idle("A"))])
    expect(sendsOf(effects).map((s) => s.kind)).toEqual(["error"])
  })

  it("US-11 after an error, working again and idling sends done", () => {
    const { effects } = run([at(0, root("A")), at(0, busy("A")), at(10, error("A", "APIError", "boom")), at(10, idle("A")), at(20, busy("A")), at(30, idle("A"))])
    expect(sendsOf(effects).map((s) => s.kind)).toEqual(["error", "done"])
  })

  it("US-11 the idle of a child does not count as the root's finish; the root's own idle does", () => {
    const { effects } = run([at(0, root("A", "T")), at(0, child("C", "A")), at(0, busy("A")), at(1, busy("C")), at(2, idle("C")), at(3, idle("A"))])
    expect(sendsOf(effects).map((s) => [s.kind, s.root, s.at - T0])).toEqual([["done", "A", 3]])
  })

  it("US-11 the done uses the root's latest title; an untitled root is `session`", () => {
    const titled = run(now(root("A", "Old"), session("A", { title: "New" }), busy("A"), idle("A")))
    expect(sendsOf(titled.effects)[0]?.title).toBe("opencode — New")
    expect(sendsOf(run(now(root("B"), busy("B"), idle("B"))).effects)[0]?.title).toBe("opencode — session")
  })

  it("US-29 with sounds off, every kind sent by the machine carries sound `none`", () => {
    const { effects } = run(now(root("A"), busy("A"), question("A", "q", "x?"), permission("A", "p", "bash", "ls"), answered("A"), idle("A"), error("A")), { sounds: false, fade: true })
    const sends = sendsOf(effects)
    expect(sends.map((s) => s.kind)).toEqual(["question", "permission", "done", "error"])
    expect(sends.every((s) => s.sound === "none")).toBe(true)
  })
})

describe("questions and permissions (US-12, SPEC §10.1)", () => {
  it("US-12 a question `Should the migration be reversible?` reads `Question: …` with sound question", () => {
    const sends = sendsOf(run(now(root("A", "Migrate"), question("A", "q1", "Should the migration be reversible?"))).effects)
    expect(sends).toEqual([
      {
        at: T0,
        root: "A",
        kind: "question",
        title: "opencode — Migrate",
        message: "Question: Should the migration be reversible?",
        urgency: "normal",
        icon: "dialog-information",
        sound: "question"
      }
    ])
  })

  it("US-12 a question pending in the root: when it then idles, no done is sent", () => {
    const { effects } = run([at(0, root("A")), at(0, busy("A")), at(10, question("A", "q1", "x?")), at(20, idle("A"))])
    expect(sendsOf(effects).map((s) => s.kind)).toEqual(["question"])
    expect(logsOf(effects).some((l) => l.level === "debug" && l.message.includes("pending"))).toBe(true)
  })

  it("US-12 a question pending in a child also holds back the root's done", () => {
    const { effects } = run([at(0, root("A")), at(0, child("C", "A")), at(0, busy("A")), at(10, question("C", "q1", "x?")), at(20, idle("A"))])
    expect(sendsOf(effects).map((s) => [s.kind, s.root])).toEqual([["question", "A"]])
  })

  it.each([
    ["replied (by id)", [answered("A", "q1")]],
    ["rejected (no id: every ask of the session)", [answered("A")]],
    ["ended by an error of the root", [error("A", "APIError", "x")]],
    ["ended by an aborted root", [error("A", "MessageAbortedError")]]
  ] as const)("US-12 a pending question %s: the next busy then idle sends done", (_, ending) => {
    const inputs: Array<Timed> = [at(0, root("A")), at(0, busy("A")), at(10, question("A", "q1", "x?")), at(20, idle("A"))]
    for (const e of ending) inputs.push(at(30, e))
    inputs.push(at(40, busy("A")), at(50, idle("A")))
    const kinds = sendsOf(run(inputs).effects).map((s) => s.kind)
    expect(kinds.filter((k) => k === "done")).toHaveLength(1)
    expect(kinds.at(-1)).toBe("done")
  })

  it("US-12 a question pending in a child ended by the child's error: the root's next idle sends done", () => {
    const { effects } = run([at(0, root("A")), at(0, child("C", "A")), at(0, busy("A")), at(10, question("C", "q1", "x?")), at(15, error("C", "APIError")), at(20, idle("A"))])
    expect(sendsOf(effects).map((s) => s.kind)).toEqual(["question", "done"])
  })

  it("US-12 answering one of two pending asks still holds back done until the other is answered", () => {
    const inputs: Array<Timed> = [at(0, root("A")), at(0, busy("A")), at(10, question("A", "q1", "a?")), at(10, permission("A", "p1", "bash", "ls")), at(20, answered("A", "q1")), at(30, idle("A"))]
    expect(sendsOf(run(inputs).effects).map((s) => s.kind)).toEqual(["question", "permission"])
    inputs.push(at(40, answered("A", "p1")), at(50, busy("A")), at(60, idle("A")))
    expect(sendsOf(run(inputs).effects).map((s) => s.kind)).toEqual(["question", "permission", "done"])
  })

  it("US-12 a permission asked in a grandchild notifies the root once, naming the permission and its pattern", () => {
    const { effects } = run(now(root("A", "Fix login"), child("C", "A"), child("G", "C", "implement-2"), permission("G", "p1", "bash", "rm -rf build")))
    expect(sendsOf(effects)).toEqual([
      {
        at: T0,
        root: "A",
        kind: "permission",
        title: "opencode — Fix login",
        message: "Permission needed: bash (rm -rf build)",
        urgency: "normal",
        icon: "dialog-warning",
        sound: "permission"
      }
    ])
  })

  it("US-12 questions whose texts are `  ` and then `Second?` give the headline `Second?`", () => {
    expect(sendsOf(run(now(root("A"), question("A", "q1", "  ", "Second?"))).effects)[0]?.message).toBe("Question: Second?")
  })

  it("US-12 a 200-char question gives a 70-char headline ending in …", () => {
    const message = sendsOf(run(now(root("A"), question("A", "q1", "h".repeat(200)))).effects)[0]!.message
    const headline = message.slice("Question: ".length)
    expect(Array.from(headline)).toHaveLength(70)
    expect(headline).toBe("h".repeat(69) + "…")
  })

  it("US-12 a question with no text reads exactly `Question waiting for your answer`", () => {
    expect(sendsOf(run(now(root("A"), question("A", "q1"))).effects)[0]?.message).toBe("Question waiting for your answer")
    expect(sendsOf(run(now(root("A"), question("A", "q1", "", " \n "))).effects)[0]?.message).toBe("Question waiting for your answer")
  })

  it("US-12 two questions for the same root 1 s apart send one notification; a third after 5 s sends again", () => {
    const { effects } = run([at(0, root("A")), at(0, child("C", "A")), at(0, question("A", "q1", "one?")), at(1_000, question("C", "q2", "two?")), at(5_000, question("A", "q3", "three?"))])
    expect(sendsOf(effects).map((s) => [s.message, s.at - T0])).toEqual([
      ["Question: one?", 0],
      ["Question: three?", 5_000]
    ])
  })

  it("US-12 a question replied to, then the session idles, all within 1 s: both the question and the done are sent", () => {
    const { effects } = run([at(0, root("A")), at(0, busy("A")), at(100, question("A", "q1", "x?")), at(500, answered("A", "q1")), at(900, idle("A"))])
    expect(sendsOf(effects).map((s) => s.kind)).toEqual(["question", "done"])
  })

  it("US-12 a permission without a pattern names only the permission", () => {
    expect(sendsOf(run(now(root("A"), permission("A", "p1", "webfetch"))).effects)[0]?.message).toBe("Permission needed: webfetch")
  })

  it("US-43 a permission pending in a pooled child and a question in its grandchild: each ask raised sends exactly one notification, for the root", () => {
    const tree = [at(0, root("R", "Ship")), at(0, child("C", "R", "explore-1")), at(0, child("G", "C", "implement-1")), at(0, busy("R")), at(0, busy("C")), at(0, busy("G"))]
    const perm = run([...tree, at(1_000, permission("C", "p1", "edit", "src/**"))])
    expect(sendsOf(perm.effects).map((s) => [s.kind, s.root])).toEqual([["permission", "R"]])
    const q = run([...tree, at(1_000, question("G", "q1", "Which branch?"))])
    expect(sendsOf(q.effects).map((s) => [s.kind, s.root, s.message])).toEqual([["question", "R", "Question: Which branch?"]])
    // 20 minutes later the ask still holds: the root's idle sends no done and nothing repeats
    const waited = run([at(1_200_000, idle("G")), at(1_200_000, idle("C")), at(1_200_000, idle("R"))], ON, q.state)
    expect(sendsOf(waited.effects)).toEqual([])
  })
})

describe("dedupe (SPEC §10.1)", () => {
  it("US-11 done for the same root is dropped within NOTIFY_DEDUPE_MS of the last sent one, and sent at exactly 5000 ms", () => {
    const cycle = (ms: number): ReadonlyArray<Timed> => [at(ms, busy("A")), at(ms, idle("A"))]
    const { effects } = run([at(0, root("A")), ...cycle(0), ...cycle(4_999), ...cycle(NOTIFY_DEDUPE_MS), ...cycle(9_999), ...cycle(10_000)])
    expect(sendsOf(effects).map((s) => s.at - T0)).toEqual([0, 5_000, 10_000])
    expect(logsOf(effects).filter((l) => l.message.includes("dropped"))).toHaveLength(2)
  })

  it("US-11 the window runs from the last notification sent, not from a dropped one", () => {
    const cycle = (ms: number): ReadonlyArray<Timed> => [at(ms, busy("A")), at(ms, idle("A"))]
    const { effects } = run([at(0, root("A")), ...cycle(0), ...cycle(4_000), ...cycle(5_000), ...cycle(8_000)])
    expect(sendsOf(effects).map((s) => s.at - T0)).toEqual([0, 5_000])
  })

  it("US-12 dedupe is per (kind, root): different kinds and different roots never dedupe each other", () => {
    const { effects } = run(now(root("A"), root("B"), busy("A"), busy("B"), question("A", "q1", "x"), permission("A", "p1", "bash"), answered("A"), idle("A"), idle("B"), question("B", "q2", "y")))
    expect(sendsOf(effects).map((s) => [s.kind, s.root])).toEqual([
      ["question", "A"],
      ["permission", "A"],
      ["done", "A"],
      ["done", "B"],
      ["question", "B"]
    ])
  })

  it("US-11 error always goes out: ten errors within a second send ten notifications", () => {
    const inputs: Array<Timed> = [at(0, root("A"))]
    for (let i = 0; i < 10; i++) inputs.push(at(i * 100, error("A", "APIError", `e${i}`)))
    expect(sendsOf(run(inputs).effects).map((s) => s.message)).toEqual(Array.from({ length: 10 }, (_, i) => `Failed: e${i}`))
  })

  it("US-11 the dedupe memory holds at most NOTIFY_KEYS_MAX entries: after 600 distinct roots it holds ≤ 500, and the newest are still deduped", () => {
    const inputs: Array<Timed> = []
    for (let i = 0; i < 600; i++) inputs.push(at(i, root(`R${i}`)), at(i, busy(`R${i}`)), at(i, idle(`R${i}`)))
    const { state, effects } = run(inputs)
    expect(sendsOf(effects)).toHaveLength(600)
    expect(HashMap.size(state.sent)).toBeLessThanOrEqual(NOTIFY_KEYS_MAX)
    // the newest root is still remembered: a repeat within the window is dropped
    const again = run([at(1_000, busy("R599")), at(1_000, idle("R599"))], ON, state)
    expect(sendsOf(again.effects)).toEqual([])
  })

  it("US-11 the dedupe memory stays bounded when its entries expire", () => {
    const inputs: Array<Timed> = []
    for (let i = 0; i < 600; i++) inputs.push(at(i * 6_000, root(`R${i}`)), at(i * 6_000, busy(`R${i}`)), at(i * 6_000, idle(`R${i}`)))
    const { state } = run(inputs)
    expect(HashMap.size(state.sent)).toBeLessThanOrEqual(NOTIFY_KEYS_MAX)
  })
})

describe("fade (US-30, SPEC §10.8)", () => {
  it("US-30 a popup for A raised at t0; a user message in A at t0+8 s closes it at t0+8 s", () => {
    const { effects } = run([at(0, root("A")), at(0, busy("A")), at(0, idle("A")), at(8_000, userMessage("A"))])
    expect(sendsOf(effects).map((s) => s.at - T0)).toEqual([0])
    expect(closesOf(effects)).toEqual([{ handledAt: T0 + 8_000, root: "A", at: T0 + 8_000 }])
  })

  it("US-30 a question popup raised at t0 and replied to at t0+2 s closes at t0+5 s and not before", () => {
    const { effects } = run([at(0, root("A")), at(0, question("A", "q1", "x?")), at(2_000, answered("A", "q1"))])
    expect(closesOf(effects)).toEqual([{ handledAt: T0 + 2_000, root: "A", at: T0 + FADE_MIN_MS }])
  })

  it("US-30 a question asked in a child and replied to closes the root's popup", () => {
    const { effects } = run([at(0, root("A")), at(0, child("C", "A")), at(0, question("C", "q1", "x?")), at(1_000, answered("C", "q1"))])
    expect(closesOf(effects)).toEqual([{ handledAt: T0 + 1_000, root: "A", at: T0 + 5_000 }])
  })

  it("US-30 popups for A and B: working in A closes only A's", () => {
    const { effects } = run([at(0, root("A")), at(0, root("B")), at(0, question("A", "q1", "a?")), at(0, question("B", "q2", "b?")), at(9_000, userMessage("A"))])
    expect(closesOf(effects)).toEqual([{ handledAt: T0 + 9_000, root: "A", at: T0 + 9_000 }])
  })

  it("US-30 a popup with no interaction is never closed, even an hour later", () => {
    const inputs: Array<Timed> = [at(0, root("A")), at(0, root("B")), at(0, busy("A")), at(0, idle("A"))]
    for (let m = 1; m <= 60; m++) inputs.push(at(m * 60_000, busy("B")), at(m * 60_000, idle("B")), at(m * 60_000, userMessage("B")))
    const { effects } = run(inputs)
    expect(closesOf(effects).filter((c) => c.root === "A")).toEqual([])
  })

  it("US-30 with fade:false nothing is ever closed", () => {
    const { effects, state } = run([at(0, root("A")), at(0, question("A", "q1", "x?")), at(2_000, answered("A", "q1")), at(9_000, userMessage("A"))], { sounds: true, fade: false })
    expect(sendsOf(effects)).toHaveLength(1)
    expect(closesOf(effects)).toEqual([])
    expect(HashMap.size(state.raised)).toBe(0)
  })

  it("US-30 one close per raised popup: a second user message closes nothing; a newer popup is closed no sooner than 5 s after it", () => {
    const { effects } = run([
      at(0, root("A")),
      at(0, busy("A")),
      at(0, idle("A")),
      at(8_000, userMessage("A")),
      at(8_500, userMessage("A")),
      at(10_000, question("A", "q1", "x?")),
      at(11_000, userMessage("A"))
    ])
    expect(closesOf(effects)).toEqual([
      { handledAt: T0 + 8_000, root: "A", at: T0 + 8_000 },
      { handledAt: T0 + 11_000, root: "A", at: T0 + 15_000 }
    ])
  })

  it("US-30 a user message in a child session closes nothing (the trigger is the root's chat)", () => {
    const { effects } = run([at(0, root("A")), at(0, child("C", "A")), at(0, question("A", "q1", "x?")), at(9_000, userMessage("C"))])
    expect(closesOf(effects)).toEqual([])
  })

  it("US-30 a deduped notification raises no new popup, so the close time still follows the one shown", () => {
    const { effects } = run([at(0, root("A")), at(0, question("A", "q1", "x?")), at(3_000, question("A", "q2", "y?")), at(3_500, userMessage("A"))])
    expect(sendsOf(effects)).toHaveLength(1)
    expect(closesOf(effects)).toEqual([{ handledAt: T0 + 3_500, root: "A", at: T0 + 5_000 }])
  })
})

describe("unknown sessions (SPEC §10.1: the root through session.get)", () => {
  it("US-11 an idle for a session never seen asks for a lookup and sends nothing", () => {
    const { effects, state } = run(now(idle("X")))
    expect(lookupsOf(effects)).toEqual(["X"])
    expect(sendsOf(effects)).toEqual([])
    // the answer (a root that never went busy) releases the idle: still nothing
    expect(sendsOf(run(now(root("X")), ON, state).effects)).toEqual([])
  })

  it("US-11 a root that was busy before it was known: its idle waits for the lookup, then sends done", () => {
    const first = run([at(0, busy("X")), at(10, idle("X"))])
    expect(lookupsOf(first.effects)).toEqual(["X"])
    expect(sendsOf(first.effects)).toEqual([])
    const answered = run([at(20, root("X", "Late"))], ON, first.state)
    expect(sendsOf(answered.effects).map((s) => [s.kind, s.root, s.title, s.at - T0])).toEqual([["done", "X", "opencode — Late", 20]])
    expect(HashMap.size(answered.state.deferred)).toBe(0)
  })

  it("US-11 a deferred idle of a session whose answer names a parent sends nothing", () => {
    const first = run([at(0, root("A")), at(0, busy("X")), at(10, idle("X"))])
    expect(sendsOf(run([at(20, child("X", "A"))], ON, first.state).effects)).toEqual([])
  })

  it("US-12 a question in a child whose parent is unknown looks the parent up, then notifies the root", () => {
    const first = run(now(child("C", "P"), question("C", "q1", "Which?")))
    expect(lookupsOf(first.effects)).toEqual(["P"])
    expect(sendsOf(first.effects)).toEqual([])
    const second = run([at(50, root("P", "Parent"))], ON, first.state)
    expect(sendsOf(second.effects).map((s) => [s.kind, s.root, s.message])).toEqual([["question", "P", "Question: Which?"]])
  })

  it("US-12 several events for one unknown session ask for one lookup and are replayed in order", () => {
    const first = run([at(0, busy("X")), at(1, question("X", "q1", "a?")), at(2, answered("X", "q1")), at(3, idle("X"))])
    expect(lookupsOf(first.effects)).toEqual(["X"])
    const second = run([at(10, root("X"))], ON, first.state)
    expect(sendsOf(second.effects).map((s) => s.kind)).toEqual(["question", "done"])
  })

  it("US-12 a question answered while its root is still being looked up does not stay pending: the root's next finish sends done", () => {
    const first = run([at(0, child("C", "P")), at(0, busy("P")), at(10, question("C", "q1", "Which?")), at(20, answered("C", "q1"))])
    expect(lookupsOf(first.effects)).toEqual(["P"])
    const second = run([at(30, root("P")), at(40, busy("P")), at(50, idle("P"))], ON, first.state)
    expect(sendsOf(second.effects).map((s) => s.kind)).toEqual(["question", "done"])
    expect(HashMap.size(second.state.asks)).toBe(0)
  })

  it("US-11 a failed lookup drops the held events with a debug line, and a later answer sends nothing for them", () => {
    const first = run([at(0, busy("X")), at(10, error("X", "APIError", "boom")), at(10, idle("X"))])
    const failed = run([at(20, { type: "lookupFailed", id: "X", reason: "404" })], ON, first.state)
    expect(sendsOf(failed.effects)).toEqual([])
    const logs = logsOf(failed.effects)
    expect(logs).toHaveLength(1)
    expect(logs[0]!.level).toBe("debug")
    expect(logs[0]!.message).toContain("404")
    expect(HashMap.size(failed.state.deferred)).toBe(0)
    expect(sendsOf(run([at(30, root("X"))], ON, failed.state).effects)).toEqual([])
  })

  it("US-11 deleted forgets the session: a later idle is unknown again and sends nothing", () => {
    const { state, effects } = run([at(0, root("A")), at(0, busy("A")), at(10, question("A", "q1", "x?")), at(20, { type: "deleted", id: "A" }), at(30, idle("A"))])
    expect(sendsOf(effects).map((s) => s.kind)).toEqual(["question"])
    expect(HashMap.has(state.sessions, "A")).toBe(false)
    expect(HashSet.has(state.worked, "A")).toBe(false)
    expect(HashMap.size(state.asks)).toBe(0)
    expect(HashMap.has(state.raised, "A")).toBe(false)
    expect(lookupsOf(effects)).toEqual(["A"])
  })

  it("US-12 deleting a child with a pending ask frees the root's done", () => {
    const { effects } = run([at(0, root("A")), at(0, child("C", "A")), at(0, busy("A")), at(10, permission("C", "p1", "bash")), at(20, { type: "deleted", id: "C" }), at(30, idle("A"))])
    expect(sendsOf(effects).map((s) => s.kind)).toEqual(["permission", "done"])
  })
})

describe("robustness", () => {
  it("US-11 sessions whose parents form a cycle all have parents: none of them is notified", () => {
    const inputs: Array<Timed> = [at(0, session("A", { parent: "B" })), at(0, session("B", { parent: "A" })), at(0, session("C", { parent: "C" }))]
    for (const s of ["A", "B"]) inputs.push(at(0, busy(s)), at(0, idle(s)), at(0, error(s, "APIError", "x")), at(0, question(s, `q${s}`, "x?")), at(0, permission(s, `p${s}`, "bash")))
    const { effects } = run(inputs)
    expect(sendsOf(effects)).toEqual([])
    // a session naming itself as parent is a root
    expect(sendsOf(run(now(session("C", { parent: "C" }), busy("C"), idle("C"))).effects).map((s) => s.root)).toEqual(["C"])
  })

  it("US-11 sessions waiting for a lookup are bounded, busy ones included", () => {
    const inputs: Array<Timed> = []
    for (let i = 0; i < 2 * DEFERRED_SESSIONS_MAX; i++) inputs.push(at(i, busy(`U${i}`)))
    for (let i = 0; i < 2 * DEFERRED_SESSIONS_MAX; i++) inputs.push(at(i, idle(`V${i}`)))
    const { state, effects } = run(inputs)
    expect(HashMap.size(state.deferred)).toBeLessThanOrEqual(DEFERRED_SESSIONS_MAX)
    expect(lookupsOf(effects).length).toBeLessThanOrEqual(DEFERRED_SESSIONS_MAX)
  })

  it("US-11 events held for one unknown session are bounded", () => {
    const inputs: Array<Timed> = [at(0, busy("X"))]
    for (let i = 0; i < 3 * DEFERRED_EVENTS_MAX; i++) inputs.push(at(i, question("X", `q${i}`, "x")))
    const { state } = run(inputs)
    expect(HashMap.unsafeGet(state.deferred, "X").length).toBeLessThanOrEqual(DEFERRED_EVENTS_MAX)
  })
})

describe("properties of the decisions", () => {
  const IDS = ["s0", "s1", "s2", "s3", "s4"] as const
  const id = fc.constantFrom(...IDS)
  const ask = fc.constantFrom("q0", "q1", "q2", "p0", "p1")
  const input: fc.Arbitrary<NotifyInput> = fc.oneof(
    { weight: 3, arbitrary: fc.record({ type: fc.constant("session" as const), id, parent: fc.option(id, { nil: undefined }), title: fc.option(fc.constantFrom("T", "x (@context subagent)", "w (@explore-1 subagent)"), { nil: undefined }), agent: fc.option(fc.constantFrom("build", "context", "context-2", "explore-1"), { nil: undefined }), compacting: fc.option(fc.boolean(), { nil: undefined }) }) },
    { weight: 1, arbitrary: fc.record({ type: fc.constant("lookupFailed" as const), id, reason: fc.constant("x") }) },
    { weight: 1, arbitrary: fc.record({ type: fc.constant("deleted" as const), id }) },
    { weight: 4, arbitrary: fc.record({ type: fc.constant("busy" as const), session: id }) },
    { weight: 4, arbitrary: fc.record({ type: fc.constant("idle" as const), session: id }) },
    { weight: 2, arbitrary: fc.record({ type: fc.constant("error" as const), session: id, name: fc.option(fc.constantFrom("APIError", "MessageAbortedError"), { nil: undefined }), message: fc.option(fc.string({ maxLength: 5 }), { nil: undefined }) }) },
    { weight: 2, arbitrary: fc.record({ type: fc.constant("question" as const), session: id, id: ask, texts: fc.array(fc.constantFrom("", " ", "Why?"), { maxLength: 2 }) }) },
    { weight: 2, arbitrary: fc.record({ type: fc.constant("permission" as const), session: id, id: ask, permission: fc.constant("bash"), pattern: fc.option(fc.constant("ls"), { nil: undefined }) }) },
    { weight: 2, arbitrary: fc.record({ type: fc.constant("answered" as const), session: id, id: fc.option(ask, { nil: undefined }) }) },
    { weight: 2, arbitrary: fc.record({ type: fc.constant("userMessage" as const), session: id }) }
  )
  const gap = fc.constantFrom(0, 0, 1, 500, 1_000, 2_500, 4_999, 5_000, 6_000, 60_000)
  const script = fc.array(fc.tuple(gap, input), { maxLength: 80 })
  const config = fc.record({ sounds: fc.boolean(), fade: fc.boolean() })

  it.prop(
    "US-11 for any interleaving: no send targets a session with a parent, no kind repeats for a root within 5 s except error, every close waits 5 s after the last popup, and nothing throws",
    [script, config],
    ([steps, cfg]) => {
      // an independent model of the parent links the inputs declare
      const parents = new Map<string, string>()
      const lastSent = new Map<string, number>()
      const lastPopup = new Map<string, number>()
      let state = initialNotifyState
      let t = T0
      for (const [dt, inp] of steps) {
        t += dt
        if (inp.type === "session" && inp.parent !== undefined && inp.parent !== inp.id) parents.set(inp.id, inp.parent)
        if (inp.type === "session" && inp.parent === inp.id) parents.delete(inp.id)
        if (inp.type === "deleted") parents.delete(inp.id)
        const step = notifyStep(state, inp, t, cfg)
        state = step.state
        for (const e of step.effects) {
          if (e.type === "send") {
            // (a) never a session that has a parent
            expect(parents.has(e.root)).toBe(false)
            const kind = e.notification.kind
            // (b) done/question/permission for one root at least NOTIFY_DEDUPE_MS apart
            if (kind !== "error") {
              const last = lastSent.get(`${kind}/${e.root}`)
              if (last !== undefined) expect(t - last).toBeGreaterThanOrEqual(NOTIFY_DEDUPE_MS)
              lastSent.set(`${kind}/${e.root}`, t)
            }
            lastPopup.set(e.root, t)
          }
          if (e.type === "close") {
            // (c) only after a popup, never sooner than FADE_MIN_MS after the newest one, never in the past
            expect(cfg.fade).toBe(true)
            const raised = lastPopup.get(e.root)
            expect(raised).toBeDefined()
            expect(e.at).toBeGreaterThanOrEqual(raised! + FADE_MIN_MS)
            expect(e.at).toBeGreaterThanOrEqual(t)
          }
        }
      }
    },
    { fastCheck: { numRuns: 2_000 } }
  )

  it.prop(
    "US-12 for any interleaving: a done is sent only for a root that went busy and has no ask pending in its tree, and no context-agent root ever notifies",
    [script],
    ([steps]) => {
      let state = initialNotifyState
      let t = T0
      const context = new Set<string>()
      for (const [dt, inp] of steps) {
        t += dt
        if (inp.type === "session" && (inp.agent === "context" || inp.agent === "context-2" || inp.title?.includes("(@context subagent)") === true)) context.add(inp.id)
        // a deleted session is forgotten, by the machine as by this model: what a later info says of the id stands alone
        if (inp.type === "deleted") context.delete(inp.id)
        const before = state
        const step = notifyStep(state, inp, t, ON)
        state = step.state
        for (const e of step.effects) {
          if (e.type !== "send") continue
          expect(context.has(e.root)).toBe(false)
          if (e.notification.kind === "done") {
            // a session's answer replays the events that waited for it in order (a busy or an ask among
            // them): the states around one replayed event are not visible here
            if (inp.type !== "session") {
              expect(HashSet.has(before.worked, e.root)).toBe(true)
              expect(Array.from(HashMap.values(state.asks)).some((a) => a.root === e.root)).toBe(false)
            }
          }
        }
      }
    },
    { fastCheck: { numRuns: 1_000 } }
  )
})
