/**
 * The timeline of a spawn trace drawn for a person (issue 24 item 2): `timelineHtml` gives one
 * self-contained page (no network at all: inline style and script under a strict CSP, the data inline
 * as JSON) that draws the lanes, bars, cooldowns and marks with SVG, with a time axis, zoom, pan, a
 * tooltip on hover and keyboard focus, and per-pixel aggregation when more than ~4,000 bars would be
 * visible; `timelineSvg` gives a static picture of the whole trace. Pure: a Timeline in, a string out.
 *
 * The page's DOM contract (what test/real/timeline.real.test.ts checks and a person can script against):
 * - `#chart` (svg): one `.lane` row and one `.lane-label` per Lane (`data-lane`), in the Timeline's order;
 * - `#axis`: the time axis, one `.tick-label` per tick (UTC clock time; the step follows the zoom);
 * - `.bar.outcome-<outcome>` per visible claim, `data-claim`, `data-lane`, `data-outcome`, `data-pass`,
 *   with `pass-second` / `pass-overflow` classes for the routing passes;
 * - `.cool` per visible cooldown and lane, `data-model`, `data-reason`, `data-lane`;
 * - `.mark.mark-<kind>` per visible mark, `data-kind`, `data-lane`;
 * - `.agg` (bars), `.coolagg` and `.markagg` (`data-lane`, `data-n`, `data-counts`) in place of the
 *   individual elements when too many are in view; `body[data-mode]` is `bars` or `agg`;
 * - every bar, cool, mark and aggregate is focusable (`tabindex=0`) and shows `#tip` on hover and focus;
 * - `#zoom-in`, `#zoom-out`, `#zoom-reset`; the wheel; keys `+` `-` `0`, arrows to pan; `#range` names
 *   the visible interval;
 * - `body[data-ready="1"]` once the first render is done (`data-ready-ms`: milliseconds since the
 *   navigation started); `body[data-renders]` counts renders.
 *
 * The inline data is compact for 100,000-line traces: times relative to the start, bars, cools and marks
 * as arrays, every repeated string (models, agents, reasons, explanation lines) through one string table,
 * and an explanation line that starts with its bar's claim stored without it.
 */
import { isoTimeOr as iso, tickLabel } from "../time.js"
import { BAR_OUTCOMES, type Bar, type BarOutcome, type Timeline } from "./timelineModel.js"

/** More visible bars than this and the page (and the SVG) draws per-pixel aggregates instead. */
export const AGGREGATE_BARS = 4000
/** The same for cooldown spans (counted once per lane they cover) and for marks. */
export const AGGREGATE_COOLS = 2000
export const AGGREGATE_MARKS = 2000

// ---------------------------------------------------------------------------------------------------
// Text escapes

/** Characters XML 1.0 forbids (and lone surrogates): shown as U+FFFD so the SVG stays well-formed. */
const XML_INVALID = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g
const MARKUP = /[&<>"']/g
const ENTITIES: Readonly<Record<string, string>> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }

/** Text as HTML/XML character data or a quoted attribute value: markup escaped, invalid characters replaced. */
export const escapeMarkup = (s: string): string => s.replace(XML_INVALID, "\uFFFD").replace(MARKUP, (c) => ENTITIES[c]!)

/** JSON for a `<script type="application/json">`: no `<` at all, so no `</script>` or `<!--` can end or bend it. */
export const scriptJson = (value: unknown): string => JSON.stringify(value).replace(/</g, "\\u003c")


// ---------------------------------------------------------------------------------------------------
// The page's compact data

/**
 * What the page's script reads (`#data`): `t0` the trace's start (absolute ms) and every other time
 * relative to it; `s` the string table; `o` the outcome names; lanes `[id, label, kind, rows]`; bars
 * `[claim, lane, start, end, outcome, base, agent, model, pass, session, explain, row]`; cools
 * `[model, lanes, start, end, reason, strike, scope, explain]`; marks `[at, lane, kind, label, explain]`.
 * Lanes, outcomes and strings are indexes. An explanation is a list of line indexes; `-(i + 1)` is
 * line `i` prefixed with the bar's claim and `": "`.
 */
export interface TimelineData {
  readonly v: 1
  readonly title: string
  readonly t0: number
  readonly span: number
  readonly lines: number
  readonly decisions: number
  readonly s: ReadonlyArray<string>
  readonly o: ReadonlyArray<BarOutcome>
  readonly lanes: ReadonlyArray<readonly [string, string, string, number]>
  readonly b: ReadonlyArray<readonly [string, number, number, number, number, number, number, number, number, string, ReadonlyArray<number>, number]>
  readonly c: ReadonlyArray<readonly [number, ReadonlyArray<number>, number, number, number, number, number, ReadonlyArray<number>]>
  readonly m: ReadonlyArray<readonly [number, number, number, number, ReadonlyArray<number>]>
}

/** Claims held at the same time on one lane are drawn in rows (at most this many; more share them). */
export const MAX_ROWS = 6

/**
 * Rows for concurrent bars: per lane, in start order, each bar takes the first row free at its start
 * (greedy interval packing); its drawn row is that row modulo MAX_ROWS. Gives each bar's row and each
 * lane's row count (1 to MAX_ROWS).
 */
export const packRows = (
  bars: ReadonlyArray<{ readonly lane: number; readonly start: number; readonly end: number }>,
  laneCount: number
): { readonly row: ReadonlyArray<number>; readonly rows: ReadonlyArray<number> } => {
  const order = bars.map((_, i) => i).sort((a, b) => bars[a]!.lane - bars[b]!.lane || bars[a]!.start - bars[b]!.start || a - b)
  const row = new Array<number>(bars.length).fill(0)
  const rows = new Array<number>(laneCount).fill(1)
  let lane = -1
  let ends: Array<number> = []
  for (const i of order) {
    const b = bars[i]!
    if (b.lane !== lane) {
      lane = b.lane
      ends = []
    }
    let r = ends.findIndex((e) => e <= b.start)
    if (r < 0) {
      r = ends.length
      ends.push(b.end)
    } else ends[r] = b.end
    row[i] = r % MAX_ROWS
    rows[lane] = Math.max(rows[lane] ?? 1, Math.min(MAX_ROWS, r + 1))
  }
  return { row, rows }
}

/** The Timeline in the page's compact form. A bar, cool or mark on a lane the Timeline does not list gets a lane of its own. */
export const timelineData = (t: Timeline): TimelineData => {
  const strings: Array<string> = []
  const index = new Map<string, number>()
  const str = (x: string): number => {
    let i = index.get(x)
    if (i === undefined) {
      i = strings.length
      strings.push(x)
      index.set(x, i)
    }
    return i
  }
  const lanes: Array<readonly [string, string, string]> = t.lanes.map((l) => [l.id, l.label, l.kind] as const)
  const laneIndex = new Map<string, number>()
  lanes.forEach((l, i) => {
    if (!laneIndex.has(l[0])) laneIndex.set(l[0], i)
  })
  const lane = (id: string): number => {
    let i = laneIndex.get(id)
    if (i === undefined) {
      i = lanes.length
      lanes.push([id, id, "slot"])
      laneIndex.set(id, i)
    }
    return i
  }
  const rel = (ms: number): number => ms - t.start
  const explain = (text: string, claim?: string): Array<number> => {
    if (text === "") return []
    const prefix = claim === undefined ? undefined : `${claim}: `
    return text.split("\n").map((line) => (prefix !== undefined && line.startsWith(prefix) ? -(str(line.slice(prefix.length)) + 1) : str(line)))
  }
  const outcome = (o: BarOutcome): number => {
    const i = BAR_OUTCOMES.indexOf(o)
    return i < 0 ? BAR_OUTCOMES.indexOf("open") : i
  }
  const b0 = t.bars.map(
    (x) =>
      [x.claim, lane(x.lane), rel(x.start), rel(x.end), outcome(x.outcome), str(x.base), str(x.agent), str(x.model), str(x.pass), x.session ?? "", explain(x.explain, x.claim)] as const
  )
  const c = t.cools.map((x) => [str(x.model), x.lanes.map(lane), rel(x.start), rel(x.end), str(x.reason), x.strike, str(x.scope), explain(x.explain)] as const)
  const m = t.marks.map((x) => [rel(x.at), lane(x.lane), str(x.kind), str(x.label), explain(x.explain)] as const)
  const packed = packRows(
    b0.map((x) => ({ lane: x[1], start: x[2], end: x[3] })),
    lanes.length
  )
  const b = b0.map((x, i) => [...x, packed.row[i]!] as const)
  return {
    v: 1,
    title: t.title,
    t0: t.start,
    span: t.end - t.start,
    lines: t.lines,
    decisions: t.decisions,
    s: strings,
    o: BAR_OUTCOMES,
    lanes: lanes.map((l, i) => [...l, packed.rows[i]!] as const),
    b,
    c,
    m
  }
}

// ---------------------------------------------------------------------------------------------------
// Shared look

const OUTCOME_COLOURS: Readonly<Record<BarOutcome, string>> = {
  ok: "#2f9e44",
  limit: "#f08c00",
  hung: "#9c36b5",
  spinning: "#e64980",
  aborted: "#c92a2a",
  failed: "#495057",
  open: "#4dabf7"
}

const MARK_KINDS = ["abort", "abort-failed", "switch", "model", "quota", "refuse", "context-start", "context-skip", "context-done"] as const
const MARK_COLOURS: Readonly<Record<(typeof MARK_KINDS)[number], string>> = {
  abort: "#c92a2a",
  "abort-failed": "#212529",
  switch: "#1971c2",
  model: "#0c8599",
  quota: "#e67700",
  refuse: "#5f3dc4",
  "context-start": "#2b8a3e",
  "context-skip": "#868e96",
  "context-done": "#087f5b"
}

/** The classes both drawings share: outcomes, passes, cooldowns, marks, lanes. */
const sharedCss = (): string =>
  [
    ...BAR_OUTCOMES.map((o) => `.outcome-${o}{fill:${OUTCOME_COLOURS[o]}}`),
    ".bar.pass-second{stroke:#1c1c1c;stroke-width:1.5;stroke-dasharray:4 2}",
    ".bar.pass-overflow{stroke:#000;stroke-width:2.5}",
    ".outcome-open{fill-opacity:.75}",
    ".cool,.coolagg{fill:#74a9e8;fill-opacity:.28;stroke:#4a7fc1;stroke-opacity:.5;stroke-width:.5}",
    ...MARK_KINDS.map((k) => `.mark-${k}{fill:${MARK_COLOURS[k]}}`),
    ".mark{stroke:#fff;stroke-width:1}",
    ".markagg{fill:#868e96;fill-opacity:.8}",
    ".lane{fill:#fff}.lane.odd{fill:#f4f6f8}",
    ".lane-fallback,.lane-quota,.lane-context,.lane-refused{fill:#fbf8ef}",
    ".lane-label{font-size:12px;fill:#212529}",
    ".tick{stroke:#dee2e6;stroke-width:1}",
    ".tick-label,.mark-label{font-size:11px;fill:#495057}"
  ].join("")

// ---------------------------------------------------------------------------------------------------
// The page

const CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'"

const PAGE_CSS = `*{box-sizing:border-box}
body{margin:0;font:13px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#212529;background:#fff}
header{padding:10px 16px 4px;border-bottom:1px solid #dee2e6}
h1{font-size:16px;margin:0 0 2px;word-break:break-all}
#summary,#range{color:#495057;margin:0}
#controls{display:flex;gap:6px;align-items:center;flex-wrap:wrap;margin:6px 0}
#controls button{font:inherit;min-width:34px;padding:3px 9px;border:1px solid #adb5bd;border-radius:4px;background:#f8f9fa;cursor:pointer}
#controls button:hover{background:#e9ecef}
:focus-visible{outline:2px solid #1c7ed6;outline-offset:1px}
#legend{display:flex;flex-wrap:wrap;gap:4px 14px;list-style:none;margin:4px 0;padding:0;color:#343a40}
#legend li{display:flex;align-items:center;gap:5px}
.sw{display:inline-block;width:14px;height:10px;border-radius:2px}
.sw-pass-second{background:#ced4da;border:1.5px dashed #1c1c1c}
.sw-pass-overflow{background:#ced4da;border:2.5px solid #000}
.sw-cool{background:rgba(116,169,232,.35);border:1px solid rgba(74,127,193,.6)}
.sw-agg{background:linear-gradient(90deg,#2f9e44 60%,#f08c00 60%)}
.sw-mark{width:9px;height:9px;transform:rotate(45deg);border-radius:1px}
#wrap{padding:6px 0 10px 0;overflow-x:hidden}
#chart{display:block;user-select:none;touch-action:none}
#chart [tabindex]{cursor:default;outline:none}
#chart [tabindex]:focus{stroke:#1c7ed6;stroke-width:3}
#tip{position:fixed;z-index:10;max-width:min(640px,92vw);padding:7px 9px;border-radius:5px;background:#212529;color:#f8f9fa;font-size:12px;white-space:pre-wrap;word-break:break-word;pointer-events:none;box-shadow:0 2px 8px rgba(0,0,0,.25)}
#tip[hidden]{display:none}
footer{padding:6px 16px 14px;color:#6c757d;border-top:1px solid #dee2e6}
kbd{font:11px ui-monospace,monospace;border:1px solid #ced4da;border-radius:3px;padding:0 3px;background:#f8f9fa}
.empty{padding:16px;color:#6c757d}
`

/** The page's script: reads `#data`, renders, handles zoom, pan, wheel, keys and the tooltip. Plain ES5-ish, no template literals. */
const PAGE_JS = String.raw`(function () {
"use strict";
var D = JSON.parse(document.getElementById("data").textContent);
var S = D.s, O = D.o, LN = D.lanes, B = D.b, C = D.c, M = D.m, T0 = D.t0;
var LABEL_W = 220, LANE_H = 30, AXIS_H = 28, RIGHT = 14, MIN_RANGE = 5;
var AGG_BARS = ${AGGREGATE_BARS}, AGG_COOLS = ${AGGREGATE_COOLS}, AGG_MARKS = ${AGGREGATE_MARKS}, LABEL_MARKS = 60;
var SEC = 1000, MIN = 60 * SEC, HOUR = 60 * MIN, DAY = 24 * HOUR;
var STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, SEC, 2 * SEC, 5 * SEC, 10 * SEC, 15 * SEC, 30 * SEC, MIN, 2 * MIN, 5 * MIN, 10 * MIN, 15 * MIN, 30 * MIN, HOUR, 2 * HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 2 * DAY, 7 * DAY, 14 * DAY, 30 * DAY, 91 * DAY, 365 * DAY];
var chart = document.getElementById("chart"), wrap = document.getElementById("wrap"), tip = document.getElementById("tip"), rangeEl = document.getElementById("range");
var span = D.span > 0 ? D.span : 1000, lo = -span * 0.02, hi = span * 1.02, min = lo, max = hi, i, j;
for (i = 0; i < B.length; i++) { if (B[i][2] < min) min = B[i][2]; if (B[i][3] > max) max = B[i][3]; }
for (i = 0; i < C.length; i++) { if (C[i][2] < min) min = C[i][2]; if (C[i][3] > max) max = C[i][3]; }
for (i = 0; i < M.length; i++) { if (M[i][0] < min) min = M[i][0]; if (M[i][0] > max) max = M[i][0]; }
var v0 = lo, v1 = hi, W = 600, aggs = [], pending = false, renders = 0;
var TOP = [], LH = [], H = AXIS_H;
for (i = 0; i < LN.length; i++) { TOP.push(H); LH.push(LN[i][3] > 1 ? 12 + LN[i][3] * 9 : LANE_H); H += LH[i]; }
H += 2;

function esc(s) { return String(s).replace(/[&<>"']/g, function (c) { return "&#" + c.charCodeAt(0) + ";"; }); }
function iso(rel) { var d = new Date(T0 + rel); return isFinite(d.getTime()) ? d.toISOString() : String(T0 + rel); }
function clock(rel, step) { var s = iso(rel); if (s.length < 20) return s; if (step >= DAY) return s.slice(0, 10); if (step >= MIN) return s.slice(11, 16); if (step >= SEC) return s.slice(11, 19); return s.slice(11, 23); }
function dur(ms) {
  if (ms < SEC) return Math.round(ms) + " ms";
  if (ms < MIN) return (ms / SEC).toFixed(ms < 10 * SEC ? 2 : 1) + " s";
  var s = Math.round(ms / SEC), d = Math.floor(s / 86400), h = Math.floor(s % 86400 / 3600), m = Math.floor(s % 3600 / 60), r = s % 60;
  return (d ? d + " d " : "") + (d || h ? h + " h " : "") + (d || h || m ? m + " min " : "") + r + " s";
}
function lines(list, claim) { var out = []; for (var k = 0; k < list.length; k++) { var n = list[k]; out.push(n < 0 ? claim + ": " + S[-n - 1] : S[n]); } return out.join("\n"); }
function laneLabel(l) { return LN[l] ? LN[l][1] : "?"; }
function trunc(s, n) { return s.length > n ? s.slice(0, n - 1) + "\u2026" : s; }

function describe(key) {
  var kind = key.charAt(0), n = +key.slice(1), x, t = [];
  if (kind === "b") {
    x = B[n];
    t.push(x[0]);
    t.push(S[x[5]] + " -> " + S[x[6]] + " (" + S[x[7]] + "), " + S[x[8]] + " pass, on " + laneLabel(x[1]));
    t.push("outcome: " + O[x[4]] + (x[9] ? "   session: " + x[9] : ""));
    t.push(iso(x[2]) + " -> " + iso(x[3]) + " (" + dur(x[3] - x[2]) + ")");
    var e = lines(x[10], x[0]); if (e) t.push("", e);
  } else if (kind === "c") {
    x = C[n];
    t.push(S[x[0]] + " cooling (" + S[x[6]] + " scope): " + S[x[4]] + ", strike " + x[5]);
    t.push(iso(x[2]) + " -> " + iso(x[3]) + " (" + dur(x[3] - x[2]) + ")");
    var ec = lines(x[7]); if (ec) t.push("", ec);
  } else if (kind === "m") {
    x = M[n];
    t.push(S[x[2]] + (S[x[3]] ? ": " + S[x[3]] : "") + " on " + laneLabel(x[1]));
    t.push(iso(x[0]));
    var em = lines(x[4]); if (em) t.push("", em);
  } else if (kind === "a") {
    x = aggs[n];
    if (!x) return "";
    var what = x.t === "bars" ? "claims" : x.t === "cools" ? "cooldowns" : "marks";
    t.push(x.n + " " + what + " on " + laneLabel(x.lane) + " between " + iso(x.from) + " and " + iso(x.to));
    if (x.counts) t.push(x.counts);
    t.push("Zoom in to see each one.");
  }
  return t.join("\n");
}

function ticks(step) {
  var out = [], first = Math.ceil((T0 + v0) / step) * step - T0;
  for (var t = first; t <= v1 && out.length < 200; t += step) out.push(t);
  return out;
}
function pickStep(range) {
  var want = range / Math.max(2, Math.floor(W / 120));
  for (var k = 0; k < STEPS.length; k++) if (STEPS[k] >= want) return STEPS[k];
  return STEPS[STEPS.length - 1];
}

/** Per-pixel-column counts per lane and category for [start, end] spans (diff arrays), as runs of equal columns. */
function aggregate(type, items, nCat, startOf, endOf, laneOf, catOf, names, h, cls, yOf, hOf) {
  var nl = LN.length, stride = W + 1, diff = new Int32Array(nl * nCat * stride), k = W / (v1 - v0), x, c0, c1;
  for (var q = 0; q < items.length; q++) {
    var it = items[q], s = startOf(it), e = endOf(it), ls = laneOf(it), cat = catOf(it);
    c0 = Math.floor((s - v0) * k); c1 = Math.floor((e - v0) * k);
    if (c0 < 0) c0 = 0; if (c1 > W - 1) c1 = W - 1; if (c0 > W - 1) c0 = W - 1; if (c1 < c0) c1 = c0;
    for (var r = 0; r < ls.length; r++) { var base = (ls[r] * nCat + cat) * stride; diff[base + c0]++; diff[base + c1 + 1]--; }
  }
  for (var l = 0; l < nl; l++) {
    var acc = new Int32Array(nCat), prev = null, runStart = 0;
    var flush = function (end) {
      if (prev === null) return;
      var total = 0, best = 0, parts = [];
      for (var z = 0; z < nCat; z++) { total += prev[z]; if (prev[z] > prev[best]) best = z; if (prev[z]) parts.push(names[z] + " " + prev[z]); }
      if (total === 0) return;
      var id = aggs.length;
      aggs.push({ t: type, lane: l, n: total, counts: parts.join(" \u00b7 "), from: v0 + runStart / k, to: v0 + end / k });
      h.push('<rect class="' + cls(best) + '" tabindex="0" data-i="a' + id + '" data-lane="' + esc(LN[l][0]) + '" data-n="' + total + '" data-counts="' + esc(parts.join(",")) + '" x="' + runStart + '" y="' + yOf(l) + '" width="' + (end - runStart) + '" height="' + hOf(l) + '"/>');
    };
    for (x = 0; x < W; x++) {
      var same = prev !== null;
      for (var z = 0; z < nCat; z++) { acc[z] += diff[(l * nCat + z) * stride + x]; if (same && acc[z] !== prev[z]) same = false; }
      if (!same) { flush(x); prev = Int32Array.from(acc); runStart = x; }
    }
    flush(W);
  }
}

function render() {
  pending = false;
  var activeKey = null, a = document.activeElement;
  if (a && a.getAttribute && chart.contains(a)) activeKey = a.getAttribute("data-i");
  W = Math.max(240, Math.floor(wrap.clientWidth - LABEL_W - RIGHT));
  var k = W / (v1 - v0), h = [], l, x0, x1, y;
  function X(t) { var x = (t - v0) * k; return x < -2 ? -2 : x > W + 2 ? W + 2 : x; }
  function laneY(l) { return TOP[l]; }
  aggs = [];
  for (l = 0; l < LN.length; l++) {
    y = laneY(l);
    h.push('<rect class="lane lane-' + esc(LN[l][2]) + (l % 2 ? " odd" : "") + '" data-lane="' + esc(LN[l][0]) + '" x="0" y="' + y + '" width="' + (LABEL_W + W + RIGHT) + '" height="' + LH[l] + '"/>');
    h.push('<text class="lane-label" data-lane="' + esc(LN[l][0]) + '" x="8" y="' + (y + LH[l] / 2 + 4) + '">' + esc(trunc(LN[l][1], 30)) + "<title>" + esc(LN[l][1]) + "</title></text>");
  }
  var step = pickStep(v1 - v0), ts = ticks(step);
  h.push('<g id="axis" transform="translate(' + LABEL_W + ',0)">');
  for (var q = 0; q < ts.length; q++) {
    var tx = X(ts[q]).toFixed(1);
    h.push('<line class="tick" x1="' + tx + '" x2="' + tx + '" y1="' + (AXIS_H - 6) + '" y2="' + H + '"/>');
    h.push('<text class="tick-label" x="' + tx + '" y="' + (AXIS_H - 10) + '" text-anchor="middle">' + esc(clock(ts[q], step)) + "</text>");
  }
  h.push("</g>");
  h.push('<defs><clipPath id="plotclip"><rect x="0" y="0" width="' + W + '" height="' + H + '"/></clipPath></defs>');
  h.push('<g id="plot" transform="translate(' + LABEL_W + ',0)" clip-path="url(#plotclip)">');
  // cooldowns
  var vc = [], rects = 0;
  for (i = 0; i < C.length; i++) if (C[i][3] >= v0 && C[i][2] <= v1) { vc.push(i); rects += C[i][1].length; }
  if (rects > AGG_COOLS) {
    aggregate("cools", vc, 1, function (i) { return C[i][2]; }, function (i) { return C[i][3]; }, function (i) { return C[i][1]; }, function () { return 0; }, ["cooldowns"], h, function () { return "coolagg"; }, function (l) { return laneY(l) + 1; }, function (l) { return LH[l] - 2; });
  } else {
    for (q = 0; q < vc.length; q++) {
      i = vc[q]; var c = C[i]; x0 = X(c[2]); x1 = Math.max(X(c[3]), x0 + 1);
      for (j = 0; j < c[1].length; j++) {
        l = c[1][j];
        h.push('<rect class="cool" tabindex="0" data-i="c' + i + '" data-model="' + esc(S[c[0]]) + '" data-reason="' + esc(S[c[4]]) + '" data-lane="' + esc(LN[l][0]) + '" x="' + x0.toFixed(1) + '" y="' + (laneY(l) + 1) + '" width="' + (x1 - x0).toFixed(1) + '" height="' + (LH[l] - 2) + '"/>');
      }
    }
  }
  // bars
  var vb = [];
  for (i = 0; i < B.length; i++) if (B[i][3] >= v0 && B[i][2] <= v1) vb.push(i);
  var agg = vb.length > AGG_BARS;
  if (agg) {
    aggregate("bars", vb, O.length, function (i) { return B[i][2]; }, function (i) { return B[i][3]; }, function (i) { return [B[i][1]]; }, function (i) { return B[i][4]; }, O, h, function (best) { return "agg outcome-" + O[best]; }, function (l) { return laneY(l) + 6; }, function (l) { return LH[l] - 12; });
  } else {
    for (q = 0; q < vb.length; q++) {
      i = vb[q]; var b = B[i], pass = S[b[8]], oc = O[b[4]];
      x0 = X(b[2]); x1 = Math.max(X(b[3]), x0 + 2);
      var rows = LN[b[1]][3] || 1, rowH = (LH[b[1]] - 12) / rows;
      h.push('<rect class="bar outcome-' + esc(oc) + (pass === "second" || pass === "overflow" ? " pass-" + pass : "") + '" tabindex="0" data-i="b' + i + '" data-claim="' + esc(b[0]) + '" data-lane="' + esc(LN[b[1]][0]) + '" data-outcome="' + esc(oc) + '" data-pass="' + esc(pass) + '" x="' + x0.toFixed(1) + '" y="' + (laneY(b[1]) + 6 + b[11] * rowH).toFixed(1) + '" width="' + (x1 - x0).toFixed(1) + '" height="' + (rows > 1 ? rowH - 1.5 : rowH).toFixed(1) + '" rx="2"/>');
    }
  }
  // marks
  var vm = [];
  for (i = 0; i < M.length; i++) if (M[i][0] >= v0 && M[i][0] <= v1) vm.push(i);
  if (vm.length > AGG_MARKS) {
    var kinds = [], kindIx = {};
    for (q = 0; q < vm.length; q++) { var kn = S[M[vm[q]][2]]; if (!(kn in kindIx)) { kindIx[kn] = kinds.length; kinds.push(kn); } }
    aggregate("marks", vm, kinds.length, function (i) { return M[i][0]; }, function (i) { return M[i][0]; }, function (i) { return [M[i][1]]; }, function (i) { return kindIx[S[M[i][2]]]; }, kinds, h, function () { return "markagg"; }, function (l) { return laneY(l) + 1; }, function () { return 7; });
  } else {
    var labelEnd = [];
    for (q = 0; q < vm.length; q++) {
      i = vm[q]; var m = M[i], mk = S[m[2]], mx = X(m[0]), my = laneY(m[1]) + 2;
      h.push('<path class="mark mark-' + esc(mk) + '" tabindex="0" data-i="m' + i + '" data-kind="' + esc(mk) + '" data-lane="' + esc(LN[m[1]][0]) + '" d="M' + mx.toFixed(1) + "," + my + "l5,6l-5,6l-5,-6z" + '"/>');
      if (vm.length <= LABEL_MARKS && S[m[3]] && !(labelEnd[m[1]] > mx)) {
        var lt = trunc(S[m[3]], 24);
        h.push('<text class="mark-label" x="' + (mx + 7).toFixed(1) + '" y="' + (my + 10) + '">' + esc(lt) + "</text>");
        labelEnd[m[1]] = mx + 12 + lt.length * 6.2;
      }
    }
  }
  h.push("</g>");
  if (LN.length === 0) h.push('<text class="tick-label" x="' + (LABEL_W + 8) + '" y="' + (AXIS_H + 18) + '">Nothing was routed in this trace.</text>');
  chart.setAttribute("width", String(LABEL_W + W + RIGHT));
  chart.setAttribute("height", String(Math.max(H, AXIS_H + 30)));
  chart.innerHTML = h.join("");
  rangeEl.textContent = iso(v0) + " \u2013 " + iso(v1) + " (" + dur(v1 - v0) + ") \u00b7 " + vb.length + " of " + B.length + " claims in view" + (agg ? ", aggregated per pixel: zoom in to see each claim" : "");
  document.body.setAttribute("data-mode", agg ? "agg" : "bars");
  document.body.setAttribute("data-renders", String(++renders));
  if (activeKey && activeKey.charAt(0) !== "a") {
    var again = chart.querySelector('[data-i="' + activeKey + '"]');
    if (again) again.focus({ preventScroll: true });
  }
}

function schedule() { if (!pending) { pending = true; requestAnimationFrame(render); } }
function clampView() {
  var r = v1 - v0, all = max - min;
  if (r >= all) { v0 = min; v1 = max; return; }
  if (v0 < min) { v0 = min; v1 = min + r; }
  if (v1 > max) { v1 = max; v0 = max - r; }
}
function zoom(factor, frac) {
  var r = v1 - v0, nr = Math.max(MIN_RANGE, r * factor), at = v0 + frac * r;
  v0 = at - frac * nr; v1 = v0 + nr; clampView();
}
function pan(dt) { v0 += dt; v1 += dt; clampView(); }
function reset() { v0 = lo; v1 = hi; }

function place(x, y) {
  var w = tip.offsetWidth, hh = tip.offsetHeight, left = Math.min(x + 14, window.innerWidth - w - 8), top = y + 16;
  if (top + hh > window.innerHeight - 4) top = Math.max(4, y - hh - 12);
  tip.style.left = Math.max(4, left) + "px"; tip.style.top = top + "px";
}
function show(el, x, y) {
  var text = describe(el.getAttribute("data-i"));
  if (!text) { hide(); return; }
  tip.textContent = text; tip.hidden = false; place(x, y);
}
function hide() { tip.hidden = true; }
function target(e) { var t = e.target; return t && t.closest ? t.closest("[data-i]") : null; }

chart.addEventListener("mouseover", function (e) { var el = target(e); if (el) show(el, e.clientX, e.clientY); else hide(); });
chart.addEventListener("mousemove", function (e) { if (!tip.hidden && target(e)) place(e.clientX, e.clientY); });
chart.addEventListener("mouseleave", hide);
chart.addEventListener("focusin", function (e) {
  var el = target(e); if (!el) return;
  el.setAttribute("aria-describedby", "tip");
  var r = el.getBoundingClientRect(); show(el, r.left + Math.min(r.width, 40) / 2, r.bottom);
});
chart.addEventListener("focusout", hide);
chart.addEventListener("wheel", function (e) {
  e.preventDefault();
  var r = chart.getBoundingClientRect(), frac = Math.min(1, Math.max(0, (e.clientX - r.left - LABEL_W) / W));
  var dy = e.deltaMode === 1 ? e.deltaY * 30 : e.deltaY, dx = e.deltaMode === 1 ? e.deltaX * 30 : e.deltaX;
  if (Math.abs(dx) > Math.abs(dy) || e.shiftKey) pan(((Math.abs(dx) > Math.abs(dy) ? dx : dy) / W) * (v1 - v0));
  else zoom(Math.pow(1.0015, dy), frac);
  hide(); schedule();
}, { passive: false });
document.getElementById("zoom-in").addEventListener("click", function () { zoom(0.5, 0.5); render(); });
document.getElementById("zoom-out").addEventListener("click", function () { zoom(2, 0.5); render(); });
document.getElementById("zoom-reset").addEventListener("click", function () { reset(); render(); });
document.addEventListener("keydown", function (e) {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  var key = e.key;
  if (key === "+" || key === "=") zoom(0.5, 0.5);
  else if (key === "-" || key === "_") zoom(2, 0.5);
  else if (key === "0") reset();
  else if (key === "ArrowLeft") pan(-0.1 * (v1 - v0));
  else if (key === "ArrowRight") pan(0.1 * (v1 - v0));
  else if (key === "Escape") { hide(); return; }
  else return;
  e.preventDefault(); hide(); render();
});
window.addEventListener("resize", schedule);
render();
document.body.dataset.readyMs = String(Math.round(performance.now()));
document.body.dataset.ready = "1";
})();`

/** The legend's swatches: their own classes (`sw-…`), so that `.bar`, `.cool`, `.mark` and `.agg` select only drawn items. */
const legendHtml = (): string => {
  const item = (cls: string, text: string): string => `<li><span class="sw ${cls}"></span>${escapeMarkup(text)}</li>`
  return [
    ...BAR_OUTCOMES.map((o) => item(`sw-o-${o}`, o)),
    item("sw-pass-second", "second pass"),
    item("sw-pass-overflow", "overflow pass"),
    item("sw-cool", "cooldown"),
    item("sw-agg", "aggregate (zoom in)"),
    ...MARK_KINDS.map((k) => item(`sw-mark sw-m-${k}`, k))
  ].join("")
}

/** The legend's colours, from the same tables as the drawing's. */
const legendCss = (): string =>
  [...BAR_OUTCOMES.map((o) => `.sw-o-${o}{background:${OUTCOME_COLOURS[o]}}`), ...MARK_KINDS.map((k) => `.sw-m-${k}{background:${MARK_COLOURS[k]}}`)].join("")

/** The self-contained page of a Timeline: open it from disk, nothing is fetched. */
export const timelineHtml = (t: Timeline): string => {
  const title = escapeMarkup(t.title)
  const summary = escapeMarkup(
    `${t.lines} trace lines · ${t.decisions} decisions · ${t.bars.length} claims · ${t.cools.length} cooldowns · ${t.marks.length} marks · ${iso(t.start)} – ${iso(t.end)}`
  )
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ocpool timeline: ${title}</title>
<style>
${PAGE_CSS}${sharedCss()}${legendCss()}
</style>
</head>
<body>
<header>
<h1>${title}</h1>
<p id="summary">${summary}</p>
<div id="controls" role="toolbar" aria-label="Zoom">
<button type="button" id="zoom-out" aria-label="Zoom out" title="Zoom out (-)">\u2212</button>
<button type="button" id="zoom-reset" aria-label="Reset zoom" title="Whole trace (0)">Reset</button>
<button type="button" id="zoom-in" aria-label="Zoom in" title="Zoom in (+)">+</button>
<p id="range" aria-live="polite"></p>
</div>
<ul id="legend">${legendHtml()}</ul>
</header>
<main id="wrap"><svg id="chart" xmlns="http://www.w3.org/2000/svg" tabindex="-1" role="group" aria-label="Timeline of ${title}"></svg>
<noscript><p class="empty">This timeline is drawn by its inline script; the static picture is <code>ocpool replay TRACE --timeline FILE.svg</code>.</p></noscript></main>
<div id="tip" role="tooltip" hidden></div>
<footer>Hover or focus (<kbd>Tab</kbd>) a bar, a cooldown or a mark for its explanation. Zoom: wheel, buttons, <kbd>+</kbd> <kbd>-</kbd> <kbd>0</kbd>; pan: <kbd>\u2190</kbd> <kbd>\u2192</kbd>, shift+wheel.</footer>
<script type="application/json" id="data">${scriptJson(timelineData(t))}</script>
<script>${PAGE_JS}</script>
</body>
</html>
`
}

// ---------------------------------------------------------------------------------------------------
// The static SVG

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

/** Per pixel column counts of spans per lane and category, as runs of equal columns (what both drawings aggregate). */
const columnRuns = <A>(
  items: ReadonlyArray<A>,
  lanes: number,
  cats: number,
  width: number,
  col: (ms: number) => number,
  span: (a: A) => readonly [number, number],
  laneOf: (a: A) => ReadonlyArray<number>,
  catOf: (a: A) => number
): Array<{ lane: number; from: number; to: number; counts: ReadonlyArray<number> }> => {
  const stride = width + 1
  const diff = new Int32Array(lanes * cats * stride)
  for (const a of items) {
    const [s, e] = span(a)
    const c0 = Math.min(width - 1, Math.max(0, Math.floor(col(s))))
    const c1 = Math.max(c0, Math.min(width - 1, Math.floor(col(e))))
    const cat = catOf(a)
    for (const l of laneOf(a)) {
      const base = (l * cats + cat) * stride
      diff[base + c0]!++
      diff[base + c1 + 1]!--
    }
  }
  const runs: Array<{ lane: number; from: number; to: number; counts: ReadonlyArray<number> }> = []
  for (let l = 0; l < lanes; l++) {
    const acc = new Array<number>(cats).fill(0)
    let prev: Array<number> | undefined
    let from = 0
    const flush = (to: number): void => {
      if (prev !== undefined && prev.some((x) => x > 0)) runs.push({ lane: l, from, to, counts: prev })
    }
    for (let x = 0; x < width; x++) {
      let same = prev !== undefined
      for (let z = 0; z < cats; z++) {
        acc[z]! += diff[(l * cats + z) * stride + x]!
        if (same && acc[z] !== prev![z]) same = false
      }
      if (!same) {
        flush(x)
        prev = [...acc]
        from = x
      }
    }
    flush(width)
  }
  return runs
}

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
    for (const r of columnRuns(t.cools, lanes.length, 1, plotW, col, (c) => [c.start, c.end] as const, (c) => c.lanes.map(laneOf), () => 0))
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
    for (const r of columnRuns(t.bars, lanes.length, BAR_OUTCOMES.length, plotW, col, (b) => [b.start, b.end] as const, (b) => [laneOf(b.lane)], outcomeOf)) {
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
    for (const r of columnRuns(t.marks, lanes.length, 1, plotW, col, (m) => [m.at, m.at] as const, (m) => [laneOf(m.lane)], () => 0))
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
