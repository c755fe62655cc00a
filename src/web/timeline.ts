/**
 * The timeline page's script (issue 24 item 2), run in the browser: reads `#data` (the compact
 * TimelineData of core/view/timelineHtml.ts), renders the lanes, axis, cooldowns, bars and marks into
 * `#chart` as SVG, aggregates per pixel past the thresholds, and handles zoom, pan, wheel, keys and
 * the tooltip. The page's DOM contract is documented in timelineHtml.ts.
 *
 * The drawing itself is timelineDraw.ts. Type-checked with the DOM's types (tsconfig.web.json) and bundled by scripts/timelineScript.mjs into
 * core/view/timelineScript.ts, whose text the page embeds: edit this file, then run
 * `node scripts/timelineScript.mjs` (the build does it too; a test fails while the two differ).
 */
import { isoTimeOr, spanText as dur } from "../core/time.js"
import type { TimelineData } from "../core/view/timelineHtml.js"
import { AXIS_H, chartOf, draw, LABEL_W, RIGHT, type Agg } from "./timelineDraw.js"

const byId = <E extends Element>(id: string): E => document.getElementById(id) as unknown as E

const D = JSON.parse(byId<HTMLElement>("data").textContent ?? "") as TimelineData
const S = D.s
const O = D.o
const LN = D.lanes
const CHART = chartOf(D)
const B = D.b
const C = D.c
const M = D.m
const T0 = D.t0
const MIN_RANGE = 5
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
let aggs: ReadonlyArray<Agg> = []
let pending = false
let renders = 0
/** An instant relative to the trace's start, in full. */
const iso = (rel: number): string => isoTimeOr(T0 + rel)
const lines = (list: ReadonlyArray<number>, claim?: string): string => list.map((n) => (n < 0 ? `${claim}: ${S[-n - 1]}` : S[n])).join("\n")
const laneLabel = (l: number): string => (LN[l] ? LN[l][1] : "?")

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

const render = (): void => {
  pending = false
  let activeKey: string | null = null
  const active = document.activeElement
  if (active && active.getAttribute && chart.contains(active)) activeKey = active.getAttribute("data-i")
  W = Math.max(240, Math.floor(wrap.clientWidth - LABEL_W - RIGHT))
  const drawn = draw(CHART, v0, v1, W)
  aggs = drawn.aggs
  chart.setAttribute("width", String(LABEL_W + W + RIGHT))
  chart.setAttribute("height", String(Math.max(CHART.H, AXIS_H + 30)))
  chart.innerHTML = drawn.html
  rangeEl.textContent = `${iso(v0)} \u2013 ${iso(v1)} (${dur(v1 - v0)}) \u00b7 ${drawn.inView} of ${B.length} claims in view${drawn.agg ? ", aggregated per pixel: zoom in to see each claim" : ""}`
  document.body.setAttribute("data-mode", drawn.agg ? "agg" : "bars")
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
