/**
 * The timeline page's script (issue 24 item 2), run in the browser: reads `#data` (the compact
 * TimelineData of core/view/timelineHtml.ts), renders the lanes, axis, cooldowns, bars and marks into
 * `#chart` as SVG, aggregates per pixel past the thresholds, and handles zoom, pan, wheel, keys and
 * the tooltip. The page's DOM contract is documented in timelineHtml.ts.
 *
 * Type-checked with the DOM's types (tsconfig.web.json) and bundled by scripts/timelineScript.mjs into
 * core/view/timelineScript.ts, whose text the page embeds: edit this file, then run
 * `node scripts/timelineScript.mjs` (the build does it too; a test fails while the two differ).
 */
import { isoTimeOr, spanText as dur, tickLabel } from "../core/time.js"
import type { TimelineData } from "../core/view/timelineHtml.js"
import { AGGREGATE_BARS as AGG_BARS, AGGREGATE_COOLS as AGG_COOLS, AGGREGATE_MARKS as AGG_MARKS } from "../core/view/timelineLimits.js"

/** A per-pixel aggregate as its tooltip describes it. */
interface Agg {
  readonly t: "bars" | "cools" | "marks"
  readonly lane: number
  readonly n: number
  readonly counts: string
  readonly from: number
  readonly to: number
}

const byId = <E extends Element>(id: string): E => document.getElementById(id) as unknown as E

const D = JSON.parse(byId<HTMLElement>("data").textContent ?? "") as TimelineData
const S = D.s
const O = D.o
const LN = D.lanes
const B = D.b
const C = D.c
const M = D.m
const T0 = D.t0
const LABEL_W = 220
const LANE_H = 30
const AXIS_H = 28
const RIGHT = 14
const MIN_RANGE = 5
const LABEL_MARKS = 60
const SEC = 1000
const MIN = 60 * SEC
const HOUR = 60 * MIN
const DAY = 24 * HOUR
const STEPS = [
  1, 2, 5, 10, 20, 50, 100, 200, 500, SEC, 2 * SEC, 5 * SEC, 10 * SEC, 15 * SEC, 30 * SEC, MIN, 2 * MIN, 5 * MIN, 10 * MIN, 15 * MIN, 30 * MIN, HOUR, 2 * HOUR, 3 * HOUR,
  6 * HOUR, 12 * HOUR, DAY, 2 * DAY, 7 * DAY, 14 * DAY, 30 * DAY, 91 * DAY, 365 * DAY
]
const chart = byId<SVGSVGElement>("chart")
const wrap = byId<HTMLElement>("wrap")
const tip = byId<HTMLElement>("tip")
const rangeEl = byId<HTMLElement>("range")
const span = D.span > 0 ? D.span : 1000
const lo = -span * 0.02
const hi = span * 1.02
let min = lo
let max = hi
for (const b of B) {
  if (b[2] < min) min = b[2]
  if (b[3] > max) max = b[3]
}
for (const c of C) {
  if (c[2] < min) min = c[2]
  if (c[3] > max) max = c[3]
}
for (const m of M) {
  if (m[0] < min) min = m[0]
  if (m[0] > max) max = m[0]
}
let v0 = lo
let v1 = hi
let W = 600
let aggs: Array<Agg> = []
let pending = false
let renders = 0
const TOP: Array<number> = []
const LH: Array<number> = []
let H = AXIS_H
for (const lane of LN) {
  const h = lane[3] > 1 ? 12 + lane[3] * 9 : LANE_H
  TOP.push(H)
  LH.push(h)
  H += h
}
H += 2

const esc = (s: unknown): string => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
/** An instant relative to the trace's start, in full. */
const iso = (rel: number): string => isoTimeOr(T0 + rel)
const lines = (list: ReadonlyArray<number>, claim?: string): string => list.map((n) => (n < 0 ? `${claim}: ${S[-n - 1]}` : S[n])).join("\n")
const laneLabel = (l: number): string => (LN[l] ? LN[l][1] : "?")
const trunc = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n - 1)}\u2026` : s)

/** The tooltip of an item by its `data-i` key: `b`, `c`, `m` or `a` (aggregate) and an index. */
const describe = (key: string): string => {
  const kind = key.charAt(0)
  const n = +key.slice(1)
  const t: Array<string> = []
  if (kind === "b") {
    const x = B[n]!
    t.push(x[0])
    t.push(`${S[x[5]]} -> ${S[x[6]]} (${S[x[7]]}), ${S[x[8]]} pass, on ${laneLabel(x[1])}`)
    t.push(`outcome: ${O[x[4]]}${x[9] ? `   session: ${x[9]}` : ""}`)
    t.push(`${iso(x[2])} -> ${iso(x[3])} (${dur(x[3] - x[2])})`)
    const e = lines(x[10], x[0])
    if (e) t.push("", e)
  } else if (kind === "c") {
    const x = C[n]!
    t.push(`${S[x[0]]} cooling (${S[x[6]]} scope): ${S[x[4]]}, strike ${x[5]}`)
    t.push(`${iso(x[2])} -> ${iso(x[3])} (${dur(x[3] - x[2])})`)
    const e = lines(x[7])
    if (e) t.push("", e)
  } else if (kind === "m") {
    const x = M[n]!
    t.push(`${S[x[2]]}${S[x[3]] ? `: ${S[x[3]]}` : ""} on ${laneLabel(x[1])}`)
    t.push(iso(x[0]))
    const e = lines(x[4])
    if (e) t.push("", e)
  } else if (kind === "a") {
    const x = aggs[n]
    if (!x) return ""
    const what = x.t === "bars" ? "claims" : x.t === "cools" ? "cooldowns" : "marks"
    t.push(`${x.n} ${what} on ${laneLabel(x.lane)} between ${iso(x.from)} and ${iso(x.to)}`)
    if (x.counts) t.push(x.counts)
    t.push("Zoom in to see each one.")
  }
  return t.join("\n")
}

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

/** Per-pixel-column counts per lane and category for [start, end] spans (diff arrays), as runs of equal columns. */
const aggregate = (a: AggSpec, items: ReadonlyArray<number>, h: Array<string>): void => {
  const nl = LN.length
  const nCat = a.nCat
  const stride = W + 1
  const diff = new Int32Array(nl * nCat * stride)
  const k = W / (v1 - v0)
  for (const it of items) {
    const ls = a.laneOf(it)
    const cat = a.catOf(it)
    let c0 = Math.floor((a.startOf(it) - v0) * k)
    let c1 = Math.floor((a.endOf(it) - v0) * k)
    if (c0 < 0) c0 = 0
    if (c1 > W - 1) c1 = W - 1
    if (c0 > W - 1) c0 = W - 1
    if (c1 < c0) c1 = c0
    for (const l of ls) {
      const base = (l * nCat + cat) * stride
      diff[base + c0]!++
      diff[base + c1 + 1]!--
    }
  }
  for (let l = 0; l < nl; l++) {
    const acc = new Int32Array(nCat)
    let prev: Int32Array | null = null
    let runStart = 0
    const flush = (end: number): void => {
      if (prev === null) return
      let total = 0
      let best = 0
      const parts: Array<string> = []
      for (let z = 0; z < nCat; z++) {
        total += prev[z]!
        if (prev[z]! > prev[best]!) best = z
        if (prev[z]) parts.push(`${a.names[z]} ${prev[z]}`)
      }
      if (total === 0) return
      const id = aggs.length
      aggs.push({ t: a.type, lane: l, n: total, counts: parts.join(" \u00b7 "), from: v0 + runStart / k, to: v0 + end / k })
      h.push(
        `<rect class="${a.cls(best)}" tabindex="0" data-i="a${id}" data-lane="${esc(LN[l]![0])}" data-n="${total}" data-counts="${esc(parts.join(","))}" x="${runStart}" y="${a.yOf(l)}" width="${end - runStart}" height="${a.hOf(l)}"/>`
      )
    }
    for (let x = 0; x < W; x++) {
      let same = prev !== null
      for (let z = 0; z < nCat; z++) {
        acc[z]! += diff[(l * nCat + z) * stride + x]!
        if (same && acc[z] !== prev![z]) same = false
      }
      if (!same) {
        flush(x)
        prev = Int32Array.from(acc)
        runStart = x
      }
    }
    flush(W)
  }
}

const render = (): void => {
  pending = false
  let activeKey: string | null = null
  const active = document.activeElement
  if (active && active.getAttribute && chart.contains(active)) activeKey = active.getAttribute("data-i")
  W = Math.max(240, Math.floor(wrap.clientWidth - LABEL_W - RIGHT))
  const k = W / (v1 - v0)
  const h: Array<string> = []
  const X = (t: number): number => {
    const x = (t - v0) * k
    return x < -2 ? -2 : x > W + 2 ? W + 2 : x
  }
  const laneY = (l: number): number => TOP[l]!
  aggs = []
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
  chart.setAttribute("width", String(LABEL_W + W + RIGHT))
  chart.setAttribute("height", String(Math.max(H, AXIS_H + 30)))
  chart.innerHTML = h.join("")
  rangeEl.textContent = `${iso(v0)} \u2013 ${iso(v1)} (${dur(v1 - v0)}) \u00b7 ${vb.length} of ${B.length} claims in view${agg ? ", aggregated per pixel: zoom in to see each claim" : ""}`
  document.body.setAttribute("data-mode", agg ? "agg" : "bars")
  document.body.setAttribute("data-renders", String(++renders))
  if (activeKey && activeKey.charAt(0) !== "a") {
    const again = chart.querySelector<SVGElement>(`[data-i="${activeKey}"]`)
    if (again) again.focus({ preventScroll: true })
  }
}

const schedule = (): void => {
  if (!pending) {
    pending = true
    requestAnimationFrame(render)
  }
}
const clampView = (): void => {
  const r = v1 - v0
  if (r >= max - min) {
    v0 = min
    v1 = max
    return
  }
  if (v0 < min) {
    v0 = min
    v1 = min + r
  }
  if (v1 > max) {
    v1 = max
    v0 = max - r
  }
}
const zoom = (factor: number, frac: number): void => {
  const r = v1 - v0
  const nr = Math.max(MIN_RANGE, r * factor)
  const at = v0 + frac * r
  v0 = at - frac * nr
  v1 = v0 + nr
  clampView()
}
const pan = (dt: number): void => {
  v0 += dt
  v1 += dt
  clampView()
}
const reset = (): void => {
  v0 = lo
  v1 = hi
}

const place = (x: number, y: number): void => {
  const w = tip.offsetWidth
  const hh = tip.offsetHeight
  const left = Math.min(x + 14, window.innerWidth - w - 8)
  let top = y + 16
  if (top + hh > window.innerHeight - 4) top = Math.max(4, y - hh - 12)
  tip.style.left = `${Math.max(4, left)}px`
  tip.style.top = `${top}px`
}
const hide = (): void => {
  tip.hidden = true
}
const show = (el: Element, x: number, y: number): void => {
  const text = describe(el.getAttribute("data-i") ?? "")
  if (!text) {
    hide()
    return
  }
  tip.textContent = text
  tip.hidden = false
  place(x, y)
}
const target = (e: Event): Element | null => {
  const t = e.target as Element | null
  return t && t.closest ? t.closest("[data-i]") : null
}

chart.addEventListener("mouseover", (e) => {
  const el = target(e)
  if (el) show(el, e.clientX, e.clientY)
  else hide()
})
chart.addEventListener("mousemove", (e) => {
  if (!tip.hidden && target(e)) place(e.clientX, e.clientY)
})
chart.addEventListener("mouseleave", hide)
chart.addEventListener("focusin", (e) => {
  const el = target(e)
  if (!el) return
  el.setAttribute("aria-describedby", "tip")
  const r = el.getBoundingClientRect()
  show(el, r.left + Math.min(r.width, 40) / 2, r.bottom)
})
chart.addEventListener("focusout", hide)
chart.addEventListener(
  "wheel",
  (e) => {
    e.preventDefault()
    const r = chart.getBoundingClientRect()
    const frac = Math.min(1, Math.max(0, (e.clientX - r.left - LABEL_W) / W))
    const dy = e.deltaMode === 1 ? e.deltaY * 30 : e.deltaY
    const dx = e.deltaMode === 1 ? e.deltaX * 30 : e.deltaX
    if (Math.abs(dx) > Math.abs(dy) || e.shiftKey) pan(((Math.abs(dx) > Math.abs(dy) ? dx : dy) / W) * (v1 - v0))
    else zoom(Math.pow(1.0015, dy), frac)
    hide()
    schedule()
  },
  { passive: false }
)
byId<HTMLElement>("zoom-in").addEventListener("click", () => {
  zoom(0.5, 0.5)
  render()
})
byId<HTMLElement>("zoom-out").addEventListener("click", () => {
  zoom(2, 0.5)
  render()
})
byId<HTMLElement>("zoom-reset").addEventListener("click", () => {
  reset()
  render()
})
document.addEventListener("keydown", (e) => {
  if (e.ctrlKey || e.metaKey || e.altKey) return
  const key = e.key
  if (key === "+" || key === "=") zoom(0.5, 0.5)
  else if (key === "-" || key === "_") zoom(2, 0.5)
  else if (key === "0") reset()
  else if (key === "ArrowLeft") pan(-0.1 * (v1 - v0))
  else if (key === "ArrowRight") pan(0.1 * (v1 - v0))
  else if (key === "Escape") {
    hide()
    return
  } else return
  e.preventDefault()
  hide()
  render()
})
window.addEventListener("resize", schedule)
render()
document.body.dataset.readyMs = String(Math.round(performance.now()))
document.body.dataset.ready = "1"
