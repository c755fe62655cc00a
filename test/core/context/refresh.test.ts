/**
 * The context map's refresh machine (core/context/refresh.ts): collect, skip, space, cap, re-queue,
 * as tables of trace lines and as properties over random line sequences.
 */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { PROMPT_PATHS_MAX, queuedPath, REFRESH_SPACING_MS } from "../../../src/core/context/map.js"
import { refreshPrompt } from "../../../src/core/context/prompt.js"
import { initialRefresh, stepRefresh, type ContextDecision, type ContextLine, type MapStamp, type RefreshState } from "../../../src/core/context/refresh.js"

const T0 = 1_796_115_600_000
const ROOT = "/home/u/proj"
const NO_MAP: MapStamp = { exists: false, bytes: 0, stamp: "" }
const MAP: MapStamp = { exists: true, bytes: 2_000, stamp: "architecture.md:2000:1" }
const WRITTEN: MapStamp = { exists: true, bytes: 2_400, stamp: "architecture.md:2400:2" }

const run = (lines: ReadonlyArray<ContextLine>, from: RefreshState = initialRefresh) => {
  let state = from
  const decisions: Array<ContextDecision> = []
  for (const l of lines) {
    const r = stepRefresh(state, l)
    state = r.state
    decisions.push(...r.decisions)
  }
  return { state, decisions }
}

const load = (at = T0, extra: Partial<Extract<ContextLine, { type: "context_load" }>> = {}): ContextLine => ({ type: "context_load", at, root: ROOT, ...extra })
const edit = (at: number, ...paths: Array<string>): ContextLine => ({ type: "context_edit", at, paths })
const idle = (at: number, map: MapStamp = MAP, requested = false): ContextLine => ({ type: "context_idle", at, session: "ses_root", map, ...(requested ? { requested } : {}) })
const starts = (ds: ReadonlyArray<ContextDecision>) => ds.filter((d): d is Extract<ContextDecision, { type: "context_start" }> => d.type === "context_start")

describe("the context map's refresh machine", () => {
  it.each([
    ["src/a.ts", "src/a.ts"],
    [`${ROOT}/src/a.ts`, "src/a.ts"],
    [`${ROOT}/./src/../lib/b.ts`, "lib/b.ts"],
    [`${ROOT}/.opencode/context/architecture.md`, undefined],
    [".opencode/context/manager.md", undefined],
    [`${ROOT}/node_modules/x/index.js`, undefined],
    ["packages/web/dist/app.js", undefined],
    ["a/.git/config", undefined],
    ["src/__pycache__/m.pyc", undefined],
    ["/home/u/other/src/a.ts", undefined],
    [`${ROOT}-two/src/a.ts`, undefined],
    ["../outside.ts", undefined],
    [ROOT, undefined],
    ["", undefined],
    [".opencode/agents.md", ".opencode/agents.md"],
    ["distant/file.ts", "distant/file.ts"]
  ])("US-20 an edited path %s is queued as %s", (path, expected) => {
    expect(queuedPath(ROOT, path)).toBe(expected)
  })

  it("US-20 criterion 1: an edit to src/a.ts and no map dir, then a root idle: one bootstrap run whose prompt has the root and src/a.ts", () => {
    const r = run([load(), edit(T0 + 1, `${ROOT}/src/a.ts`), idle(T0 + 2, NO_MAP)])
    const s = starts(r.decisions)
    expect(s).toHaveLength(1)
    expect(s[0]).toMatchObject({ kind: "bootstrap", paths: ["src/a.ts"], more: 0, claim: `context-map:${s[0]!.run}` })
    const prompt = refreshPrompt(ROOT, s[0]!, { bytes: 0, maxBytes: 24_576 })
    expect(prompt).toContain(ROOT)
    expect(prompt).toContain("- src/a.ts")
  })

  it("US-20 criterion 2: with the map dir present the run is an update", () => {
    const r = run([load(), edit(T0 + 1, "src/a.ts"), idle(T0 + 2, MAP)])
    expect(starts(r.decisions).map((d) => d.kind)).toEqual(["update"])
  })

  it("US-20 criterion 3: edits only under node_modules, dist, the map or outside the root start nothing", () => {
    const r = run([
      load(),
      edit(T0 + 1, `${ROOT}/node_modules/a.js`, `${ROOT}/dist/b.js`, `${ROOT}/.opencode/context/decisions.md`, "/tmp/elsewhere.ts"),
      idle(T0 + 2)
    ])
    expect(r.decisions).toEqual([])
    expect(r.state.pending).toEqual([])
  })

  it("US-20 edits before the project root is known are not collected", () => {
    const r = run([edit(T0, "src/a.ts"), idle(T0 + 1)])
    expect(r.decisions).toEqual([])
  })

  it("US-20 criterion 4: an idle while a run is in flight starts no second run", () => {
    const r = run([load(), edit(T0 + 1, "src/a.ts"), idle(T0 + 2), edit(T0 + 3, "src/b.ts"), idle(T0 + REFRESH_SPACING_MS + 5)])
    expect(starts(r.decisions)).toHaveLength(1)
    expect(r.decisions.at(-1)).toMatchObject({ type: "context_skip", reason: "in_flight", pending: 1 })
  })

  it("US-20 criterion 5: a run that changed no map file ends as unchanged; one that wrote the map as ok", () => {
    const first = run([load(), edit(T0 + 1, "src/a.ts"), idle(T0 + 2)])
    const r0 = starts(first.decisions)[0]!.run
    const unchanged = run([{ type: "context_end", at: T0 + 60_000, run: r0, ok: true, map: MAP }], first.state)
    expect(unchanged.decisions).toEqual([{ type: "context_done", at: T0 + 60_000, run: r0, outcome: "unchanged", requeued: 0 }])
    const changed = run([{ type: "context_end", at: T0 + 60_000, run: r0, ok: true, map: WRITTEN }], first.state)
    expect(changed.decisions[0]).toMatchObject({ outcome: "ok" })
    expect(changed.state.lastRun).toMatchObject({ run: r0, outcome: "ok", paths: 1 })
  })

  it("US-20 criterion 6: a failed run's paths are in the next run's prompt, 10 minutes later", () => {
    const a = run([load(), edit(T0 + 1, "src/a.ts", "src/b.ts"), idle(T0 + 2)])
    const r0 = starts(a.decisions)[0]!.run
    const b = run(
      [
        edit(T0 + 5, "src/c.ts"),
        { type: "context_end", at: T0 + 30_000, run: r0, ok: false, map: MAP, reason: "rate limit" },
        idle(T0 + 60_000),
        idle(T0 + 2 + REFRESH_SPACING_MS)
      ],
      a.state
    )
    expect(b.decisions[0]).toMatchObject({ type: "context_done", outcome: "failed", requeued: 2, reason: "rate limit" })
    expect(b.decisions[1]).toMatchObject({ type: "context_skip", reason: "spacing", pending: 3, until: T0 + 2 + REFRESH_SPACING_MS })
    expect(starts(b.decisions)[0]!.paths).toEqual(["src/a.ts", "src/b.ts", "src/c.ts"])
  })

  it("US-20 criterion 7: 30 pending paths list 25 and …and 5 more", () => {
    const paths = Array.from({ length: 30 }, (_, i) => `src/f${i}.ts`)
    const r = run([load(), edit(T0 + 1, ...paths), idle(T0 + 2)])
    const s = starts(r.decisions)[0]!
    expect(s.paths).toEqual(paths.slice(0, 25))
    expect(s.more).toBe(5)
    const prompt = refreshPrompt(ROOT, s, { bytes: 2_000, maxBytes: 24_576 })
    expect(prompt).toContain("…and 5 more")
    expect(prompt).not.toContain("src/f25.ts")
  })

  it("US-20 a requested refresh starts at the next idle even with nothing pending and inside the spacing", () => {
    const a = run([load(T0, { lastStartedAt: T0 - 60_000 }), idle(T0 + 1, MAP, true)])
    expect(starts(a.decisions)).toEqual([expect.objectContaining({ requested: true, paths: [], more: 0 })])
  })

  it("US-20 a map over its budget asks the run to condense it", () => {
    const r = run([load(T0, { maxBytes: 1_000 }), edit(T0 + 1, "a.ts"), idle(T0 + 2, MAP)])
    const s = starts(r.decisions)[0]!
    expect(s.condense).toBe(true)
    expect(refreshPrompt(ROOT, s, { bytes: 2_000, maxBytes: 1_000 })).toContain("over its 1 KiB budget: condense it")
  })

  it("US-20 a load restores the queue and the last start (spacing survives a restart)", () => {
    const r = run([load(T0, { pending: ["src/a.ts", "src/a.ts", "b.ts"], lastStartedAt: T0 - 60_000 }), idle(T0 + 1)])
    expect(r.state.pending).toEqual(["src/a.ts", "b.ts"])
    expect(r.decisions).toEqual([{ type: "context_skip", at: T0 + 1, reason: "spacing", pending: 2, until: T0 - 60_000 + REFRESH_SPACING_MS }])
  })

  // --- properties over random line sequences ---

  const PATHS = ["src/a.ts", `${ROOT}/src/b.ts`, "lib/c.ts", `${ROOT}/node_modules/x.js`, ".opencode/context/decisions.md", "/elsewhere/d.ts"]
  const step = fc.oneof(
    { weight: 4, arbitrary: fc.record({ kind: fc.constant("edit" as const), paths: fc.subarray(PATHS, { minLength: 1 }), wait: fc.integer({ min: 0, max: 120_000 }) }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant("idle" as const), requested: fc.boolean(), exists: fc.boolean(), wait: fc.integer({ min: 0, max: 700_000 }) }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant("end" as const), ok: fc.boolean(), changed: fc.boolean(), wait: fc.integer({ min: 0, max: 300_000 }) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("bound" as const), wait: fc.integer({ min: 0, max: 1_000 }) }) }
  )

  /** Lines from random steps: `end` and `bound` name the run in flight (or a stale one). */
  type Step = { readonly kind: string; readonly wait: number; readonly [k: string]: unknown }
  const drive = (steps: ReadonlyArray<Step>) => {
    let state = stepRefresh(initialRefresh, load()).state
    let at = T0
    const log: Array<{ line: ContextLine; before: RefreshState; after: RefreshState; decisions: ReadonlyArray<ContextDecision> }> = []
    for (const s of steps) {
      at += s.wait
      const run = state.inFlight?.run ?? "ctx-stale"
      const line: ContextLine =
        s.kind === "edit"
          ? { type: "context_edit", at, paths: s.paths as ReadonlyArray<string> }
          : s.kind === "idle"
            ? { type: "context_idle", at, session: "r", map: s.exists ? MAP : NO_MAP, requested: s.requested as boolean }
            : s.kind === "end"
              ? { type: "context_end", at, run, ok: s.ok as boolean, map: s.changed ? WRITTEN : (state.inFlight?.map ?? MAP) }
              : { type: "context_bound", at, run, session: "ses_ctx" }
      const r = stepRefresh(state, line)
      log.push({ line, before: state, after: r.state, decisions: r.decisions })
      state = r.state
    }
    return log
  }

  it.prop("US-20 never two runs in flight: a start only when none is, and a run ends before the next starts", [fc.array(step, { maxLength: 60 })], ([steps]) => {
    for (const e of drive(steps)) {
      const started = e.decisions.filter((d) => d.type === "context_start").length
      expect(started).toBeLessThanOrEqual(1)
      if (started === 1) expect(e.before.inFlight).toBeUndefined()
    }
  })

  it.prop("US-20 spacing held: an automatic run starts at least 10 minutes after the one before", [fc.array(step, { maxLength: 60 })], ([steps]) => {
    let last: number | undefined
    for (const e of drive(steps)) {
      for (const d of e.decisions) {
        if (d.type !== "context_start") continue
        if (!d.requested && last !== undefined) expect(d.at - last).toBeGreaterThanOrEqual(REFRESH_SPACING_MS)
        last = d.at
      }
    }
  })

  it.prop("US-20 no path lost: every queued path stays pending or in flight until a run that took it ends well", [fc.array(step, { maxLength: 60 })], ([steps]) => {
    const owed = new Set<string>()
    for (const e of drive(steps)) {
      if (e.line.type === "context_edit") {
        for (const p of e.line.paths) {
          const q = queuedPath(ROOT, p)
          if (q !== undefined) owed.add(q)
        }
      }
      for (const d of e.decisions) {
        if (d.type !== "context_done" || d.outcome === "failed") continue
        for (const p of e.before.inFlight?.paths ?? []) if (!e.after.pending.includes(p)) owed.delete(p)
      }
      const alive = new Set([...e.after.pending, ...(e.after.inFlight?.paths ?? [])])
      for (const p of owed) expect(alive.has(p)).toBe(true)
    }
  })

  it.prop("US-20 the cap and the …and K more line are exact for any queue length", [fc.integer({ min: 1, max: 200 })], ([n]) => {
    const paths = Array.from({ length: n }, (_, i) => `src/f${i}.ts`)
    const s = starts(run([load(), edit(T0 + 1, ...paths), idle(T0 + 2)]).decisions)[0]!
    expect(s.paths).toEqual(paths.slice(0, PROMPT_PATHS_MAX))
    expect(s.more).toBe(Math.max(0, n - PROMPT_PATHS_MAX))
    const prompt = refreshPrompt(ROOT, s, { bytes: 0, maxBytes: 1 })
    expect(prompt.includes("…and ")).toBe(n > PROMPT_PATHS_MAX)
    if (n > PROMPT_PATHS_MAX) expect(prompt).toContain(`…and ${n - PROMPT_PATHS_MAX} more`)
    expect(prompt.split("\n").filter((l) => l.startsWith("- src/")).length).toBe(Math.min(n, PROMPT_PATHS_MAX))
  })
})
