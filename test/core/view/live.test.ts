/** The live view of `ocpool status --watch` and the compact view of `pool_status` (issue 24): lines from a snapshot and a size. */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import type { CoolReason } from "../../../src/core/pool/cooldown.js"
import type { BudgetJson, PermitEntryJson } from "../../../src/core/permits/view.js"
import type { FleetEntry, SlotStatus, StatusView } from "../../../src/core/status.js"
import { compactView, fit, liveBody, liveFrame, nextTickIn, visibleWidth } from "../../../src/core/view/live.js"
import { T0 } from "../../helpers.js"

const NOW = T0 // 2026-12-01T09:00:00Z

const holder: PermitEntryJson = { id: "p-1a2b", pid: 42, host: "devbox", session: "ses_x", via: "bash", weight: 2, reason: "npm test", requestedAt: NOW - 60_000, grantedAt: NOW - 50_000, gone: false, paused: false }
const waiter: PermitEntryJson = { id: "p-3c4d", pid: 43, host: "devbox", session: null, via: "run", weight: 1, reason: "cargo build", requestedAt: NOW - 12_000, grantedAt: null, gone: false, paused: false }

/** A representative snapshot: a loaded slot that is next, two cooling models, a quota, a busy budget, a fleet, a fallback, a warning. */
const VIEW: StatusView = {
  origin: "pool.txt",
  bases: ["explore", "implement", "context"],
  next: { slot: 1, model: "zen/alpha", pass: "first" },
  slots: [
    { slot: 1, model: "zen/alpha", weight: 2, load: 3, cap: 5, byBase: { explore: 3 }, cooling: null },
    { slot: 2, model: "go/gamma-large-context-preview", weight: 1, load: 0, cap: 2, byBase: {}, cooling: { until: NOW + 250_000, reason: "rate_limit", strikes: 2 } },
    { slot: 3, model: "or/delta", weight: 1, load: 2, cap: 2, byBase: { implement: 2 }, cooling: { until: NOW + 3_700_000, reason: "auth", strikes: 0 } }
  ],
  processes: [
    { pid: 101, host: "devbox", claims: 3, reaped: 0 },
    { pid: 102, host: "devbox", claims: 2, reaped: 1 }
  ],
  claims: 5,
  reaped: 1,
  warnings: ["slot 4: unknown provider"],
  quota: [{ model: "zen/alpha", requests: { remaining: 3, limit: 100, resetAt: NOW + 250_000 }, tokens: { remaining: 9000, limit: 10000, resetAt: null }, seenAt: NOW - 12_000 }],
  fallbacks: [{ session: "ses_abc", original: "go/gamma-large-context-preview", active: "zen/alpha", until: NOW + 600_000 }],
  permits: [{ name: "heavy", capacity: 2, source: "auto", used: 2, holders: [holder], queue: [waiter] }],
  fleet: {
    backend: "postgres",
    reachable: true,
    url: "postgres://u:***@db:5432/ocpool",
    schema: "ocpool",
    host: "host-a",
    roundTripMs: 1.2,
    schemaVersion: 1,
    hosts: [{ host: "host-a", live: true, self: true, processes: 2, liveProcesses: 2, leaseUntil: NOW + 25_000, claims: 5, permits: 1, fallbacks: 0 }],
    fallbacks: 0
  }
}

const LEARNED: NonNullable<StatusView["learned"]> = [
  { group: "or/*:free", window: "minute", limit: 20, remaining: 4, resetAt: NOW + 40_000, samples: 3, used: { minute: 16, day: 143 }, limits: [] },
  { group: "zen/big", window: "day", limit: 200, remaining: 200, resetAt: NOW + 3_600_000, samples: 1, used: { minute: 0, day: 0 }, limits: [] }
]

const frame = (view: StatusView, cols: number, rows: number, ui: Partial<Parameters<typeof liveFrame>[3]> = {}, color = false) =>
  liveFrame(view, NOW, { cols, rows, color }, { scroll: 0, help: false, ...ui })

describe("US-6 live view: widths", () => {
  it("US-6 visibleWidth counts colour codes 0, wide characters and emoji 2, combining marks 0", () => {
    expect(visibleWidth("abc")).toBe(3)
    expect(visibleWidth("\x1b[31mab\x1b[0m")).toBe(2)
    expect(visibleWidth("漢字")).toBe(4)
    expect(visibleWidth("😀x")).toBe(3)
    expect(visibleWidth("e\u0301")).toBe(1)
    expect(visibleWidth("[███░░]")).toBe(7)
  })

  it("US-6 fit cuts with an ellipsis, never inside a wide character, and closes a colour it cut open", () => {
    expect(fit("abcdef", 6)).toBe("abcdef")
    expect(fit("abcdef", 4)).toBe("abc…")
    expect(fit("漢字漢字", 6)).toBe("漢字…")
    expect(visibleWidth(fit("漢字漢字", 6))).toBe(5)
    expect(fit("\x1b[31mabcdef\x1b[0m", 4)).toBe("\x1b[31mabc…\x1b[0m")
    expect(fit("abc", 0)).toBe("")
  })
})

describe("US-6 live view: a representative snapshot", () => {
  it("US-6 at 80x24 without colour: header, every section in order, blank padding, footer", () => {
    const f = frame(VIEW, 80, 24)
    expect(f.maxScroll).toBe(0)
    expect(f.lines).toEqual([
      "ocpool  5 claims  2 processes  2 cooling                                  09:00Z",
      "slots",
      "  1. [████████░░░░░] 3/5  zen/alpha                       <- next (first pass)",
      "  2. [░░░░░░░░░░░░░] 0/2  go/gamma-large-context-preview  cooling",
      "  3. [█████████████] 2/2  or/delta                        cooling",
      "cooling (2)",
      "  go/gamma-large-context-preview  rate_limit strike 2  4m10s",
      "  or/delta                        auth                 1h01m",
      "quota",
      "  zen/alpha  req [█░░░░░░░░░░░░] 3/100  reset 4m10s",
      "             tok [████████████░] 9000/10k",
      "heavy-work permits",
      "  heavy [█████████████] 2/2  1 waiting",
      "    holds  p-1a2b  w2  pid 42 ses_x (bash)  50s  npm test",
      "     1.    p-3c4d  w1  pid 43 (run)  waiting 12s behind p-1a2b  cargo build",
      "fleet",
      "  postgres postgres://u:***@db:5432/ocpool schema ocpool, this host host-a, rou…",
      "  host-a (this host)  live (2/2 processes), lease until 09:00:25Z  5 claims  1 …",
      "fallbacks (1)",
      "  ses_abc  go/gamma-large-context-preview -> zen/alpha  10m00s",
      "warnings (1)",
      "  slot 4: unknown provider",
      "",
      "q quit  j/k scroll  ? help"
    ])
  })

  it("US-6 at 40x12: bars shrink, long models are cut with …, the header shortens, the footer shows the position", () => {
    const f = frame(VIEW, 40, 12)
    expect(f.maxScroll).toBe(11)
    expect(f.lines).toEqual([
      "5 claims  2 procs  2 cooling      09:00Z",
      "slots",
      "  1. [████░░] 3/5  zen/alpha     <- next",
      "  2. [░░░░░░] 0/2  go/gamma-la…  cooling",
      "  3. [██████] 2/2  or/delta      cooling",
      "cooling (2)",
      "  go/gamma-…  rate_limit strike 2  4m10s",
      "  or/delta    auth                 1h01m",
      "quota",
      "  zen/alpha  req [█░░░░░] 3/100  4m10s",
      "             tok [█████░] 9000/10k",
      "q quit  j/k scroll  ? help       1-10/21"
    ])
  })

  it("US-6 the scroll is clamped to [0, maxScroll]; scrolled past the cooling lines, the last body line counts them", () => {
    const end = frame(VIEW, 40, 12, { scroll: 99 })
    expect(end).toEqual(frame(VIEW, 40, 12, { scroll: 11 }))
    expect(end.lines).toEqual([
      "5 claims  2 procs  2 cooling      09:00Z",
      "  heavy [██████] 2/2  1 waiting",
      "    holds  p-1a2b  w2  pid 42 ses_x (ba…",
      "     1.    p-3c4d  w1  pid 43 (run)  wa…",
      "fleet",
      "  postgres postgres://u:***@db:5432/ocp…",
      "  host-a (this host)  live (2/2 process…",
      "fallbacks (1)",
      "  ses_abc  go/gamma-large-context-previ…",
      "warnings (1)",
      "…and 2 more cooling",
      "q quit  j/k scroll  ? help      12-21/21"
    ])
    expect(frame(VIEW, 40, 12, { scroll: -5 })).toEqual(frame(VIEW, 40, 12, { scroll: 0 }))
    expect(frame(VIEW, 40, 12, { scroll: Number.NaN })).toEqual(frame(VIEW, 40, 12, { scroll: 0 }))
  })

  it("US-6 the help screen replaces the body with the keys", () => {
    const f = frame(VIEW, 80, 16, { help: true })
    expect(f.maxScroll).toBe(0)
    expect(f.lines).toEqual([
      "ocpool  5 claims  2 processes  2 cooling                                  09:00Z",
      "keys",
      "  q          quit",
      "  j, down    scroll down",
      "  k, up      scroll up",
      "  ?          this help; ? again goes back",
      "what the view shows",
      "  slots      each slot's load against its cap; <- next: where the next spawn go…",
      "  cooling    each cooling model: reason, strike, time left",
      "  quota      remaining/limit of each stated quota, time to its reset",
      "  learned    budgets learned from 429s: remaining/limit, how sure, time to the …",
      "  permits    heavy-work budgets: who holds, who waits",
      "  fleet      the hosts sharing the state (PostgreSQL backend)",
      "  fallbacks  root sessions on a fallback while their model cools",
      "  decisions  the last decisions of a recorded trace",
      "q quit  j/k scroll  ? back"
    ])
  })

  it("US-48 learned budgets get their own section after the stated quotas, marked learned, with how sure and the window's end", () => {
    const body = liveBody({ ...VIEW, learned: LEARNED }, NOW, 80, false)
    const at = body.indexOf("learned budgets")
    expect(at).toBe(body.indexOf("quota") + 3)
    expect(body.slice(at + 1, at + 3)).toEqual([
      "  or/*:free  req [███░░░░░░░░░░] 4/20 a minute (learned, seen 3 times)  in 40s",
      "  zen/big    req [█████████████] 200/200 a day (learned, seen once)  in 1h00m"
    ])
    expect(liveBody(VIEW, NOW, 80, false)).not.toContain("learned budgets")
  })

  it("US-6 the last decisions are shown when given, most recent last, at most 20", () => {
    const decisions = Array.from({ length: 25 }, (_, i) => `route explore -> explore-1 #${i}`)
    const body = liveFrame(VIEW, NOW, { cols: 80, rows: 60, color: false }, { scroll: 0, help: false, decisions }).lines
    const at = body.indexOf("last decisions")
    expect(at).toBeGreaterThan(body.indexOf("fallbacks (1)"))
    expect(body.slice(at + 1, at + 21)).toEqual(decisions.slice(5).map((d) => `  ${d}`))
    expect(body[at + 21]).toBe("warnings (1)")
    expect(liveBody(VIEW, NOW, 80, false)).not.toContain("last decisions")
  })

  it("US-6 colour off: no ESC byte; colour on: bars, cooling and the header painted, every ESC a colour code", () => {
    expect(frame(VIEW, 80, 24).lines.join("\n")).not.toContain("\x1b")
    expect(compactView(VIEW, NOW).join("\n")).not.toContain("\x1b")
    const coloured = frame(VIEW, 80, 24, {}, true).lines
    expect(coloured[0]).toBe("\x1b[7mocpool  5 claims  2 processes  2 cooling                                  09:00Z\x1b[0m")
    expect(coloured[2]).toContain("[\x1b[33m████████\x1b[0m\x1b[2m░░░░░\x1b[0m] 3/5") // 3 of 5: yellow
    expect(coloured[4]).toContain("[\x1b[31m█████████████\x1b[0m] 2/2") // full: red
    expect(coloured[6]).toContain("\x1b[33mrate_limit strike 2\x1b[0m")
    expect(coloured[7]).toContain("\x1b[31mauth")
    for (const l of coloured) expect(l.replace(/\x1b\[[0-9;]*m/g, "")).not.toContain("\x1b")
    expect(coloured.map((l) => l.replace(/\x1b\[[0-9;]*m/g, "").trimEnd())).toEqual(frame(VIEW, 80, 24).lines.map((l) => l.trimEnd()))
  })

  it("US-6 the compact view for pool_status: slots, cooling and quota drawn, the rest summed up", () => {
    expect(compactView(VIEW, NOW)).toEqual([
      "opencode-pool: 5 claims, 2 processes, 2 cooling",
      "  1. [███████░░░░░] 3/5  zen/alpha                  <- next (first pass)",
      "  2. [░░░░░░░░░░░░] 0/2  go/gamma-large-context-p…  cooling",
      "  3. [████████████] 2/2  or/delta                   cooling",
      "cooling",
      "  go/gamma-large-context-preview  rate_limit strike 2  4m10s",
      "  or/delta                        auth                 1h01m",
      "quota",
      "  zen/alpha  req [█░░░░░░░░░░░] 3/100  reset 4m10s",
      "             tok [███████████░] 9000/10k",
      "permits: heavy 2/2 used, 1 waiting",
      "fleet: 1 host, 1 live",
      "fallbacks: ses_abc go/gamma-large-context-preview -> zen/alpha 10m00s",
      "warnings: 1"
    ])
  })

  it("US-6 the compact view of many cooling slots stays within 20 lines and counts the cooling models it does not list", () => {
    const slots: ReadonlyArray<SlotStatus> = Array.from({ length: 12 }, (_, i) => ({
      slot: i + 1,
      model: `m/${i + 1}`,
      weight: 1,
      load: 0,
      cap: 2,
      byBase: {},
      cooling: { until: NOW + 60_000, reason: "quota", strikes: 1 }
    }))
    const lines = compactView({ ...VIEW, slots, next: null, learned: [LEARNED[0]!, LEARNED[1]!] }, NOW)
    expect(lines.length).toBeLessThanOrEqual(20)
    expect(lines).toContain("learned: or/*:free 4/20 a minute; zen/big 200/200 a day")
    expect(lines).toContain("  …and 7 more slots")
    expect(lines).toContain("  …and 9 more cooling")
    expect(lines[0]).toBe("opencode-pool: 5 claims, 2 processes, 12 cooling")
  })
})

describe("US-6 live view: countdown ticks", () => {
  it("US-6 nextTickIn is the ms until the nearest countdown reads differently; undefined when nothing counts down", () => {
    expect(nextTickIn(VIEW, NOW)).toBe(1000) // 4m10s exactly: 4m09s in a second
    expect(nextTickIn(VIEW, NOW + 250)).toBe(750)
    const still: StatusView = { ...VIEW, slots: VIEW.slots.map((s) => ({ ...s, cooling: null })), quota: [], fallbacks: [] }
    expect(nextTickIn(still, NOW)).toBeUndefined()
    // past an hour the display moves per minute: 1h01m40s reads 1h01m until 1h00m59s
    const hour: StatusView = { ...still, slots: [{ ...VIEW.slots[0]!, cooling: { until: NOW + 3_700_000, reason: "auth", strikes: 0 } }] }
    expect(nextTickIn(hour, NOW)).toBe(41_000)
    // a countdown at 0 no longer changes; a reset beyond 7 days is not shown, so not counted
    expect(nextTickIn(hour, NOW + 3_700_000)).toBeUndefined()
    const far: StatusView = { ...still, quota: [{ model: "x/y", requests: { remaining: 1, limit: 2, resetAt: NOW + 8 * 86_400_000 }, tokens: null, seenAt: NOW }] }
    expect(nextTickIn(far, NOW)).toBeUndefined()
    expect(nextTickIn({ ...still, fallbacks: [{ session: "s", original: "a/b", active: "c/d", until: NOW + 1_500 }] }, NOW)).toBe(500)
    // US-48 a learned window's end counts down too
    expect(nextTickIn({ ...still, learned: [{ ...LEARNED[0]!, resetAt: NOW + 2_300 }] }, NOW)).toBe(300)
  })
})

// ---------------------------------------------------------------------------------------------
// properties over generated snapshots and sizes

const REASONS: ReadonlyArray<CoolReason> = ["rate_limit", "quota", "outage", "unavailable", "auth", "hang", "quota_low"]

/** Text that tries to escape: control characters, escape sequences, bidi controls, wide characters, emoji and joiners. */
const hostile: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      fc.constantFrom("\x1b[2J", "\x1b]0;pwned\x07", "\r", "\n", "\t", "\x07", "\x00", "\u009b31m", "\u202e", "\u200d", "\ufe0f", "\u2028", "漢字", "😀", "👩‍👩‍👧", "🇫🇷", "e\u0301", "\ud800"),
      fc.string({ maxLength: 6 }),
      fc.fullUnicodeString({ maxLength: 4 })
    ),
    { maxLength: 8 }
  )
  .map((parts) => parts.join(""))

/** Plain words (no `/`, so they never contain a generated model name). */
const word: fc.Arbitrary<string> = fc.stringMatching(/^[a-z ]{0,30}$/)

interface Names {
  readonly model: (i: number) => fc.Arbitrary<string>
  readonly text: fc.Arbitrary<string>
}
/** Short, distinct slot models (`m3/x` is in no other name) and plain text elsewhere. */
const PLAIN: Names = { model: (i) => fc.constant(`m${i}/x`), text: word }
/** Hostile text everywhere. */
const HOSTILE: Names = { model: () => hostile, text: hostile }

const entryArb = (names: Names, granted: boolean): fc.Arbitrary<PermitEntryJson> =>
  fc.record({
    id: names.text,
    pid: fc.nat({ max: 99_999 }),
    host: names.text,
    session: fc.option(names.text, { nil: null }),
    via: names.text,
    weight: fc.integer({ min: 0, max: 9 }),
    reason: names.text,
    requestedAt: fc.integer({ min: NOW - 3_600_000, max: NOW }),
    grantedAt: granted ? fc.integer({ min: NOW - 3_600_000, max: NOW }) : fc.constant(null),
    gone: fc.boolean(),
    paused: fc.boolean()
  })

const budgetArb = (names: Names): fc.Arbitrary<BudgetJson> =>
  fc.record({
    name: names.text,
    capacity: fc.option(fc.integer({ min: 0, max: 8 }), { nil: null }),
    source: fc.option(names.text, { nil: null }),
    used: fc.integer({ min: 0, max: 12 }),
    holders: fc.array(entryArb(names, true), { maxLength: 3 }),
    queue: fc.array(entryArb(names, false), { maxLength: 3 })
  })

const fleetArb = (names: Names): fc.Arbitrary<FleetEntry> =>
  fc.oneof(
    fc.record({
      backend: fc.constant("postgres" as const),
      reachable: fc.constant(true as const),
      url: names.text,
      schema: names.text,
      host: names.text,
      roundTripMs: fc.integer({ min: 0, max: 5000 }),
      schemaVersion: fc.constant(1),
      hosts: fc.array(
        fc.record({
          host: names.text,
          live: fc.boolean(),
          self: fc.boolean(),
          processes: fc.nat({ max: 9 }),
          liveProcesses: fc.nat({ max: 9 }),
          leaseUntil: fc.integer({ min: NOW - 600_000, max: NOW + 600_000 }),
          claims: fc.nat({ max: 99 }),
          permits: fc.nat({ max: 9 }),
          fallbacks: fc.nat({ max: 9 })
        }),
        { maxLength: 4 }
      ),
      fallbacks: fc.nat({ max: 9 })
    }),
    fc.record({
      backend: fc.constant("postgres" as const),
      reachable: fc.constant(false as const),
      url: names.text,
      schema: names.text,
      host: names.text,
      reason: names.text,
      fallbacks: fc.nat({ max: 9 })
    })
  )

const figuresArb = fc.option(
  fc.record({
    remaining: fc.integer({ min: 0, max: 2_000_000 }),
    limit: fc.option(fc.integer({ min: 0, max: 2_000_000 }), { nil: null }),
    resetAt: fc.option(fc.integer({ min: NOW - 60_000, max: NOW + 9 * 86_400_000 }), { nil: null })
  }),
  { nil: null }
)

const viewArb = (names: Names): fc.Arbitrary<StatusView> =>
  fc.integer({ min: 0, max: 14 }).chain((n) =>
    fc
      .record({
        slots: fc.tuple(
          ...Array.from({ length: n }, (_, i) =>
            fc.record({
              slot: fc.constant(i + 1),
              model: names.model(i + 1),
              weight: fc.integer({ min: 1, max: 3 }),
              load: fc.integer({ min: 0, max: 30 }),
              cap: fc.integer({ min: 0, max: 12 }),
              byBase: fc.constant({}),
              cooling: fc.option(
                fc.record({ until: fc.integer({ min: NOW - 5_000, max: NOW + 30 * 3_600_000 }), reason: fc.constantFrom(...REASONS), strikes: fc.integer({ min: 0, max: 12 }) }),
                { nil: null }
              )
            })
          )
        ),
        next: fc.option(fc.record({ slot: fc.integer({ min: 1, max: Math.max(1, n) }), pass: fc.constantFrom("first" as const, "second" as const, "overflow" as const) }), { nil: null }),
        processes: fc.array(fc.record({ pid: fc.nat({ max: 99_999 }), host: names.text, claims: fc.nat({ max: 9 }), reaped: fc.nat({ max: 9 }) }), { maxLength: 4 }),
        claims: fc.nat({ max: 999 }),
        warnings: fc.array(names.text, { maxLength: 3 }),
        quota: fc.array(fc.record({ model: names.text.map((t) => `q/${t}`), requests: figuresArb, tokens: figuresArb, seenAt: fc.constant(NOW) }), { maxLength: 4 }),
        fallbacks: fc.array(fc.record({ session: names.text, original: names.text.map((t) => `f/${t}`), active: names.text.map((t) => `f/${t}`), until: fc.integer({ min: NOW, max: NOW + 3_600_000 }) }), { maxLength: 3 }),
        permits: fc.array(budgetArb(names), { maxLength: 2 }),
        fleet: fc.option(fleetArb(names), { nil: undefined })
      })
      .map(({ fleet, next, slots, ...rest }): StatusView => ({
        origin: "pool.txt",
        bases: ["explore", "implement", "context"],
        next: next === null || slots.length === 0 ? null : { ...next, model: slots[Math.min(next.slot, slots.length) - 1]!.model },
        slots,
        reaped: 0,
        ...rest,
        ...(fleet === undefined ? {} : { fleet })
      }))
  )

const sizeArb = fc.record({ cols: fc.integer({ min: 40, max: 200 }), rows: fc.integer({ min: 10, max: 60 }), color: fc.boolean() })
const uiArb = (names: Names) =>
  fc.record({ scroll: fc.integer({ min: -5, max: 120 }), help: fc.boolean(), decisions: fc.option(fc.array(names.text, { maxLength: 25 }), { nil: undefined }) }).map(({ decisions, ...ui }) => ({ ...ui, ...(decisions === undefined ? {} : { decisions }) }))
const nowArb = fc.integer({ min: NOW - 2_000, max: NOW + 2 * 3_600_000 })

/** The distinct cooling models of a view, in slot order. */
const coolingOf = (view: StatusView): ReadonlyArray<string> => [...new Set(view.slots.filter((s) => s.cooling !== null).map((s) => s.model))]

/** K of the `…and K more cooling` line, 0 when there is none. */
const counted = (lines: ReadonlyArray<string>): number => {
  const hit = lines.map((l) => /…and (\d+) more cooling/.exec(l.replace(/\x1b\[[0-9;]*m/g, ""))).find((m) => m !== null)
  return hit === undefined || hit === null ? 0 : Number(hit[1])
}

const SGR_ONLY = /\x1b(?!\[[0-9;]*m)/

describe("US-6 live view: properties", () => {
  it.prop("US-6 a frame has exactly `rows` lines, none wider than `cols`, and a clamped scroll", [viewArb(PLAIN), nowArb, sizeArb, uiArb(PLAIN)], ([view, now, size, ui]) => {
    const f = liveFrame(view, now, size, ui)
    expect(f.lines).toHaveLength(size.rows)
    for (const l of f.lines) expect(visibleWidth(l)).toBeLessThanOrEqual(size.cols)
    expect(f.maxScroll).toBeGreaterThanOrEqual(0)
    expect(liveFrame(view, now, size, { ...ui, scroll: f.maxScroll + 50 })).toEqual(liveFrame(view, now, size, { ...ui, scroll: f.maxScroll }))
  })

  it.prop("US-6 every cooling model is shown or counted, at any scroll, on any terminal from 40x10", [viewArb(PLAIN), nowArb, sizeArb, uiArb(PLAIN)], ([view, now, size, ui]) => {
    const lines = liveFrame(view, now, size, { ...ui, help: false }).lines
    const cooling = coolingOf(view)
    const missing = cooling.filter((m) => !lines.some((l) => l.includes(m)))
    const k = counted(lines)
    expect(k).toBeGreaterThanOrEqual(missing.length)
    expect(k).toBeLessThanOrEqual(cooling.length)
  })

  it.prop("US-6 the compact view: at most 20 lines, none wider than `cols`, every cooling model shown or counted, no ESC", [viewArb(PLAIN), nowArb, fc.integer({ min: 40, max: 200 })], ([view, now, cols]) => {
    const lines = compactView(view, now, cols)
    expect(lines.length).toBeLessThanOrEqual(20)
    for (const l of lines) expect(visibleWidth(l)).toBeLessThanOrEqual(cols)
    const cooling = coolingOf(view)
    const missing = cooling.filter((m) => !lines.some((l) => l.includes(m)))
    expect(counted(lines)).toBeGreaterThanOrEqual(missing.length)
    expect(lines.join("\n")).not.toContain("\x1b")
  })

  it.prop("US-6 the same input gives the same frame; slots are listed in slot order whatever order the view holds them in", [viewArb(PLAIN), nowArb, sizeArb, uiArb(PLAIN), fc.integer()], ([view, now, size, ui, seed]) => {
    expect(liveFrame(view, now, size, ui)).toEqual(liveFrame(view, now, size, ui))
    const shuffled = [...view.slots].sort((a, b) => ((a.slot * 7919 + seed) % 13) - ((b.slot * 7919 + seed) % 13))
    const body = liveBody(view, now, 200, false)
    expect(liveBody({ ...view, slots: shuffled }, now, 200, false)).toEqual(body)
    expect(compactView({ ...view, slots: shuffled }, now)).toEqual(compactView(view, now))
    const at = view.slots.map((s) => body.findIndex((l) => l.trimStart().startsWith(`${s.slot}. [`)))
    expect(at.every((i) => i >= 0)).toBe(true)
    expect([...at].sort((a, b) => a - b)).toEqual(at)
  })

  it.prop("US-6 hostile text never puts ESC, CR or another control character on the screen, nor widens a line", [viewArb(HOSTILE), nowArb, sizeArb, uiArb(HOSTILE)], ([view, now, size, ui]) => {
    const plain = liveFrame(view, now, { ...size, color: false }, ui).lines
    const compact = compactView(view, now, size.cols)
    for (const l of [...plain, ...compact]) {
      expect(l).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202e\u200d]/)
      expect(visibleWidth(l)).toBeLessThanOrEqual(size.cols)
    }
    expect(compact.length).toBeLessThanOrEqual(20)
    const coloured = liveFrame(view, now, { ...size, color: true }, ui).lines
    expect(coloured).toHaveLength(size.rows)
    for (const l of coloured) {
      expect(l).not.toMatch(SGR_ONLY)
      expect(l.replace(/\x1b\[[0-9;]*m/g, "")).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/)
      expect(visibleWidth(l)).toBeLessThanOrEqual(size.cols)
    }
  })
})
