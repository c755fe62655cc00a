/**
 * The static picture of a spawn trace's timeline (issue 24 item 2): `ocpool replay --timeline FILE.svg`.
 * The lanes, bars, cooldowns and marks of the page (timelineHtml.ts) in one standalone SVG, with the
 * page's classes and colours; aggregated per pixel column past the page's thresholds. Pure.
 */
import { isoTimeOr as iso, tickLabel } from "../time.js"
import { escapeMarkup, sharedCss, timelineData } from "./timelineHtml.js"
import { AGGREGATE_BARS, AGGREGATE_COOLS, AGGREGATE_MARKS } from "./timelineLimits.js"
import { columnRuns } from "./columnRuns.js"
import { BAR_OUTCOMES, type Bar, type Timeline } from "./timelineModel.js"

const SVG_W = 1200
const SVG_LABEL_W = 220
const SVG_LANE_H = 24
const SVG_AXIS_H = 30
const SVG_RIGHT = 16

const SVG_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 15e3, 3e4, 6e4, 12e4, 3e5, 6e5, 9e5, 18e5, 36e5, 72e5, 108e5, 216e5, 432e5, 864e5, 1728e5, 6048e5]

/** The axis step for `range` ms over `width` px (about one tick per 140 px). */
const svgStep = (range: number, width: number): number => {
  const want = range / Math.max(2, Math.floor(width / 140))
  return SVG_STEPS.find((s) => s >= want) ?? SVG_STEPS[SVG_STEPS.length - 1]!
}

const n1 = (x: number): string => (Math.round(x * 10) / 10).toString()

const barTitle = (b: Bar): string =>
  `${b.claim}\n${b.base} -> ${b.agent} (${b.model}), ${b.pass} pass\noutcome: ${b.outcome}${b.session === undefined ? "" : `   session: ${b.session}`}\n${iso(b.start)} -> ${iso(b.end)}${b.explain === "" ? "" : `\n\n${b.explain}`}`

/** A static picture of the whole Timeline, standalone SVG; aggregated per pixel column when it has too many bars, cools or marks. */
export const timelineSvg = (t: Timeline): string => {
  const data = timelineData(t) // lanes as the page has them (unknown lane ids added)
  const lanes = data.lanes
  const laneIndex = new Map(lanes.map((l, i) => [l[0], i] as const))
  const laneOf = (id: string): number => laneIndex.get(id) ?? 0
  const plotW = SVG_W - SVG_LABEL_W - SVG_RIGHT
  const laneH = lanes.map((l) => (l[3] > 1 ? 10 + l[3] * 8 : SVG_LANE_H))
  const laneTop: Array<number> = []
  let bottom = SVG_AXIS_H
  for (const h of laneH) {
    laneTop.push(bottom)
    bottom += h
  }
  const legendY = bottom + 14
  const height = legendY + 40
  const v0 = t.start
  const v1 = t.end > t.start ? t.end : t.start + 1000
  const k = plotW / (v1 - v0)
  const col = (ms: number): number => (ms - v0) * k
  const X = (ms: number): number => Math.min(plotW + 2, Math.max(-2, col(ms)))
  const laneY = (l: number): number => laneTop[l] ?? SVG_AXIS_H
  const out: Array<string> = []
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${SVG_W}" height="${height}" viewBox="0 0 ${SVG_W} ${height}" font-family="system-ui,-apple-system,'Segoe UI',Roboto,sans-serif">`,
    `<title>${escapeMarkup(`ocpool timeline: ${t.title}`)}</title>`,
    `<style>${sharedCss()}.legend{font-size:11px;fill:#343a40}</style>`,
    `<rect x="0" y="0" width="${SVG_W}" height="${height}" fill="#fff"/>`
  )
  lanes.forEach(([id, label, kind], l) => {
    out.push(
      `<rect class="lane lane-${escapeMarkup(kind)}${l % 2 === 1 ? " odd" : ""}" x="0" y="${laneY(l)}" width="${SVG_W}" height="${laneH[l]}"/>`,
      `<text class="lane-label" x="8" y="${laneY(l) + laneH[l]! / 2 + 4}">${escapeMarkup(label.length > 30 ? `${label.slice(0, 29)}…` : label)}<title>${escapeMarkup(`${label} (${id})`)}</title></text>`
    )
  })
  const step = svgStep(v1 - v0, plotW)
  out.push(`<g class="axis" transform="translate(${SVG_LABEL_W},0)">`)
  for (let at = Math.ceil(v0 / step) * step, n = 0; at <= v1 && n < 50; at += step, n++) {
    const x = n1(X(at))
    out.push(
      `<line class="tick" x1="${x}" x2="${x}" y1="${SVG_AXIS_H - 6}" y2="${bottom}"/>`,
      `<text class="tick-label" x="${x}" y="${SVG_AXIS_H - 10}" text-anchor="middle">${escapeMarkup(tickLabel(at, step))}</text>`
    )
  }
  out.push(`</g><g transform="translate(${SVG_LABEL_W},0)">`)

  const coolRects = t.cools.reduce((n, c) => n + c.lanes.length, 0)
  if (coolRects > AGGREGATE_COOLS) {
    for (const r of columnRuns(t.cools, lanes.length, 1, plotW, col, (c) => c.start, (c) => c.end, (c) => c.lanes.map(laneOf), () => 0))
      out.push(
        `<rect class="coolagg" x="${r.from}" y="${laneY(r.lane) + 1}" width="${r.to - r.from}" height="${laneH[r.lane]! - 2}"><title>${r.counts[0]} cooldowns</title></rect>`
      )
  } else {
    for (const c of t.cools) {
      const x0 = X(c.start)
      const x1 = Math.max(X(c.end), x0 + 1)
      const title = escapeMarkup(`${c.model} cooling (${c.scope} scope): ${c.reason}, strike ${c.strike}\n${iso(c.start)} -> ${iso(c.end)}${c.explain === "" ? "" : `\n\n${c.explain}`}`)
      for (const id of c.lanes)
        out.push(`<rect class="cool" x="${n1(x0)}" y="${laneY(laneOf(id)) + 1}" width="${n1(x1 - x0)}" height="${laneH[laneOf(id)]! - 2}"><title>${title}</title></rect>`)
    }
  }

  if (t.bars.length > AGGREGATE_BARS) {
    const outcomeOf = (b: Bar): number => Math.max(0, BAR_OUTCOMES.indexOf(b.outcome))
    for (const r of columnRuns(t.bars, lanes.length, BAR_OUTCOMES.length, plotW, col, (b) => b.start, (b) => b.end, (b) => [laneOf(b.lane)], outcomeOf)) {
      let best = 0
      r.counts.forEach((n, i) => {
        if (n > r.counts[best]!) best = i
      })
      const parts = r.counts.flatMap((n, i) => (n > 0 ? [`${BAR_OUTCOMES[i]} ${n}`] : []))
      out.push(
        `<rect class="agg outcome-${BAR_OUTCOMES[best]}" x="${r.from}" y="${laneY(r.lane) + 5}" width="${r.to - r.from}" height="${laneH[r.lane]! - 10}"><title>${escapeMarkup(parts.join(" · "))}</title></rect>`
      )
    }
  } else {
    t.bars.forEach((b, i) => {
      const x0 = X(b.start)
      const x1 = Math.max(X(b.end), x0 + 2)
      const pass = b.pass === "second" || b.pass === "overflow" ? ` pass-${b.pass}` : ""
      const l = laneOf(b.lane)
      const rows = lanes[l]?.[3] ?? 1
      const rowH = (laneH[l]! - 10) / rows
      out.push(
        `<rect class="bar outcome-${escapeMarkup(b.outcome)}${pass}" x="${n1(x0)}" y="${n1(laneY(l) + 5 + (data.b[i]?.[11] ?? 0) * rowH)}" width="${n1(x1 - x0)}" height="${n1(rows > 1 ? rowH - 1.5 : rowH)}" rx="2"><title>${escapeMarkup(barTitle(b))}</title></rect>`
      )
    })
  }

  if (t.marks.length > AGGREGATE_MARKS) {
    for (const r of columnRuns(t.marks, lanes.length, 1, plotW, col, (m) => m.at, (m) => m.at, (m) => [laneOf(m.lane)], () => 0))
      out.push(`<rect class="markagg" x="${r.from}" y="${laneY(r.lane) + 1}" width="${Math.max(1, r.to - r.from)}" height="6"><title>${r.counts[0]} marks</title></rect>`)
  } else {
    for (const m of t.marks) {
      const x = n1(X(m.at))
      const y = laneY(laneOf(m.lane)) + 1
      out.push(
        `<path class="mark mark-${escapeMarkup(m.kind)}" d="M${x},${y}l5,6l-5,6l-5,-6z"><title>${escapeMarkup(`${m.kind}${m.label === "" ? "" : `: ${m.label}`}\n${iso(m.at)}${m.explain === "" ? "" : `\n\n${m.explain}`}`)}</title></path>`
      )
    }
  }
  out.push("</g>")

  // legend
  let lx = 8
  const swatch = (cls: string, text: string): void => {
    out.push(`<rect class="${cls}" x="${lx}" y="${legendY}" width="14" height="10" rx="2"/><text class="legend" x="${lx + 18}" y="${legendY + 9}">${escapeMarkup(text)}</text>`)
    lx += 26 + text.length * 6.5
  }
  for (const o of BAR_OUTCOMES) swatch(`bar outcome-${o}`, o)
  swatch("bar outcome-ok pass-second", "second pass")
  swatch("bar outcome-ok pass-overflow", "overflow")
  swatch("cool", "cooldown")
  out.push(
    `<text class="legend" x="8" y="${legendY + 28}">${escapeMarkup(
      `${t.title} · ${t.lines} trace lines · ${t.decisions} decisions · ${t.bars.length} claims · ${t.cools.length} cooldowns · ${t.marks.length} marks · ${iso(t.start)} – ${iso(t.end)}`
    )}</text>`,
    "</svg>\n"
  )
  return out.join("\n")
}
