/**
 * The timeline page's drawing (src/web/timeline.ts runs it in the browser): the lanes, axis,
 * cooldowns, bars and marks of the visible interval `[v0, v1]` over `W` pixels as SVG markup, with
 * per-pixel aggregates past the thresholds. No DOM: data and a view in, markup out.
 */
import { tickLabel } from "../core/time.js"
import type { TimelineData } from "../core/view/timelineHtml.js"
import { columnRuns } from "../core/view/columnRuns.js"
import { AGGREGATE_BARS as AGG_BARS, AGGREGATE_COOLS as AGG_COOLS, AGGREGATE_MARKS as AGG_MARKS } from "../core/view/timelineLimits.js"

export const LABEL_W = 220
export const AXIS_H = 28
export const RIGHT = 14
const LANE_H = 30
const LABEL_MARKS = 60
const SEC = 1000
const MIN = 60 * SEC
const HOUR = 60 * MIN
const DAY = 24 * HOUR
const STEPS = [
  1, 2, 5, 10, 20, 50, 100, 200, 500, SEC, 2 * SEC, 5 * SEC, 10 * SEC, 15 * SEC, 30 * SEC, MIN, 2 * MIN, 5 * MIN, 10 * MIN, 15 * MIN, 30 * MIN, HOUR, 2 * HOUR, 3 * HOUR,
  6 * HOUR, 12 * HOUR, DAY, 2 * DAY, 7 * DAY, 14 * DAY, 30 * DAY, 91 * DAY, 365 * DAY
]

/** A per-pixel aggregate as its tooltip describes it. */
export interface Agg {
  readonly t: "bars" | "cools" | "marks"
  readonly lane: number
  readonly n: number
  readonly counts: string
  readonly from: number
  readonly to: number
}

/** The page's data with each lane's top and height and the chart's height. */
export interface Chart {
  readonly D: TimelineData
  readonly TOP: ReadonlyArray<number>
  readonly LH: ReadonlyArray<number>
  readonly H: number
}

export const chartOf = (D: TimelineData): Chart => {
  const TOP: Array<number> = []
  const LH: Array<number> = []
  let H = AXIS_H
  for (const lane of D.lanes) {
    const h = lane[3] > 1 ? 12 + lane[3] * 9 : LANE_H
    TOP.push(H)
    LH.push(h)
    H += h
  }
  return { D, TOP, LH, H: H + 2 }
}

/** What one drawing gives: the markup, its aggregates (for their tooltips), the claims in view, and whether bars were aggregated. */
export interface Drawn {
  readonly html: string
  readonly aggs: ReadonlyArray<Agg>
  readonly inView: number
  readonly agg: boolean
}

export const esc = (s: unknown): string => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
export const trunc = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n - 1)}\u2026` : s)

/** How one kind of item is aggregated: its span, lanes and category, and how its aggregate is drawn. */
interface AggSpec {
  readonly type: Agg["t"]
  readonly nCat: number
  readonly startOf: (i: number) => number
  readonly endOf: (i: number) => number
  readonly laneOf: (i: number) => ReadonlyArray<number>
  readonly catOf: (i: number) => number
  readonly names: ReadonlyArray<string>
  readonly cls: (best: number) => string
  readonly yOf: (l: number) => number
  readonly hOf: (l: number) => number
}

/** The markup of `[v0, v1]` over `W` pixels. */
export const draw = (chart: Chart, v0: number, v1: number, W: number): Drawn => {
  const { D, TOP, LH, H } = chart
  const S = D.s
  const O = D.o
  const LN = D.lanes
  const B = D.b
  const C = D.c
  const M = D.m
  const T0 = D.t0
  const aggs: Array<Agg> = []
  const ticks = (step: number): Array<number> => {
    const out: Array<number> = []
    const first = Math.ceil((T0 + v0) / step) * step - T0
    for (let t = first; t <= v1 && out.length < 200; t += step) out.push(t)
    return out
  }
  const pickStep = (range: number): number => {
    const want = range / Math.max(2, Math.floor(W / 120))
    for (const s of STEPS) if (s >= want) return s
    return STEPS[STEPS.length - 1]!
  }

  /** Per-pixel-column counts per lane and category for [start, end] spans, as runs of equal columns (core/view/columnRuns.ts). */
  const aggregate = (a: AggSpec, items: ReadonlyArray<number>, h: Array<string>): void => {
    const nCat = a.nCat
    const k = W / (v1 - v0)
    for (const run of columnRuns(items, LN.length, nCat, W, (ms) => (ms - v0) * k, a.startOf, a.endOf, a.laneOf, a.catOf)) {
      const counts = run.counts
      let total = 0
      let best = 0
      const parts: Array<string> = []
      for (let z = 0; z < nCat; z++) {
        total += counts[z]!
        if (counts[z]! > counts[best]!) best = z
        if (counts[z]) parts.push(`${a.names[z]} ${counts[z]}`)
      }
      const id = aggs.length
      aggs.push({ t: a.type, lane: run.lane, n: total, counts: parts.join(" \u00b7 "), from: v0 + run.from / k, to: v0 + run.to / k })
      h.push(
        `<rect class="${a.cls(best)}" tabindex="0" data-i="a${id}" data-lane="${esc(LN[run.lane]![0])}" data-n="${total}" data-counts="${esc(parts.join(","))}" x="${run.from}" y="${a.yOf(run.lane)}" width="${run.to - run.from}" height="${a.hOf(run.lane)}"/>`
      )
    }
  }

  const k = W / (v1 - v0)
  const h: Array<string> = []
  const X = (t: number): number => {
    const x = (t - v0) * k
    return x < -2 ? -2 : x > W + 2 ? W + 2 : x
  }
  const laneY = (l: number): number => TOP[l]!
  LN.forEach((lane, l) => {
    const y = laneY(l)
    h.push(`<rect class="lane lane-${esc(lane[2])}${l % 2 ? " odd" : ""}" data-lane="${esc(lane[0])}" x="0" y="${y}" width="${LABEL_W + W + RIGHT}" height="${LH[l]}"/>`)
    h.push(`<text class="lane-label" data-lane="${esc(lane[0])}" x="8" y="${y + LH[l]! / 2 + 4}">${esc(trunc(lane[1], 30))}<title>${esc(lane[1])}</title></text>`)
  })
  const step = pickStep(v1 - v0)
  h.push(`<g id="axis" transform="translate(${LABEL_W},0)">`)
  for (const at of ticks(step)) {
    const tx = X(at).toFixed(1)
    h.push(`<line class="tick" x1="${tx}" x2="${tx}" y1="${AXIS_H - 6}" y2="${H}"/>`)
    h.push(`<text class="tick-label" x="${tx}" y="${AXIS_H - 10}" text-anchor="middle">${esc(tickLabel(T0 + at, step))}</text>`)
  }
  h.push("</g>")
  h.push(`<defs><clipPath id="plotclip"><rect x="0" y="0" width="${W}" height="${H}"/></clipPath></defs>`)
  h.push(`<g id="plot" transform="translate(${LABEL_W},0)" clip-path="url(#plotclip)">`)
  // cooldowns
  const vc: Array<number> = []
  let rects = 0
  C.forEach((c, i) => {
    if (c[3] >= v0 && c[2] <= v1) {
      vc.push(i)
      rects += c[1].length
    }
  })
  if (rects > AGG_COOLS) {
    const spec: AggSpec = {
      type: "cools",
      nCat: 1,
      startOf: (i) => C[i]![2],
      endOf: (i) => C[i]![3],
      laneOf: (i) => C[i]![1],
      catOf: () => 0,
      names: ["cooldowns"],
      cls: () => "coolagg",
      yOf: (l) => laneY(l) + 1,
      hOf: (l) => LH[l]! - 2
    }
    aggregate(spec, vc, h)
  } else {
    for (const i of vc) {
      const c = C[i]!
      const x0 = X(c[2])
      const x1 = Math.max(X(c[3]), x0 + 1)
      for (const l of c[1]) {
        h.push(
          `<rect class="cool" tabindex="0" data-i="c${i}" data-model="${esc(S[c[0]])}" data-reason="${esc(S[c[4]])}" data-lane="${esc(LN[l]![0])}" x="${x0.toFixed(1)}" y="${laneY(l) + 1}" width="${(x1 - x0).toFixed(1)}" height="${LH[l]! - 2}"/>`
        )
      }
    }
  }
  // bars
  const vb: Array<number> = []
  B.forEach((b, i) => {
    if (b[3] >= v0 && b[2] <= v1) vb.push(i)
  })
  const agg = vb.length > AGG_BARS
  if (agg) {
    const spec: AggSpec = {
      type: "bars",
      nCat: O.length,
      startOf: (i) => B[i]![2],
      endOf: (i) => B[i]![3],
      laneOf: (i) => [B[i]![1]],
      catOf: (i) => B[i]![4],
      names: O,
      cls: (best) => `agg outcome-${O[best]}`,
      yOf: (l) => laneY(l) + 6,
      hOf: (l) => LH[l]! - 12
    }
    aggregate(spec, vb, h)
  } else {
    for (const i of vb) {
      const b = B[i]!
      const pass = S[b[8]]
      const oc = O[b[4]]
      const x0 = X(b[2])
      const x1 = Math.max(X(b[3]), x0 + 2)
      const rows = LN[b[1]]![3] || 1
      const rowH = (LH[b[1]]! - 12) / rows
      h.push(
        `<rect class="bar outcome-${esc(oc)}${pass === "second" || pass === "overflow" ? ` pass-${pass}` : ""}" tabindex="0" data-i="b${i}" data-claim="${esc(b[0])}" data-lane="${esc(LN[b[1]]![0])}" data-outcome="${esc(oc)}" data-pass="${esc(pass)}" x="${x0.toFixed(1)}" y="${(laneY(b[1]) + 6 + b[11] * rowH).toFixed(1)}" width="${(x1 - x0).toFixed(1)}" height="${(rows > 1 ? rowH - 1.5 : rowH).toFixed(1)}" rx="2"/>`
      )
    }
  }
  // marks
  const vm: Array<number> = []
  M.forEach((m, i) => {
    if (m[0] >= v0 && m[0] <= v1) vm.push(i)
  })
  if (vm.length > AGG_MARKS) {
    const kinds: Array<string> = []
    const kindIx = new Map<string, number>()
    for (const i of vm) {
      const kn = S[M[i]![2]]!
      if (!kindIx.has(kn)) {
        kindIx.set(kn, kinds.length)
        kinds.push(kn)
      }
    }
    const spec: AggSpec = {
      type: "marks",
      nCat: kinds.length,
      startOf: (i) => M[i]![0],
      endOf: (i) => M[i]![0],
      laneOf: (i) => [M[i]![1]],
      catOf: (i) => kindIx.get(S[M[i]![2]]!)!,
      names: kinds,
      cls: () => "markagg",
      yOf: (l) => laneY(l) + 1,
      hOf: () => 7
    }
    aggregate(spec, vm, h)
  } else {
    const labelEnd: Array<number> = []
    for (const i of vm) {
      const m = M[i]!
      const mk = S[m[2]]
      const mx = X(m[0])
      const my = laneY(m[1]) + 2
      h.push(`<path class="mark mark-${esc(mk)}" tabindex="0" data-i="m${i}" data-kind="${esc(mk)}" data-lane="${esc(LN[m[1]]![0])}" d="M${mx.toFixed(1)},${my}l5,6l-5,6l-5,-6z"/>`)
      const label = S[m[3]]
      if (vm.length <= LABEL_MARKS && label && !((labelEnd[m[1]] ?? Number.NEGATIVE_INFINITY) > mx)) {
        const lt = trunc(label, 24)
        h.push(`<text class="mark-label" x="${(mx + 7).toFixed(1)}" y="${my + 10}">${esc(lt)}</text>`)
        labelEnd[m[1]] = mx + 12 + lt.length * 6.2
      }
    }
  }
  h.push("</g>")
  if (LN.length === 0) h.push(`<text class="tick-label" x="${LABEL_W + 8}" y="${AXIS_H + 18}">Nothing was routed in this trace.</text>`)
  return { html: h.join(""), aggs, inView: vb.length, agg }
}
