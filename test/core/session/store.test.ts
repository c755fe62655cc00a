/** The session store both machines keep their session facts in (SPEC §8.2, §10.1): the merge rule, the walks, the bounds. */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc, HashMap } from "effect"
import type { SessionFacts } from "../../../src/core/session/facts.js"
import {
  boundSessions,
  climbKnown,
  emptySessions,
  forgetSession,
  hasParent,
  keepSessions,
  knowsSession,
  lineageOf,
  parentLink,
  placeOf,
  recordChild,
  recordSession,
  sessionCount,
  sessionOf,
  type SessionRecord,
  type SessionStore
} from "../../../src/core/session/store.js"
import { isContextSession } from "../../../src/core/session/title.js"
import { TREE_DEPTH_MAX } from "../../../src/core/session/climb.js"

const IDS = ["a", "b", "c", "d", "e"]
const id = fc.constantFrom(...IDS)
const opt = <A>(a: fc.Arbitrary<A>) => fc.option(a, { nil: undefined })
const facts: fc.Arbitrary<SessionFacts> = fc.record({
  id,
  parent: opt(id),
  title: opt(fc.constantFrom("work", "map (@context subagent)", "context (auto update)", "probe (@explore-2 subagent)")),
  agent: opt(fc.constantFrom("build", "context", "context-2", "explore-1")),
  compacting: opt(fc.boolean())
})

/** The rule as the notification machine wrote it before the store, over a plain Map: the model. */
const modelRecord = (model: Map<string, SessionRecord>, f: SessionFacts, now: number): void => {
  const old = model.get(f.id)
  const parent = f.parent ?? old?.parent
  const title = f.title ?? old?.title
  model.set(f.id, {
    parent: parent === f.id ? undefined : parent,
    title,
    context: (old?.context ?? false) || isContextSession(f.agent, title),
    compacting: f.compacting ?? false,
    seenAt: now
  })
}

const contents = (store: SessionStore): Map<string, SessionRecord> => new Map(Array.from(store))

describe("the session store (core/session/store.ts)", () => {
  it.prop(
    "US-11 for any infos and deletions, the store holds what the rule says: an omitted parent or title kept, no session its own parent, the context mark for good",
    [fc.array(fc.oneof(facts.map((f) => ({ op: "record" as const, f })), id.map((gone) => ({ op: "forget" as const, gone }))), { maxLength: 40 })],
    ([ops]) => {
      let store = emptySessions
      const model = new Map<string, SessionRecord>()
      ops.forEach((o, now) => {
        if (o.op === "record") {
          store = recordSession(store, o.f, now)
          modelRecord(model, o.f, now)
        } else {
          store = forgetSession(store, o.gone)
          model.delete(o.gone)
        }
      })
      expect(contents(store)).toEqual(model)
      for (const s of IDS) {
        expect(knowsSession(store, s)).toBe(model.has(s))
        expect(hasParent(store, s)).toBe(model.get(s)?.parent !== undefined)
        expect(parentLink(store, s)).toBe(model.get(s)?.parent)
      }
      expect(sessionCount(store)).toBe(model.size)
    }
  )

  it("US-11 an update without a parent keeps the parent; one naming the session itself makes it a root", () => {
    let store = recordSession(emptySessions, { id: "C", parent: "R", title: "first" }, 1)
    store = recordSession(store, { id: "C", title: undefined, compacting: true }, 2)
    expect(sessionOf(store, "C")).toEqual({ parent: "R", title: "first", context: false, compacting: true, seenAt: 2 })
    store = recordSession(store, { id: "C", parent: "C" }, 3)
    expect(sessionOf(store, "C")).toEqual({ parent: undefined, title: "first", context: false, compacting: false, seenAt: 3 })
  })

  it("US-11 a context session stays one when a later info names another agent", () => {
    const store = recordSession(recordSession(emptySessions, { id: "M", agent: "context" }, 1), { id: "M", agent: "build", title: "later" }, 2)
    expect(sessionOf(store, "M")?.context).toBe(true)
  })

  it("US-5 a child created under a parent is linked as told, even to itself, and keeps what was known of it", () => {
    let store = recordSession(emptySessions, { id: "K", title: "probe (@explore-2 subagent)" }, 1)
    store = recordChild(store, { id: "K", parent: "P", agent: "explore-2" }, 2)
    expect(sessionOf(store, "K")).toEqual({ parent: "P", title: "probe (@explore-2 subagent)", context: false, compacting: false, seenAt: 2 })
    const self = recordChild(emptySessions, { id: "S", parent: "S" }, 1)
    expect(parentLink(self, "S")).toBe("S")
    expect(lineageOf(self, "S")).toHaveLength(TREE_DEPTH_MAX + 1)
  })
})

describe("the walks over the store", () => {
  it.each([
    ["a root", [["A", undefined]], "A", { _tag: "Known", root: "A", context: false }],
    ["a grandchild", [["G", "C"], ["C", "A"], ["A", undefined]], "G", { _tag: "Known", root: "A", context: false }],
    ["an unknown start", [], "X", { _tag: "Unknown", missing: "X" }],
    ["an unknown parent on the way", [["G", "C"], ["C", "B"]], "G", { _tag: "Unknown", missing: "B" }],
    ["a cycle: suppressed like a context tree", [["A", "B"], ["B", "A"]], "A", { _tag: "Known", root: "B", context: true }]
  ] as const)("US-43 the place of %s", (_name, links, start, expected) => {
    const store = links.reduce<SessionStore>((s, [child, parent]) => recordSession(s, { id: child, parent }, 0), emptySessions)
    const place = placeOf(store, start)
    expect(place._tag === "Known" ? { _tag: place._tag, root: place.root, context: place.context } : place).toEqual(expected)
  })

  it("US-11 a tree under a context session is the context agent's, from any session in it; its root is not", () => {
    let store = recordSession(emptySessions, { id: "R" }, 0)
    store = recordSession(store, { id: "M", parent: "R", agent: "context" }, 0)
    store = recordSession(store, { id: "K", parent: "M" }, 0)
    expect(placeOf(store, "K")).toMatchObject({ _tag: "Known", root: "R", context: true })
    expect(placeOf(store, "R")).toMatchObject({ _tag: "Known", root: "R", context: false })
  })

  it("US-43 the engine's walk takes a session without a parent link for a root; the notification machine's waits for it", () => {
    const store = recordChild(recordChild(emptySessions, { id: "G", parent: "C" }, 0), { id: "C", parent: "A" }, 0)
    expect(lineageOf(store, "G")).toEqual(["G", "C", "A"])
    expect(lineageOf(store, "unknown")).toEqual(["unknown"])
    expect(climbKnown(store, "G")).toEqual({ path: ["G", "C"], end: { _tag: "Unknown", missing: "A" } })
  })
})

describe("the store's bounds", () => {
  it.prop(
    "US-11 past its bound the store forgets the oldest fifth seen at once, and never more",
    [fc.integer({ min: 1, max: 60 }), fc.array(fc.integer({ min: 0, max: 1_000 }), { maxLength: 80 })],
    ([max, times]) => {
      const store = times.reduce<SessionStore>((s, t, i) => HashMap.set(s, `s${i}`, { parent: undefined, title: undefined, context: false, compacting: false, seenAt: t }), emptySessions)
      const bounded = boundSessions(store, max)
      if (times.length <= max) return void expect(bounded).toBe(store)
      const gone = Math.ceil(max / 5)
      expect(sessionCount(bounded)).toBe(times.length - gone)
      const kept = Array.from(bounded, ([, r]) => r.seenAt)
      const forgotten = Array.from(store, ([, r]) => r.seenAt).sort((a, b) => a - b).slice(0, gone)
      for (const t of kept) expect(t).toBeGreaterThanOrEqual(forgotten.at(-1)!)
    }
  )

  it("US-9 keeping by a rule forgets the rest; the same store when every session is kept", () => {
    const store = ["a", "b", "c"].reduce<SessionStore>((s, k) => recordChild(s, { id: k, parent: "P" }, 0), emptySessions)
    expect(keepSessions(store, () => true)).toBe(store)
    expect([...HashMap.keys(keepSessions(store, (k) => k !== "b"))].sort()).toEqual(["a", "c"])
  })
})
