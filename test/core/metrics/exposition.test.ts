/** `ocpool metrics`'s exposition (issue 36): the golden text of a representative read, cumulative buckets, hostile label values, and the format's grammar on any input. */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { COUNTER_LABELS, PERMIT_WAIT_BUCKETS, type CounterRow } from "../../../src/core/metrics/counters.js"
import { escapeLabelValue, formatValue, renderExposition } from "../../../src/core/metrics/exposition.js"
import { scrapeText, type ScrapeInput } from "../../../src/core/metrics/scrape.js"
import type { Cooldown, CooldownTable } from "../../../src/core/pool/cooldown.js"
import type { BudgetJson } from "../../../src/core/permits/view.js"
import type { LearnedEntry } from "../../../src/core/view/learned.js"
import type { StatusView } from "../../../src/core/status.js"

const NOW = Date.UTC(2026, 11, 5, 12, 0, 0)
const row = (host: string, name: string, labels: ReadonlyArray<string>, value: number): CounterRow => ({ host, name, labels, value })
const cool = (model: string, reason: Cooldown["reason"], leftMs: number, source: Cooldown["source"] = "backoff"): Cooldown => ({ model, reason, strikes: 1, scope: "model", since: NOW - 60_000, until: NOW + leftMs, source })
const budget = (name: string, capacity: number | null, used: number, queued: number): BudgetJson => ({
  name,
  capacity,
  source: capacity === null ? null : "config",
  used,
  holders: [],
  queue: Array.from({ length: queued }, (_, i) => ({ id: `q${i}`, pid: 1, host: "a", session: "ses_secret", via: "plugin", weight: 1, reason: "npm test", requestedAt: NOW, grantedAt: null, gone: false, paused: false }))
})
const learned = (group: string, remaining: number, limit: number): LearnedEntry => ({ group, window: "day", limit, remaining, resetAt: NOW + 3_600_000, samples: 2, used: { minute: 1, day: limit - remaining }, limits: [] })

const view = (over: Partial<StatusView> = {}): StatusView => ({
  origin: "test",
  bases: ["explore", "general"],
  next: null,
  slots: [
    { slot: 1, model: "fakeA/pool-a", weight: 2, load: 3, cap: 4, byBase: { explore: 3 }, cooling: null },
    { slot: 2, model: "fakeB/pool-b", weight: 1, load: 0, cap: 2, byBase: {}, cooling: { until: NOW + 90_500, reason: "rate_limit", strikes: 2 } }
  ],
  processes: [{ pid: 11, host: "alpha", claims: 3, reaped: 1 }],
  claims: 3,
  reaped: 1,
  warnings: [],
  quota: [{ model: "fakeA/pool-a", requests: { remaining: 40, limit: 100, resetAt: null }, tokens: null, seenAt: NOW }, { model: "fakeC/no-limit", requests: { remaining: 7, limit: null, resetAt: null }, tokens: null, seenAt: NOW }],
  learned: [learned("openrouter/free", 12, 50)],
  ...over
})

const COUNTERS: ReadonlyArray<CounterRow> = [
  row("alpha", "routes_total", ["explore", "first"], 10),
  row("alpha", "routes_total", ["explore", "overflow"], 2),
  row("beta", "routes_total", ["general", "second"], 1),
  row("alpha", "limits_total", ["openrouter", "rate_limit"], 4),
  row("alpha", "fail_opens_total", [], 3),
  row("alpha", "permit_wait_seconds_bucket", ["heavy", "1"], 5),
  row("alpha", "permit_wait_seconds_bucket", ["heavy", "30"], 2),
  row("alpha", "permit_wait_seconds_bucket", ["heavy", "+Inf"], 1),
  row("alpha", "permit_wait_seconds_sum", ["heavy"], 4000.5),
  row("alpha", "permit_wait_seconds_count", ["heavy"], 8)
]

const input = (over: Partial<ScrapeInput> = {}): ScrapeInput => ({
  view: view(),
  counters: COUNTERS,
  cooldowns: new Map([
    ["fakeB/pool-b", cool("fakeB/pool-b", "rate_limit", 90_500)],
    ["fakeD/outside", cool("fakeD/outside", "outage", 30_000)],
    ["fakeE/over", cool("fakeE/over", "quota", -1_000)],
    ["fakeF/cleared", cool("fakeF/cleared", "manual", 10_000, "cleared")]
  ]) as CooldownTable,
  permits: [budget("heavy", 4, 2, 1), budget("gpu", null, 0, 0)],
  now: NOW,
  leaseMs: 30_000,
  ...over
})

/** The format's grammar, one line at a time (text format 0.0.4). */
const NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*"
const LABEL = '[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\\\\\|\\\\"|\\\\n)*"'
const VALUE = "(?:[+-]?(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?|\\+Inf|-Inf|NaN)"
const HELP_LINE = new RegExp(`^# HELP (${NAME}) (?:[^\\\\\\n]|\\\\\\\\|\\\\n)*$`)
const TYPE_LINE = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`)
const SAMPLE_LINE = new RegExp(`^(${NAME})(?:\\{${LABEL}(?:,${LABEL})*\\})? ${VALUE}$`)

/** Checks every line and the structure; returns the families in order. A problem throws with the line. */
const parse = (text: string): ReadonlyArray<{ name: string; type: string; samples: Array<string> }> => {
  expect(Buffer.from(text, "utf8").toString("utf8")).toBe(text) // valid UTF-8: no lone surrogate
  // eslint-disable-next-line no-control-regex
  expect(text).not.toMatch(/[\u0000-\u0009\u000B-\u001F\u007F]/)
  if (text === "") return []
  expect(text.endsWith("\n")).toBe(true)
  const families: Array<{ name: string; type: string; samples: Array<string> }> = []
  const lines = text.slice(0, -1).split("\n")
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    const help = HELP_LINE.exec(line)
    if (help !== null) {
      const type = TYPE_LINE.exec(lines[++i] ?? "")
      if (type === null || type[1] !== help[1]) throw new Error(`no TYPE after HELP: ${line}`)
      if (families.some((f) => f.name === help[1])) throw new Error(`family twice: ${help[1]}`)
      families.push({ name: help[1]!, type: type[2]!, samples: [] })
      continue
    }
    const sample = SAMPLE_LINE.exec(line)
    const f = families.at(-1)
    if (sample === null || f === undefined) throw new Error(`not a line of the format: ${JSON.stringify(line)}`)
    const allowed = f.type === "histogram" ? [`${f.name}_bucket`, `${f.name}_sum`, `${f.name}_count`] : [f.name]
    if (!allowed.includes(sample[1]!)) throw new Error(`sample ${sample[1]} outside its family ${f.name}`)
    f.samples.push(line)
  }
  const names = families.map((f) => f.name)
  expect(names).toEqual([...names].sort())
  return families
}

describe("US-53 the Prometheus exposition", () => {
  it("US-53 golden: a representative read (counters of two hosts, the histogram, every gauge)", async () => {
    const text = scrapeText(input({ view: view({ fleet: { backend: "postgres", reachable: true, url: "postgres://x", schema: "ocpool", host: "alpha", roundTripMs: 1, schemaVersion: 5, fallbacks: 0, hosts: [
      { host: "alpha", live: true, self: true, processes: 2, liveProcesses: 2, leaseUntil: NOW + 25_000, claims: 3, permits: 1, fallbacks: 0 },
      { host: "beta", live: false, self: false, processes: 1, liveProcesses: 0, leaseUntil: NOW - 90_000, claims: 0, permits: 0, fallbacks: 0 }
    ] } }) }))
    parse(text)
    await expect(text).toMatchFileSnapshot("./__golden__/exposition.prom")
    expect(text).not.toContain("ses_secret")
  })

  it("US-53 the permit wait histogram is cumulative: every bound and +Inf, the count equal to +Inf", () => {
    const lines = scrapeText(input()).split("\n").filter((l) => l.startsWith("ocpool_permit_wait_seconds"))
    const buckets = lines.filter((l) => l.includes("_bucket"))
    expect(buckets.map((l) => /le="([^"]+)"/.exec(l)![1])).toEqual([...PERMIT_WAIT_BUCKETS.map(String), "+Inf"])
    expect(buckets.map((l) => Number(l.split(" ")[1]))).toEqual([5, 5, 5, 7, 7, 7, 7, 7, 7, 7, 8])
    expect(lines.filter((l) => !l.includes("_bucket"))).toEqual(['ocpool_permit_wait_seconds_sum{host="alpha",budget="heavy"} 4000.5', 'ocpool_permit_wait_seconds_count{host="alpha",budget="heavy"} 8'])
  })

  it("US-53 counters: host first, then the counter's labels; a label-less counter is 0 for every host that counted; one without rows has its HELP and TYPE only", () => {
    const text = scrapeText(input())
    expect(text).toContain('ocpool_routes_total{host="beta",base="general",pass="second"} 1\n')
    expect(text).toContain('ocpool_fail_opens_total{host="alpha"} 3\nocpool_fail_opens_total{host="beta"} 0\n')
    expect(text).toContain("# TYPE ocpool_aborts_total counter\n# HELP")
    // rows of a counter this version does not know, or with the wrong number of labels, are left out
    const odd = scrapeText(input({ counters: [row("alpha", "new_thing_total", [], 1), row("alpha", "routes_total", ["only-one"], 1)] }))
    expect(odd).not.toContain("new_thing")
    expect(odd).not.toContain("only-one")
  })

  it("US-53 gauges: cooling seconds for models cooling now (not over, not cleared), quota stated and learned, permits, lease age", () => {
    const text = scrapeText(input())
    expect(text).toContain('ocpool_cooling_seconds{model="fakeB/pool-b",reason="rate_limit"} 90.5\nocpool_cooling_seconds{model="fakeD/outside",reason="outage"} 30\n# HELP')
    expect(text).toContain('ocpool_quota_limit{model="fakeA/pool-a",source="stated"} 100\nocpool_quota_limit{model="openrouter/free",source="learned"} 50\n# HELP')
    expect(text).toContain('ocpool_quota_remaining{model="fakeC/no-limit",source="stated"} 7\n')
    expect(text).toContain('ocpool_permits_capacity{budget="heavy"} 4\n# HELP')
    expect(text).toContain('ocpool_permits_queued{budget="heavy"} 1\n')
    expect(text).not.toContain("\nocpool_fleet_reachable ")
  })

  it("US-53 hostile label values: quotes, newlines, backslashes, lone surrogates and NUL come out escaped and valid UTF-8", () => {
    expect(escapeLabelValue('a"b\\c\nd')).toBe('a\\"b\\\\c\\nd')
    expect(escapeLabelValue("x\uD800y\uDC00z\uD83D\uDE00")).toBe("x\uFFFDy\uFFFDz\uD83D\uDE00")
    expect(escapeLabelValue("nul\u0000\u001b[31m\u007f")).toBe("nul\\\\x00\\\\x1b[31m\\\\x7f")
    const hostile = 'or "x"\\\n\u0000\uD800'
    const text = scrapeText(input({ counters: [row(hostile, "limits_total", [hostile, "rate_limit"], 1)], view: view({ slots: [{ slot: 1, model: hostile, weight: 1, load: 0, cap: 1, byBase: {}, cooling: null }] }) }))
    parse(text)
    expect(text).toContain('ocpool_limits_total{host="or \\"x\\"\\\\\\n\\\\x00\uFFFD",provider="or \\"x\\"\\\\\\n\\\\x00\uFFFD",class="rate_limit"} 1\n')
  })

  it("US-53 numbers: integers plain, floats as written, +Inf, -Inf, NaN, -0 as 0", () => {
    expect([3, 0.25, 1e21, 1e-7, Infinity, -Infinity, NaN, -0, -2].map(formatValue)).toEqual(["3", "0.25", "1e+21", "1e-7", "+Inf", "-Inf", "NaN", "0", "-2"])
    expect(renderExposition([])).toBe("")
  })

  it("US-53 property: every line of any exposition matches the format's grammar, families sorted and whole", () => {
    const text = fc.oneof(fc.string({ unit: "binary", maxLength: 12 }), fc.constantFrom('"', "\\", "\n", "\u0000", "\uD800", "\uDFFF", "", "le"))
    const name = fc.oneof(fc.constantFrom(...Object.keys(COUNTER_LABELS)), text)
    const value = fc.oneof(fc.nat(), fc.double())
    const counters = fc.array(fc.record({ host: text, name, labels: fc.array(text, { maxLength: 3 }), value }), { maxLength: 20 })
    const slots = fc.array(fc.record({ model: text, load: fc.nat(9), cap: fc.nat(9), weight: fc.nat(9) }), { maxLength: 5 })
    fc.assert(
      fc.property(counters, slots, fc.array(fc.tuple(text, fc.integer({ min: -5000, max: 90_000 })), { maxLength: 5 }), fc.array(fc.tuple(text, fc.option(fc.nat()), fc.nat(5)), { maxLength: 3 }), (rows, ss, cools, budgets) => {
        const out = scrapeText({
          view: view({ slots: ss.map((s, i) => ({ ...s, slot: i + 1, byBase: {}, cooling: null })), quota: ss.map((s) => ({ model: s.model, requests: { remaining: s.load, limit: s.cap, resetAt: null }, tokens: null, seenAt: NOW })) }),
          counters: rows,
          cooldowns: new Map(cools.map(([m, left]) => [m, cool(m, "rate_limit", left)])),
          permits: budgets.map(([n, cap, q]) => budget(n, cap, 0, q)),
          now: NOW,
          leaseMs: 30_000
        })
        parse(out)
      }),
      { numRuns: 300 }
    )
  })
})
