/**
 * The timeline's page and SVG as strings (core/view/timelineHtml.ts): nothing in a trace can break out
 * of the inline data or inject markup, the page fetches nothing (CSP, no URL but the SVG namespace),
 * the compact data gives back every explanation, concurrent bars never share a row, and the SVG is
 * well-formed, escaped and bounded for huge traces. The page's behaviour in a browser is
 * test/real/timeline.real.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { AGGREGATE_BARS, MAX_ROWS, packRows, timelineData, timelineHtml, type TimelineData } from "../../../src/core/view/timelineHtml.js"
import { timelineSvg } from "../../../src/core/view/timelineSvg.js"
import { BAR_OUTCOMES, type Bar, type Cool, type Mark, type Timeline } from "../../../src/core/view/timelineModel.js"

const T0 = 1_796_115_600_000

const bar = (claim: string, over: Partial<Bar> = {}): Bar => ({
  claim,
  lane: "slot-1",
  start: T0 + 1_000,
  end: T0 + 5_000,
  outcome: "ok",
  base: "explore",
  agent: "explore-1",
  model: "zen/alpha",
  pass: "first",
  explain: `${claim}: explore -> explore-1 (zen/alpha), slot 1 in the first pass.\n${claim}: released (done).`,
  ...over
})

const timeline = (over: Partial<Timeline> = {}): Timeline => ({
  title: "t.jsonl",
  start: T0,
  end: T0 + 10_000,
  lanes: [
    { id: "slot-1", label: "1. zen/alpha", kind: "slot", slot: 1 },
    { id: "slot-2", label: "2. go/gamma", kind: "slot", slot: 2 }
  ],
  bars: [bar("c1"), bar("c2", { lane: "slot-2", outcome: "limit", pass: "second" })],
  cools: [{ model: "zen/alpha", lanes: ["slot-1"], start: T0 + 2_000, end: T0 + 62_000, reason: "rate_limit", strike: 1, scope: "model", explain: "zen/alpha cools." }],
  marks: [{ at: T0 + 3_000, lane: "slot-1", kind: "abort", label: "abort", explain: "c1: abort of session s1 succeeded." }],
  lines: 9,
  decisions: 7,
  ...over
})

/** The JSON text of the page's `#data` script. */
const dataScript = (html: string): string => {
  const m = /<script type="application\/json" id="data">([\s\S]*?)<\/script>/.exec(html)
  if (m === null) throw new Error("no #data script")
  return m[1]!
}

/** The explanation lines back from the compact form, as the page's script reads them. */
const explainOf = (d: TimelineData, list: ReadonlyArray<number>, claim?: string): string =>
  list.map((n) => (n < 0 ? `${claim}: ${d.s[-n - 1]}` : d.s[n])).join("\n")

/** A small XML well-formedness check: tags balance, attributes quoted, no raw `<` or stray `&` in text. */
const wellFormed = (xml: string): Array<string> => {
  const problems: Array<string> = []
  const stack: Array<string> = []
  const tag = /<(\/?)([A-Za-z][\w:.-]*)((?:\s+[\w:.-]+="[^"<]*")*)\s*(\/?)>/y
  let i = 0
  while (i < xml.length) {
    const lt = xml.indexOf("<", i)
    const text = xml.slice(i, lt < 0 ? xml.length : lt)
    if (/&(?!(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)/.test(text)) problems.push(`stray & in ${text.slice(0, 40)}`)
    if (lt < 0) break
    tag.lastIndex = lt
    const m = tag.exec(xml)
    if (m === null) {
      problems.push(`bad tag at ${lt}: ${xml.slice(lt, lt + 60)}`)
      break
    }
    const [, close, name, , selfClose] = m
    if (close === "/") {
      if (stack.pop() !== name) problems.push(`unbalanced </${name}>`)
    } else if (selfClose !== "/") stack.push(name!)
    i = tag.lastIndex
  }
  if (stack.length > 0) problems.push(`unclosed ${stack.join(",")}`)
  return problems
}

const HOSTILE = `</script><script>alert(1)</script><!--<script>"'&amp;\u0001\u2028`

describe("US-45 timeline page (timelineHtml)", () => {
  it("US-45 a model, claim or title holding </script> cannot close the data script, and the data parses back to it", () => {
    const t = timeline({
      title: HOSTILE,
      bars: [bar(HOSTILE, { model: HOSTILE, agent: "</SCRIPT >", session: "<!--" })],
      cools: [{ model: HOSTILE, lanes: ["slot-1"], start: T0, end: T0 + 1, reason: "</script", strike: 0, scope: "model", explain: HOSTILE }]
    })
    const html = timelineHtml(t)
    // exactly the two scripts of the page: the data and the code
    expect(html.match(/<\/script/gi)).toHaveLength(2)
    expect(html.match(/<script/gi)).toHaveLength(2)
    const json = dataScript(html)
    expect(json).not.toContain("<")
    const d = JSON.parse(json) as TimelineData
    expect(d.b[0]![0]).toBe(HOSTILE)
    expect(d.s[d.b[0]![7]]).toBe(HOSTILE)
    expect(d.b[0]![9]).toBe("<!--")
    expect(d.title).toBe(HOSTILE)
    // the title is escaped where the page shows it
    expect(html).toContain("<title>ocpool timeline: &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;")
    expect(html).not.toContain("<script>alert(1)")
  })

  it("US-45 the page carries a strict CSP, inline style and script only, and no URL but the SVG namespace", () => {
    const html = timelineHtml(timeline({ bars: [bar("https://evil.example/x.js", { model: "http://x/y" })] }))
    expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">`)
    expect(html).not.toMatch(/<script[^>]*\bsrc=/i)
    expect(html).not.toMatch(/<link\b|<img\b|<iframe\b|@import|url\(\s*['"]?(?!#)/i)
    // outside the inline data (where the claim is a string, never a URL anything loads), only the SVG namespace
    const outside = html.replace(dataScript(html), "")
    expect(outside.match(/https?:\/\/[^\s"'<>)]*/g)).toEqual(["http://www.w3.org/2000/svg"])
    // the page's DOM contract is in the page
    for (const id of ['id="chart"', 'id="axis"', 'id="tip"', 'id="zoom-in"', 'id="zoom-out"', 'id="zoom-reset"', 'id="legend"', "dataset.ready"]) expect(html).toContain(id)
  })

  it("US-45 an empty trace still makes a page", () => {
    const html = timelineHtml(timeline({ start: 0, end: 0, lanes: [], bars: [], cools: [], marks: [], lines: 0, decisions: 0 }))
    const d = JSON.parse(dataScript(html)) as TimelineData
    expect(d.lanes).toEqual([])
    expect(d.span).toBe(0)
  })

  it.prop(
    "US-45 the compact data gives back every bar, cool and mark with its explanation, times relative to the start",
    [
      fc.array(
        fc.record({
          claim: fc.string({ maxLength: 12 }),
          lane: fc.constantFrom("slot-1", "slot-2", "slot-9"),
          start: fc.integer({ min: 0, max: 10_000 }),
          len: fc.integer({ min: 0, max: 5_000 }),
          outcome: fc.constantFrom(...BAR_OUTCOMES),
          model: fc.constantFrom("zen/alpha", "go/gamma", "a<b"),
          pass: fc.constantFrom("first", "second", "overflow"),
          lines: fc.array(fc.oneof(fc.string({ maxLength: 20 }), fc.constant("released (done).")), { maxLength: 3 }),
          own: fc.boolean()
        }),
        { maxLength: 30 }
      )
    ],
    ([specs]) => {
      const bars = specs.map(
        (s): Bar =>
          bar(s.claim, {
            lane: s.lane,
            start: T0 + s.start,
            end: T0 + s.start + s.len,
            outcome: s.outcome,
            model: s.model,
            pass: s.pass,
            explain: s.lines.map((l) => (s.own ? `${s.claim}: ${l}` : l)).join("\n")
          })
      )
      const cools: Array<Cool> = specs.slice(0, 3).map((s) => ({ model: s.model, lanes: [s.lane], start: T0 + s.start, end: T0 + s.start + s.len, reason: "hang", strike: 2, scope: "model", explain: s.lines.join("\n") }))
      const marks: Array<Mark> = specs.slice(0, 3).map((s) => ({ at: T0 + s.start, lane: s.lane, kind: "switch", label: s.claim, explain: s.lines.join("\n") }))
      const t = timeline({ bars, cools, marks })
      const d = JSON.parse(dataScript(timelineHtml(t))) as TimelineData
      const laneIds = d.lanes.map((l) => l[0])
      expect(laneIds.slice(0, 2)).toEqual(["slot-1", "slot-2"])
      d.b.forEach((x, i) => {
        const b = bars[i]!
        expect([x[0], laneIds[x[1]], x[2] + d.t0, x[3] + d.t0, d.o[x[4]], d.s[x[7]], d.s[x[8]]]).toEqual([b.claim, b.lane, b.start, b.end, b.outcome, b.model, b.pass])
        expect(explainOf(d, x[10], x[0])).toBe(b.explain)
      })
      d.c.forEach((x, i) => expect([d.s[x[0]], x[1].map((l) => laneIds[l]), x[2] + d.t0, x[3] + d.t0, explainOf(d, x[7])]).toEqual([cools[i]!.model, cools[i]!.lanes, cools[i]!.start, cools[i]!.end, cools[i]!.explain]))
      d.m.forEach((x, i) => expect([x[0] + d.t0, laneIds[x[1]], d.s[x[2]], d.s[x[3]], explainOf(d, x[4])]).toEqual([marks[i]!.at, marks[i]!.lane, "switch", marks[i]!.label, marks[i]!.explain]))
    }
  )

  it("US-45 repeated explanation lines are stored once", () => {
    const bars = Array.from({ length: 500 }, (_, i) => bar(`ses_p:call_${i}`))
    const d = timelineData(timeline({ bars }))
    // two sentences, the claim prefix left out: both are in the table once for 500 bars
    expect(d.s.filter((s) => s.startsWith("explore -> explore-1"))).toHaveLength(1)
    expect(d.s.filter((s) => s === "released (done).")).toHaveLength(1)
  })

  it.prop(
    "US-45 bars held at the same time on one lane never share a row (below MAX_ROWS)",
    [fc.array(fc.record({ lane: fc.integer({ min: 0, max: 2 }), start: fc.integer({ min: 0, max: 100 }), len: fc.integer({ min: 0, max: 40 }) }), { maxLength: 40 })],
    ([specs]) => {
      const bars = specs.map((s) => ({ lane: s.lane, start: s.start, end: s.start + s.len }))
      const { row, rows } = packRows(bars, 3)
      expect(rows.every((r) => r >= 1 && r <= MAX_ROWS)).toBe(true)
      bars.forEach((a, i) => {
        expect(row[i]).toBeLessThan(rows[a.lane]!)
        if (rows[a.lane]! >= MAX_ROWS) return
        bars.forEach((b, j) => {
          if (i < j && a.lane === b.lane && row[i] === row[j]) expect(a.end <= b.start || b.end <= a.start).toBe(true)
        })
      })
    }
  )
})

describe("US-45 timeline SVG (timelineSvg)", () => {
  it("US-45 a standalone SVG: namespace, well-formed, every text escaped", () => {
    const evil = `a<b>&"'\u0001\uD800</title></svg><script>alert(1)</script>`
    const t = timeline({
      title: evil,
      lanes: [{ id: "slot-1", label: evil, kind: "slot", slot: 1 }],
      bars: [bar(evil, { model: evil, explain: evil })],
      cools: [{ model: evil, lanes: ["slot-1"], start: T0, end: T0 + 100, reason: evil, strike: 1, scope: "provider", explain: evil }],
      marks: [{ at: T0 + 50, lane: "slot-1", kind: "refuse", label: evil, explain: evil }]
    })
    const svg = timelineSvg(t)
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true)
    expect(svg.trimEnd().endsWith("</svg>")).toBe(true)
    expect(wellFormed(svg)).toEqual([])
    expect(svg).not.toContain("<script")
    expect(svg).not.toContain("\u0001")
    expect(svg).toContain("a&lt;b&gt;&amp;&quot;&#39;\uFFFD\uFFFD&lt;/title&gt;")
    // one element per bar, cool and mark, each with its tooltip
    expect(svg.match(/<rect class="bar outcome-ok"[^>]*><title>/g)).toHaveLength(1)
    expect(svg.match(/<rect class="cool"[^>]*><title>/g)).toHaveLength(1)
    expect(svg.match(/<path class="mark mark-refuse"[^>]*><title>/g)).toHaveLength(1)
  })

  it("US-45 the SVG of the hand-built fixture is well-formed and names every lane", () => {
    const svg = timelineSvg(timeline())
    expect(wellFormed(svg)).toEqual([])
    expect(svg).toContain(">1. zen/alpha<")
    expect(svg).toContain(">2. go/gamma<")
    expect(svg).toContain("pass-second")
  })

  it("US-45 a huge trace is drawn in per-pixel aggregates, so the file stays bounded", () => {
    const n = AGGREGATE_BARS * 5
    const bars = Array.from({ length: n }, (_, i) =>
      bar(`ses_parent:call_${i}`, { lane: `slot-${(i % 4) + 1}`, start: T0 + i * 500, end: T0 + i * 500 + 20_000, outcome: BAR_OUTCOMES[i % 6]! })
    )
    const marks: Array<Mark> = bars.map((b) => ({ at: b.end, lane: b.lane, kind: "abort", label: "abort", explain: b.explain }))
    const svg = timelineSvg(timeline({ end: T0 + n * 500 + 20_000, lanes: [1, 2, 3, 4].map((s) => ({ id: `slot-${s}`, label: `${s}. m`, kind: "slot" as const, slot: s })), bars, marks }))
    expect(wellFormed(svg)).toEqual([])
    expect(svg).not.toContain("ses_parent:call_")
    expect(svg).toContain('class="agg outcome-')
    expect(svg).toContain('class="markagg"')
    expect(svg.length).toBeLessThan(1_500_000)
  })
})
