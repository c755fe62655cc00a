/** The permit machine's rules (issue 21), one table test per rule. */
import { describe, expect, it } from "@effect/vitest"
import { stepPermits } from "../../../src/core/permits/machine.js"
import { PAUSE_AFTER_MS, type Capacities, type PermitOp, type PermitView } from "../../../src/core/permits/types.js"

const T = 1_796_115_600_000
const CAPS: Capacities = { heavy: 2 }

const holder = { host: "h", pid: 100, startToken: "7", via: "plugin" as const }

/** An entry: queued unless `grantedAt` is given. */
const entry = (id: string, seq: number, over: Partial<PermitView> = {}): PermitView => ({
  id,
  token: `tok-${id}`,
  budget: "heavy",
  weight: 1,
  reason: `job ${id}`,
  holder,
  seq,
  requestedAt: T,
  gone: false,
  ...over
})

const held = (id: string, seq: number, over: Partial<PermitView> = {}) => entry(id, seq, { grantedAt: T, ahead: 0, ...over })

const request = (id: string, over: Record<string, unknown> = {}): PermitOp => ({
  op: "request",
  entry: { id, token: `tok-${id}`, budget: "heavy", weight: 1, reason: `job ${id}`, holder, requestedAt: T + 10, ...over }
})

const SETTLE: PermitOp = { op: "settle" }

const acts = (ds: ReadonlyArray<{ readonly act: string; readonly id: string }>) => ds.map((d) => `${d.act} ${d.id}`)

/** Deeply frozen, so a mutation of the input throws. */
const frozen = <A>(a: A): A => {
  if (a !== null && typeof a === "object") {
    for (const v of Object.values(a)) frozen(v)
    Object.freeze(a)
  }
  return a
}

describe("permit machine: settle", () => {
  it("US-51 settle drops a gone holder (release, holder gone) and a gone requester (cancel, requester gone) before anything else", () => {
    const r = stepPermits(frozen([held("a", 1, { gone: true }), entry("b", 2, { gone: true }), entry("c", 3)]), CAPS, SETTLE, T + 100)
    expect(r.decisions).toEqual([
      { type: "permit", at: T + 100, act: "release", id: "a", budget: "heavy", weight: 1, cause: "holder gone" },
      { type: "permit", at: T + 100, act: "cancel", id: "b", budget: "heavy", weight: 1, cause: "requester gone" },
      { type: "permit", at: T + 100, act: "grant", id: "c", budget: "heavy", weight: 1, waitedMs: 100, before: 0 }
    ])
    expect(r.changes.remove).toEqual(["a", "b"])
    expect(r.entries.map((e) => e.id)).toEqual(["c"])
    expect(r.answer).toEqual({ state: "already" })
  })

  it("US-51 settle with nothing to do changes nothing and decides nothing", () => {
    const input = frozen([held("a", 1), entry("b", 2, { weight: 2 })])
    const r = stepPermits(input, CAPS, SETTLE, T + 5)
    expect(r.decisions).toEqual([])
    expect(r.changes).toEqual({ put: [], remove: [] })
    expect(r.entries).toEqual(input)
  })

  it("US-51 gone entries of a budget this process does not know still leave; its queue is neither granted nor paused", () => {
    const r = stepPermits(
      frozen([held("a", 1, { budget: "gpu", gone: true }), entry("b", 2, { budget: "gpu" }), entry("c", 3, { budget: "gpu", seenAt: T, headSince: T })]),
      CAPS,
      SETTLE,
      T + PAUSE_AFTER_MS * 3
    )
    expect(acts(r.decisions)).toEqual(["release a"])
    expect(r.entries.map((e) => [e.id, e.grantedAt, e.pausedAt])).toEqual([["b", undefined, undefined], ["c", undefined, undefined]])
  })
})

describe("permit machine: the grant walk", () => {
  it("US-51 grants in seq order while used + weight fits the capacity", () => {
    const r = stepPermits(frozen([entry("b", 5), entry("a", 4), entry("c", 6)]), CAPS, SETTLE, T + 1)
    expect(acts(r.decisions)).toEqual(["grant a", "grant b"])
    expect(r.entries.map((e) => [e.id, e.grantedAt])).toEqual([["a", T + 1], ["b", T + 1], ["c", undefined]])
    expect(r.changes.put.map((e) => e.id)).toEqual(["a", "b"])
  })

  it("US-51 head-of-line blocking: a weight that does not fit stops the walk, a later one that would fit waits", () => {
    const r = stepPermits(frozen([held("a", 1), entry("big", 2, { weight: 2 }), entry("small", 3)]), CAPS, SETTLE, T + 1)
    expect(r.decisions).toEqual([])
    expect(r.entries.filter((e) => e.grantedAt !== undefined).map((e) => e.id)).toEqual(["a"])
  })

  it("US-51 budgets are walked independently: a blocked heavy queue does not block gpu", () => {
    const r = stepPermits(frozen([held("a", 1), entry("big", 2, { weight: 2 }), entry("g", 3, { budget: "gpu" })]), { heavy: 2, gpu: 1 }, SETTLE, T + 1)
    expect(acts(r.decisions)).toEqual(["grant g"])
  })

  it("US-51 grant carries waitedMs = now − requestedAt and before = ahead (0 when absent)", () => {
    const r = stepPermits(frozen([entry("a", 1, { requestedAt: T, ahead: 3 }), entry("b", 2, { requestedAt: T + 500 })]), CAPS, SETTLE, T + 2000)
    expect(r.decisions).toMatchObject([
      { act: "grant", id: "a", waitedMs: 2000, before: 3 },
      { act: "grant", id: "b", waitedMs: 1500, before: 0 }
    ])
  })

  it("US-51 a shrunken capacity grants nothing more while more units than it are held", () => {
    const r = stepPermits(frozen([held("a", 1, { weight: 2 }), entry("b", 2)]), { heavy: 1 }, SETTLE, T + 1)
    expect(r.decisions).toEqual([])
  })
})

describe("permit machine: request", () => {
  it("US-51 request refuses an unknown budget (own keys only) and a weight outside 1..capacity, integers only", () => {
    for (const budget of ["gpu", "constructor", "__proto__", "toString"]) {
      const r = stepPermits([], CAPS, request("x", { budget }), T)
      expect(r.answer).toEqual({ state: "refused", reason: "unknown budget" })
      expect(r.decisions).toEqual([{ type: "permit", at: T, act: "refuse", id: "x", budget, reason: "unknown budget" }])
      expect(r.changes).toEqual({ put: [], remove: [] })
    }
    for (const weight of [0, -1, 3, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      const r = stepPermits([], CAPS, request("x", { weight }), T)
      expect(r.answer).toEqual({ state: "refused", reason: "weight outside 1..capacity" })
      expect(r.entries).toEqual([])
    }
  })

  it("US-51 a request granted at once prints only grant; seq is 1 on an empty table", () => {
    const r = stepPermits([], CAPS, request("x"), T + 10)
    expect(acts(r.decisions)).toEqual(["grant x"])
    expect(r.answer).toEqual({ state: "granted", id: "x", waitedMs: 0, before: 0 })
    expect(r.changes.put).toEqual([
      { id: "x", token: "tok-x", budget: "heavy", weight: 1, reason: "job x", holder, seq: 1, requestedAt: T + 10, ahead: 0, grantedAt: T + 10 }
    ])
  })

  it("US-51 a request that waits prints queue with its position; seq = max seq + 1; ahead counts held and queued of its budget", () => {
    const input = frozen([held("a", 7, { weight: 2 }), entry("b", 9), entry("g", 12, { budget: "gpu" })])
    const r = stepPermits(input, { heavy: 2, gpu: 1 }, request("x"), T + 10)
    // queue sits at the op's place: before the walk's grants
    expect(acts(r.decisions)).toEqual(["queue x", "grant g"])
    expect(r.decisions[0]).toEqual({ type: "permit", at: T + 10, act: "queue", id: "x", budget: "heavy", weight: 1, position: 2 })
    const x = r.entries.find((e) => e.id === "x")!
    expect(x.seq).toBe(13)
    expect(x.ahead).toBe(2)
    expect(r.answer).toEqual({ state: "queued", id: "x", position: 2, paused: false })
  })

  it("US-51 a resent request (same id and token) is answered as a poll; another token is refused not yours", () => {
    const input = frozen([held("a", 1, { weight: 2 }), entry("x", 2, { seenAt: T, headSince: T })])
    const again = stepPermits(input, CAPS, request("x"), T + 50)
    expect(again.answer).toEqual({ state: "queued", id: "x", position: 1, paused: false })
    expect(again.entries.find((e) => e.id === "x")?.seenAt).toBe(T + 50)
    const other = stepPermits(input, CAPS, request("x", { token: "stolen" }), T + 50)
    expect(other.answer).toEqual({ state: "refused", reason: "not yours" })
    expect(other.changes).toEqual({ put: [], remove: [] })
  })

  it("US-51 a request whose head-of-line predecessor was just dropped is granted with it in the same step", () => {
    const r = stepPermits(frozen([held("a", 1, { weight: 2, gone: true }), entry("b", 2, { weight: 2 })]), CAPS, request("x"), T + 10)
    expect(acts(r.decisions)).toEqual(["release a", "queue x", "grant b"])
    expect(r.answer).toMatchObject({ state: "queued", position: 1 })
  })
})

describe("permit machine: poll and pausing", () => {
  it("US-51 poll of an unknown id is gone (requester gone), of one this step dropped gone with its cause; a wrong token is refused", () => {
    expect(stepPermits([], CAPS, { op: "poll", id: "x", token: "t" }, T).answer).toEqual({ state: "gone", cause: "requester gone" })
    const dropped = stepPermits(frozen([held("a", 1, { gone: true })]), CAPS, { op: "poll", id: "a", token: "tok-a" }, T)
    expect(dropped.answer).toEqual({ state: "gone", cause: "holder gone" })
    const wrong = stepPermits(frozen([held("a", 1)]), CAPS, { op: "poll", id: "a", token: "nope" }, T)
    expect(wrong.answer).toEqual({ state: "refused", reason: "not yours" })
    expect(wrong.decisions).toEqual([{ type: "permit", at: T, act: "refuse", id: "a", budget: "heavy", reason: "not yours" }])
  })

  it("US-51 poll of a queued pausable entry sets seenAt (a change); of a non-pausable or held one changes nothing", () => {
    const input = frozen([held("a", 1, { weight: 2, seenAt: T }), entry("b", 2, { seenAt: T }), entry("c", 3)])
    const b = stepPermits(input, CAPS, { op: "poll", id: "b", token: "tok-b" }, T + 9)
    expect(b.changes.put).toMatchObject([{ id: "b", seenAt: T + 9 }])
    expect(b.answer).toEqual({ state: "queued", id: "b", position: 1, paused: false })
    for (const id of ["a", "c"]) expect(stepPermits(input, CAPS, { op: "poll", id, token: `tok-${id}` }, T + 9).changes.put.filter((e) => e.id === id)).toEqual([])
    expect(stepPermits(input, CAPS, { op: "poll", id: "a", token: "tok-a" }, T + 9).answer).toEqual({ state: "granted", id: "a", waitedMs: 0, before: 0 })
  })

  it("US-51 a pausable head that does not fit gets headSince when it becomes the head", () => {
    const r = stepPermits(frozen([held("a", 1, { weight: 2 }), entry("b", 2, { seenAt: T }), entry("c", 3, { seenAt: T })]), CAPS, SETTLE, T + 5)
    const { gone: _gone, ...b } = entry("b", 2, { seenAt: T, headSince: T + 5 })
    expect(r.changes.put).toEqual([b])
    expect(r.decisions).toEqual([])
  })

  it("US-51 the pause rule: a pausable head silent for more than PAUSE_AFTER_MS since max(seenAt, headSince) is paused once, and the next is served", () => {
    const table = frozen([held("a", 1), entry("b", 2, { seenAt: T, headSince: T + 1000, weight: 2 }), entry("c", 3)])
    // exactly at the limit: not yet
    expect(stepPermits(table, CAPS, SETTLE, T + 1000 + PAUSE_AFTER_MS).decisions).toEqual([])
    const r = stepPermits(table, CAPS, SETTLE, T + 1001 + PAUSE_AFTER_MS)
    const now = T + 1001 + PAUSE_AFTER_MS
    expect(r.decisions).toEqual([
      { type: "permit", at: now, act: "pause", id: "b", budget: "heavy" },
      { type: "permit", at: now, act: "grant", id: "c", budget: "heavy", weight: 1, waitedMs: now - T, before: 0 }
    ])
    const b = r.entries.find((e) => e.id === "b")!
    expect(b.pausedAt).toBe(now)
    expect(b.headSince).toBeUndefined()
    // the next step does not pause it again, and the walk skips it
    const again = stepPermits(r.entries, CAPS, SETTLE, now + 5)
    expect(again.decisions).toEqual([])
    expect(stepPermits(r.entries, CAPS, { op: "poll", id: "c", token: "tok-c" }, now + 5).answer).toMatchObject({ state: "granted" })
  })

  it("US-51 seenAt later than headSince keeps the head from pausing", () => {
    const r = stepPermits(frozen([held("a", 1, { weight: 2 }), entry("b", 2, { seenAt: T + PAUSE_AFTER_MS, headSince: T })]), CAPS, SETTLE, T + PAUSE_AFTER_MS + 10)
    expect(r.decisions).toEqual([])
  })

  it("US-51 poll of a paused entry resumes it (resume), and it is served first again when it fits", () => {
    const table = frozen([entry("b", 2, { seenAt: T, pausedAt: T + 40_000 }), entry("c", 3, { seenAt: T + 40_000, headSince: T + 40_000 }), held("a", 1, { weight: 2 })])
    const r = stepPermits(table, CAPS, { op: "poll", id: "b", token: "tok-b" }, T + 50_000)
    expect(acts(r.decisions)).toEqual(["resume b"])
    const b = r.entries.find((e) => e.id === "b")!
    expect(b.pausedAt).toBeUndefined()
    expect(b.seenAt).toBe(T + 50_000)
    expect(b.headSince).toBe(T + 50_000)
    // c is no longer the head: its headSince is cleared
    expect(r.entries.find((e) => e.id === "c")?.headSince).toBeUndefined()
    expect(r.answer).toEqual({ state: "queued", id: "b", position: 1, paused: false })
    const paused = stepPermits(table, CAPS, { op: "poll", id: "c", token: "tok-c" }, T + 50_000)
    // a paused entry ahead does not count in the position
    expect(paused.answer).toEqual({ state: "queued", id: "c", position: 1, paused: false })
  })

  it("US-51 a paused entry answers its own poll only after resuming; a poll of another leaves it paused", () => {
    const table = frozen([held("a", 1, { weight: 2 }), entry("b", 2, { seenAt: T, pausedAt: T + 40_000 })])
    const r = stepPermits(table, CAPS, SETTLE, T + 90_000)
    expect(r.entries.find((e) => e.id === "b")?.pausedAt).toBe(T + 40_000)
  })
})

describe("permit machine: release, cancel, rebind, free", () => {
  it("US-51 release of a held entry frees its units and the next is granted; an unknown id is already, with no decision", () => {
    const input = frozen([held("a", 1, { weight: 2 }), entry("b", 2, { weight: 2 })])
    const r = stepPermits(input, CAPS, { op: "release", id: "a", token: "tok-a" }, T + 7)
    expect(r.decisions).toEqual([
      { type: "permit", at: T + 7, act: "release", id: "a", budget: "heavy", weight: 2, cause: "released" },
      { type: "permit", at: T + 7, act: "grant", id: "b", budget: "heavy", weight: 2, waitedMs: 7, before: 0 }
    ])
    expect(r.answer).toEqual({ state: "released" })
    expect(r.changes.remove).toEqual(["a"])
    const again = stepPermits(r.entries, CAPS, { op: "release", id: "a", token: "tok-a" }, T + 8)
    expect(again.answer).toEqual({ state: "already" })
    expect(again.decisions).toEqual([])
  })

  it("US-51 release of a queued entry is a cancel with cause wait; a wrong token is refused not yours", () => {
    const input = frozen([held("a", 1, { weight: 2 }), entry("b", 2)])
    const r = stepPermits(input, CAPS, { op: "release", id: "b", token: "tok-b" }, T + 7)
    expect(r.decisions).toEqual([{ type: "permit", at: T + 7, act: "cancel", id: "b", budget: "heavy", weight: 1, cause: "wait" }])
    const wrong = stepPermits(input, CAPS, { op: "release", id: "a", token: "tok-b" }, T + 7)
    expect(wrong.answer).toEqual({ state: "refused", reason: "not yours" })
    expect(wrong.entries).toEqual(input)
  })

  it("US-51 cancel removes a held or queued entry with its cause; unknown is already; a wrong token is refused", () => {
    const input = frozen([held("a", 1, { weight: 2 }), entry("b", 2)])
    const ofHeld = stepPermits(input, CAPS, { op: "cancel", id: "a", token: "tok-a", cause: "aborted" }, T + 3)
    expect(acts(ofHeld.decisions)).toEqual(["cancel a", "grant b"])
    expect(ofHeld.decisions[0]).toMatchObject({ cause: "aborted", weight: 2 })
    const ofQueued = stepPermits(input, CAPS, { op: "cancel", id: "b", token: "tok-b", cause: "timeout" }, T + 3)
    expect(ofQueued.decisions).toEqual([{ type: "permit", at: T + 3, act: "cancel", id: "b", budget: "heavy", weight: 1, cause: "timeout" }])
    expect(ofQueued.answer).toEqual({ state: "released" })
    expect(stepPermits(input, CAPS, { op: "cancel", id: "z", token: "t", cause: "dispose" }, T).answer).toEqual({ state: "already" })
    expect(stepPermits(input, CAPS, { op: "cancel", id: "b", token: "t", cause: "dispose" }, T).answer).toEqual({ state: "refused", reason: "not yours" })
  })

  it("US-51 rebind sets the holder's group (a change) and answers as a poll; the same group again changes nothing", () => {
    const group = { pgid: 4242, startToken: "99" }
    const input = frozen([held("a", 1)])
    const r = stepPermits(input, CAPS, { op: "rebind", id: "a", token: "tok-a", group }, T + 2)
    expect(r.changes.put).toMatchObject([{ id: "a", holder: { ...holder, group } }])
    expect(r.answer).toEqual({ state: "granted", id: "a", waitedMs: 0, before: 0 })
    expect(stepPermits(r.entries, CAPS, { op: "rebind", id: "a", token: "tok-a", group: { ...group } }, T + 3).changes.put).toEqual([])
    expect(stepPermits(input, CAPS, { op: "rebind", id: "a", token: "x", group }, T).answer).toEqual({ state: "refused", reason: "not yours" })
    expect(stepPermits(input, CAPS, { op: "rebind", id: "q", token: "x", group }, T).answer).toEqual({ state: "gone", cause: "requester gone" })
  })

  it("US-51 free: unknown permit refused; an alive holder refused without force; force releases (held) or cancels (queued) as forced", () => {
    const input = frozen([held("a", 1, { weight: 2 }), entry("b", 2)])
    expect(stepPermits(input, CAPS, { op: "free", id: "z", force: false }, T).decisions).toEqual([{ type: "permit", at: T, act: "refuse", id: "z", budget: "", reason: "unknown permit" }])
    expect(stepPermits(input, CAPS, { op: "free", id: "a", force: false }, T).answer).toEqual({ state: "refused", reason: "holder alive" })
    const forced = stepPermits(input, CAPS, { op: "free", id: "a", force: true }, T + 1)
    expect(forced.decisions).toMatchObject([{ act: "release", id: "a", cause: "forced" }, { act: "grant", id: "b" }])
    expect(forced.answer).toEqual({ state: "gone", cause: "forced" })
    expect(stepPermits(input, CAPS, { op: "free", id: "b", force: true }, T + 1).decisions).toMatchObject([{ act: "cancel", id: "b", cause: "forced" }])
  })

  it("US-51 free of a gone holder: the settle drops it (holder gone) and free answers gone with that cause", () => {
    const r = stepPermits(frozen([held("a", 1, { gone: true })]), CAPS, { op: "free", id: "a", force: false }, T)
    expect(r.decisions).toEqual([{ type: "permit", at: T, act: "release", id: "a", budget: "heavy", weight: 1, cause: "holder gone" }])
    expect(r.answer).toEqual({ state: "gone", cause: "holder gone" })
  })
})

describe("permit machine: changes", () => {
  it("US-51 changes are minimal: untouched entries are not put, each touched entry is put once with its final fields and without gone", () => {
    const input = frozen([held("a", 1), entry("b", 2, { seenAt: T }), entry("c", 3, { weight: 2 }), entry("d", 4)])
    const r = stepPermits(input, CAPS, { op: "poll", id: "b", token: "tok-b" }, T + 3)
    expect(r.changes.put).toEqual([{ id: "b", token: "tok-b", budget: "heavy", weight: 1, reason: "job b", holder, seq: 2, requestedAt: T, seenAt: T + 3, grantedAt: T + 3 }])
    expect(r.changes.remove).toEqual([])
    expect(r.entries.find((e) => e.id === "a")).toBe(input[0])
  })
})
