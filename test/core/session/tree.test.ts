/** The session tree (SPEC §8.2, §10.1): the one walk up it, blocked sessions, and its immutable bookkeeping. */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc, HashMap } from "effect"
import { emptySessions, parentLink, recordChild, sessionCount } from "../../../src/core/session/store.js"
import {
  blockedSessions,
  CHILD_MEMORY_MS,
  CHILD_RING,
  climb,
  emptyTree,
  isChild,
  lineage,
  pruneTree,
  TREE_DEPTH_MAX,
  withAnswer,
  withAsk,
  withBusy,
  withChild,
  withoutBusy,
  type ParentOf,
  type SessionTree
} from "../../../src/core/session/tree.js"

const treeOf = (links: ReadonlyArray<readonly [string, string]>, asks: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = []): SessionTree => ({
  ...emptyTree(),
  sessions: links.reduce((store, [id, parent]) => recordChild(store, { id, parent }, 0), emptySessions),
  asks: new Map(asks.map(([s, ids]) => [s, new Set(ids)]))
})

/** A chain `c0 → c1 → … → c<n>` (each the child of the next), `c<n>` a root. */
const chain = (n: number): ReadonlyArray<readonly [string, string]> => Array.from({ length: n }, (_, i) => [`c${i}`, `c${i + 1}`] as const)

/** Parents as the notification machine knows them: absent ids are unknown, `null` a root. */
const known =
  (m: Record<string, string | null>): ParentOf =>
  (s) =>
    Object.hasOwn(m, s) ? m[s] : undefined

describe("the walk up the tree", () => {
  it.each([
    ["a root", { A: null }, "A", ["A"], { _tag: "Root", root: "A" }],
    ["a grandchild", { G: "C", C: "A", A: null }, "G", ["G", "C", "A"], { _tag: "Root", root: "A" }],
    ["an unknown start", {}, "X", [], { _tag: "Unknown", missing: "X" }],
    ["an unknown parent on the way", { G: "C", C: "B" }, "G", ["G", "C"], { _tag: "Unknown", missing: "B" }],
    ["a cycle", { A: "B", B: "A" }, "A", undefined, { _tag: "TooDeep", next: "B" }]
  ] as const)("US-43 %s", (_name, parents, start, path, end) => {
    const c = climb(start, known(parents))
    expect(c.end).toEqual(end)
    if (path !== undefined) expect(c.path).toEqual(path)
  })

  it("US-43 a chain is walked TREE_DEPTH_MAX levels up, no further", () => {
    const deep = climb("c0", (s) => new Map(chain(TREE_DEPTH_MAX + 5)).get(s) ?? null)
    expect(deep.path.length).toBe(TREE_DEPTH_MAX + 1)
    expect(deep.end).toEqual({ _tag: "TooDeep", next: `c${TREE_DEPTH_MAX + 1}` })
    const exact = climb("c0", (s) => new Map(chain(TREE_DEPTH_MAX)).get(s) ?? null)
    expect(exact.end).toEqual({ _tag: "Root", root: `c${TREE_DEPTH_MAX}` })
    expect(lineage(treeOf(chain(3)), "c1")).toEqual(["c1", "c2", "c3"])
    expect(isChild(treeOf(chain(1)), "c0")).toBe(true)
    expect(isChild(treeOf(chain(1)), "c1")).toBe(false)
  })
})

describe("blocked sessions (SPEC §8.2 step 2)", () => {
  it("US-43 a pending ask in a grandchild blocks it and every session above it; answered asks block nothing", () => {
    const tree = treeOf([["G", "C"], ["C", "A"], ["D", "A"]], [["G", ["q1"]], ["D", []]])
    expect([...blockedSessions(tree)].sort()).toEqual(["A", "C", "G"])
    expect(blockedSessions(treeOf([["G", "C"]], [["G", []]])).size).toBe(0)
  })

  it.prop(
    "US-43 for any forest and asks, the blocked sessions are the asking sessions and their ancestors",
    [fc.array(fc.tuple(fc.integer({ min: 0, max: 9 }), fc.integer({ min: 0, max: 9 })), { maxLength: 12 }), fc.array(fc.integer({ min: 0, max: 9 }), { maxLength: 4 })],
    ([links, asking]) => {
      // a forest: each session's parent has a larger number, so there is no cycle
      const parents = new Map<string, string>(links.filter(([a, b]) => a < b).map(([a, b]) => [`s${a}`, `s${b}`] as const))
      const tree = treeOf([...parents], asking.map((a) => [`s${a}`, ["q"]] as const))
      const expected = new Set<string>()
      for (const a of asking) for (let s: string | undefined = `s${a}`; s !== undefined; s = parents.get(s)) expected.add(s)
      expect([...blockedSessions(tree)].sort()).toEqual([...expected].sort())
    }
  )
})

describe("the tree's bookkeeping is immutable", () => {
  it("US-5 a child links to its parent and takes the newest place in a ring of CHILD_RING", () => {
    const before = emptyTree()
    let tree = before
    for (let i = 0; i < CHILD_RING + 2; i++) tree = withChild(tree, "P", { id: `k${i}`, createdAt: i, agent: undefined })
    expect(tree.children.get("P")!.map((c) => c.id)).toEqual(Array.from({ length: CHILD_RING }, (_, i) => `k${i + 2}`))
    expect(parentLink(tree.sessions, `k${CHILD_RING + 1}`)).toBe("P")
    expect(sessionCount(before.sessions) + before.children.size).toBe(0)
  })

  it("US-43 asks open and close by id; `*` closes every ask of the session", () => {
    const asked = withAsk(withAsk(emptyTree(), "S", "q1"), "S", "p1")
    expect([...asked.asks.get("S")!]).toEqual(["q1", "p1"])
    expect([...withAnswer(asked, "S", "q1").asks.get("S")!]).toEqual(["p1"])
    expect(withAnswer(asked, "S", "*").asks.get("S")!.size).toBe(0)
    expect(asked.asks.get("S")!.size).toBe(2)
  })

  it("US-8 busy marks: set and cleared; the same tree when nothing changes", () => {
    const tree = emptyTree()
    const busy = withBusy(tree, "S")
    expect(busy.busy.has("S")).toBe(true)
    expect(withBusy(busy, "S")).toBe(busy)
    expect(withoutBusy(tree, "S")).toBe(tree)
    expect(withoutBusy(busy, "S").busy.has("S")).toBe(false)
    expect(tree.busy.size).toBe(0)
  })

  it("US-9 pruning forgets links and busy marks of sessions no longer remembered, old rings unless the owner holds a claim, and answered asks", () => {
    const now = 10 * CHILD_MEMORY_MS
    let tree = withChild(withChild(emptyTree(), "Old", { id: "o1", createdAt: 0, agent: undefined }), "New", { id: "n1", createdAt: now - 1, agent: undefined })
    tree = withChild(tree, "Held", { id: "h1", createdAt: 0, agent: undefined })
    tree = withBusy(withBusy(withAnswer(withAsk(withAsk(tree, "n1", "q"), "o1", "q"), "o1", "q"), "n1"), "o1")
    const pruned = pruneTree(tree, now, (s) => s === "n1", (owner) => owner === "Held")
    expect([...HashMap.keys(pruned.sessions)]).toEqual(["n1"])
    expect([...pruned.children.keys()].sort()).toEqual(["Held", "New"])
    expect([...pruned.asks.keys()]).toEqual(["n1"])
    expect([...pruned.busy]).toEqual(["n1"])
  })
})
