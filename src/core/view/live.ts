/**
 * The live view of the pool (issue 24): `ocpool status --watch` (`ocpool top`) draws `liveFrame` of
 * each status snapshot, and `pool_status` ends with `compactView` of the same snapshot, so the person
 * and the agent see one picture. Pure: a `StatusView`, `now` and a terminal size give lines; nothing
 * here reads the terminal, the clock or the environment (`NO_COLOR` is the caller's `color: false`).
 *
 * Every text from files (models, sessions, hosts, budgets, warnings, decisions) goes through `clean`
 * (`printable`, the project's one filter, with flags made `?` for their uncertain width) before it is
 * placed, and every line is cut to the terminal's width by `fit`, which counts wide characters as 2
 * and colour codes as 0.
 */
import { STATED_RESET_MAX_MS } from "../constants.js"
import type { CoolReason } from "../pool/cooldown.js"
import { budgetLines, type BudgetJson } from "../permits/view.js"
import { printable } from "../printable.js"
import { fleetSection, plural, type QuotaFiguresJson, type SlotStatus, type StatusView } from "../status.js"
import { clockTime, remaining, remainingChangesIn } from "../time.js"
import { fit, padTo, RESET, visibleWidth } from "./width.js"

export { fit, visibleWidth } from "./width.js"

/** The terminal a frame is drawn for. */
export interface LiveSize {
  readonly cols: number
  readonly rows: number
  /** Colour codes allowed (a terminal and no `NO_COLOR`: the caller decides). */
  readonly color: boolean
}

/** What the person did: the scroll offset, the help screen, and what else the shell shows. */
export interface LiveUi {
  readonly scroll: number
  readonly help: boolean
  /** The last decisions of a recorded trace, most recent last (shown when given). */
  readonly decisions?: ReadonlyArray<string>
  /** The header's first word; `ocpool` when absent. */
  readonly title?: string
}

/** A full-screen frame: exactly `rows` lines, and how far the body can scroll. */
export interface LiveFrame {
  readonly lines: ReadonlyArray<string>
  readonly maxScroll: number
}

// regional indicators (flags: one or two cells, the terminal's guess); `printable` already took out the
// format characters, variation selectors and skin-tone modifiers, and made lone surrogates `?`
const ODD = /[\u{1f1e6}-\u{1f1ff}]/gu

/** Text from a file as the view places it: printable (the project's one filter) and of a known width. */
const clean = (s: string): string => printable(String(s)).replace(ODD, "?")

// ---------------------------------------------------------------------------------------------
// colour and shapes

type Paint = (code: string, text: string) => string
const GREEN = "32"
const YELLOW = "33"
const RED = "31"
const BOLD = "1"
const DIM = "2"
const INVERSE = "7"

const painter = (color: boolean): Paint => (color ? (code, text) => (text === "" ? "" : `\x1b[${code}m${text}${RESET}`) : (_code, text) => text)

/** A bar's cells for its terminal: 3 on 18 columns, 6 on 40, 13 on 80, at most 20. */
const barWidth = (cols: number): number => Math.max(3, Math.min(20, Math.floor(cols / 6)))

/** Filled cells of `value` against `whole`: none for nothing, all at or past the whole, else at least one and one short. */
const filled = (value: number, whole: number, width: number): number => {
  if (!(value > 0)) return 0
  if (!(whole > 0) || value >= whole) return width
  return Math.min(width - 1, Math.max(1, Math.round((value / whole) * width)))
}

const bar = (value: number, whole: number, width: number, code: string, paint: Paint): string => {
  const n = filled(value, whole, width)
  return `[${paint(code, "█".repeat(n))}${paint(DIM, "░".repeat(width - n))}]`
}

/** A load's colour: green under half the cap, yellow under the cap, red at or past it. */
const loadColour = (load: number, cap: number): string => (cap > 0 && load < cap / 2 ? GREEN : cap > 0 && load < cap ? YELLOW : load > 0 ? RED : GREEN)

/** `42`, `12k`, `1.5M`: counts short enough for a narrow bar label. */
const num = (n: number): string => {
  if (!Number.isFinite(n)) return String(n)
  const a = Math.abs(n)
  if (a < 10_000) return String(Math.round(n))
  if (a < 999_500) return `${Math.round(n / 1000)}k`
  if (a < 999_950_000) return `${(n / 1e6).toFixed(1)}M`
  return `${(n / 1e9).toFixed(1)}G`
}


/** `s` cut to `cols` and padded to it. */
const column = (s: string, cols: number): string => padTo(s, Math.max(1, cols))

const widest = (xs: ReadonlyArray<string>): number => xs.reduce((m, x) => Math.max(m, visibleWidth(x)), 0)

// ---------------------------------------------------------------------------------------------
// sections

/** The slots in slot order (a stable sort: equal numbers keep the view's order). */
const slotsInOrder = (view: StatusView): ReadonlyArray<SlotStatus> => [...view.slots].sort((a, b) => a.slot - b.slot)

interface Cooling {
  readonly model: string
  readonly cooling: NonNullable<SlotStatus["cooling"]>
}

/** Every cooling model once, in slot order. */
const coolingModels = (view: StatusView): ReadonlyArray<Cooling> => {
  const seen = new Set<string>()
  const out: Array<Cooling> = []
  for (const s of slotsInOrder(view)) {
    if (s.cooling === null || seen.has(s.model)) continue
    seen.add(s.model)
    out.push({ model: s.model, cooling: s.cooling })
  }
  return out
}

const slotItems = (view: StatusView, cols: number, paint: Paint): ReadonlyArray<string> => {
  const slots = slotsInOrder(view)
  if (slots.length === 0) return ["  (no slots)"]
  const bw = barWidth(cols)
  const numW = widest(slots.map((s) => String(s.slot)))
  const loads = slots.map((s) => `${num(s.load)}/${num(s.cap)}`)
  const loadW = widest(loads)
  const nextTag = (s: SlotStatus): string => {
    if (view.next?.slot !== s.slot) return ""
    const pass = view.next.pass === "overflow" ? "overflow" : `${view.next.pass} pass`
    return cols >= 60 ? `  <- next (${pass})` : "  <- next"
  }
  const tags = slots.map((s) => `${s.cooling === null ? "" : "  cooling"}${nextTag(s)}`)
  const fixed = 2 + numW + 2 + bw + 2 + 1 + loadW + 2
  const models = slots.map((s) => clean(s.model))
  const modelW = Math.min(widest(models), Math.max(6, cols - fixed - widest(tags)))
  return slots.map((s, i) => {
    const cooling = s.cooling === null ? "" : `  ${paint(coolColour(s.cooling.reason), "cooling")}`
    const next = nextTag(s)
    const model = tags[i] === "" ? fit(models[i]!, modelW) : column(models[i]!, modelW)
    return `  ${String(s.slot).padStart(numW)}. ${bar(s.load, s.cap, bw, loadColour(s.load, s.cap), paint)} ${loads[i]!.padEnd(loadW)}  ${model}${cooling}${paint(BOLD, next)}`
  })
}

/** Red where waiting does not help soon (auth, unavailable, quota, outage), yellow where it does. */
const coolColour = (reason: CoolReason | string): string => (reason === "rate_limit" || reason === "hang" || reason === "quota_low" ? YELLOW : RED)

const coolingItems = (view: StatusView, now: number, cols: number, paint: Paint): ReadonlyArray<string> => {
  const cooling = coolingModels(view)
  const reasons = cooling.map(({ cooling: c }) => (c.reason === "unavailable" || c.reason === "auth" || c.reason === "entitlement" ? clean(c.reason) : `${clean(c.reason)} strike ${num(c.strikes)}`))
  const counts = cooling.map(({ cooling: c }) => remaining(c.until - now))
  const models = cooling.map((c) => clean(c.model))
  const reasonW = widest(reasons)
  const modelW = Math.min(widest(models), Math.max(6, cols - 2 - 2 - reasonW - 2 - widest(counts)))
  return cooling.map(({ cooling: c }, i) => `  ${column(models[i]!, modelW)}  ${paint(coolColour(c.reason), reasons[i]!.padEnd(reasonW))}  ${counts[i]!}`)
}

/** A stated reset as the view counts it down: nothing beyond 7 days (issue 18), `passed`, or `4m10s`. */
const resetText = (f: QuotaFiguresJson, now: number, cols: number): string => {
  if (f.resetAt === null || !(Math.abs(f.resetAt - now) <= STATED_RESET_MAX_MS)) return ""
  const word = cols >= 60 ? "reset " : ""
  return f.resetAt > now ? `  ${word}${remaining(f.resetAt - now)}` : `  ${word}passed`
}

/** Remaining against its limit: red under a tenth, yellow under 30%, else green. */
const leftColour = (left: number, limit: number): string => (!(limit > 0) ? GREEN : left < limit * 0.1 ? RED : left < limit * 0.3 ? YELLOW : GREEN)

const quotaItems = (view: StatusView, now: number, cols: number, paint: Paint): ReadonlyArray<string> => {
  const entries = view.quota ?? []
  const bw = barWidth(cols)
  const rows = entries.flatMap((q) => {
    const dims: ReadonlyArray<readonly [string, QuotaFiguresJson]> = [
      ...(q.requests === null ? [] : [["req", q.requests] as const]),
      ...(q.tokens === null ? [] : [["tok", q.tokens] as const])
    ]
    const model = clean(q.model)
    if (dims.length === 0) return [{ model, text: "no figures" }]
    return dims.map(([name, f], i) => {
      const amount = f.limit === null ? `${num(f.remaining)} left` : `${bar(f.remaining, f.limit, bw, leftColour(f.remaining, f.limit), paint)} ${num(f.remaining)}/${num(f.limit)}`
      return { model: i === 0 ? model : "", text: `${name} ${amount}${resetText(f, now, cols)}` }
    })
  })
  const modelW = Math.min(widest(rows.map((r) => r.model)), Math.max(6, cols - 4 - widest(rows.map((r) => r.text))))
  return rows.map((r) => `  ${column(r.model, modelW)}  ${r.text}`)
}

/** Learned budgets (issue 35): the tightest window's bar, marked learned, with how sure it is and its reset. */
const learnedItems = (view: StatusView, now: number, cols: number, paint: Paint): ReadonlyArray<string> => {
  const entries = view.learned ?? []
  const bw = barWidth(cols)
  const rows = entries.map((e) => ({
    group: clean(e.group),
    text: `req ${bar(e.remaining, e.limit, bw, leftColour(e.remaining, e.limit), paint)} ${num(e.remaining)}/${num(e.limit)} a ${e.window} (learned, ${e.samples === 1 ? "seen once" : `seen ${e.samples} times`})${e.resetAt > now ? `  in ${remaining(e.resetAt - now)}` : ""}`
  }))
  const groupW = Math.min(widest(rows.map((r) => r.group)), Math.max(6, cols - 4 - widest(rows.map((r) => r.text))))
  return rows.map((r) => `  ${column(r.group, groupW)}  ${r.text}`)
}

const busyBudgets = (view: StatusView): ReadonlyArray<BudgetJson> => (view.permits ?? []).filter((b) => b.holders.length > 0 || b.queue.length > 0)

const permitItems = (view: StatusView, now: number, cols: number, paint: Paint): ReadonlyArray<string> =>
  busyBudgets(view).flatMap((b) => {
    const used = b.capacity === null ? `${num(b.used)} used` : `${bar(b.used, b.capacity, barWidth(cols), loadColour(b.used, b.capacity), paint)} ${num(b.used)}/${num(b.capacity)}`
    // the holders and the queue as `ocpool permits` writes them (one rule for the lines)
    return [`  ${clean(b.name)} ${used}  ${b.queue.length} waiting`, ...budgetLines(b, now).slice(1).map((l) => `  ${clean(l)}`)]
  })

const fleetItems = (view: StatusView, now: number): ReadonlyArray<string> =>
  view.fleet === undefined ? [] : fleetSection(view.fleet, now).map((l, i) => (i === 0 ? `  ${clean(l.replace(/^fleet: /, ""))}` : clean(l)))

const fallbackItems = (view: StatusView, now: number): ReadonlyArray<string> =>
  (view.fallbacks ?? []).map((f) => `  ${clean(f.session)}  ${clean(f.original)} -> ${clean(f.active)}  ${remaining(f.until - now)}`)

/** The last decisions shown: the 20 most recent, oldest first. */
const DECISIONS_SHOWN = 20

interface Body {
  readonly lines: ReadonlyArray<string>
  /** The index of each cooling model's line, one per cooling model. */
  readonly cooling: ReadonlyArray<number>
}

const bodyOf = (view: StatusView, now: number, cols: number, paint: Paint, decisions: ReadonlyArray<string> | undefined): Body => {
  const lines: Array<string> = []
  let cooling: ReadonlyArray<number> = []
  const section = (title: string, items: ReadonlyArray<string>): ReadonlyArray<number> => {
    if (items.length === 0) return []
    lines.push(fit(paint(BOLD, title), cols))
    const first = lines.length
    for (const item of items) lines.push(fit(item, cols))
    return items.map((_, i) => first + i)
  }
  section("slots", slotItems(view, cols, paint))
  const coolingLines = coolingItems(view, now, cols, paint)
  cooling = section(`cooling (${coolingLines.length})`, coolingLines)
  section("quota", quotaItems(view, now, cols, paint))
  section("learned budgets", learnedItems(view, now, cols, paint))
  section("heavy-work permits", permitItems(view, now, cols, paint))
  section("fleet", fleetItems(view, now))
  section(`fallbacks (${(view.fallbacks ?? []).length})`, fallbackItems(view, now))
  if (decisions !== undefined) {
    const shown = decisions.slice(-DECISIONS_SHOWN).map((d) => `  ${clean(d)}`)
    section("last decisions", shown.length === 0 ? ["  (none yet)"] : shown)
  }
  section(`warnings (${view.warnings.length})`, view.warnings.map((w) => `  ${paint(YELLOW, clean(w))}`))
  return { lines, cooling }
}

/** The body of the live view, unclipped: every section in its order, each line cut to `cols`. */
export const liveBody = (view: StatusView, now: number, cols: number, color: boolean): ReadonlyArray<string> =>
  bodyOf(view, now, cols, painter(color), undefined).lines

const HELP: ReadonlyArray<readonly [string, string]> = [
  ["q", "quit"],
  ["j, down", "scroll down"],
  ["k, up", "scroll up"],
  ["?", "this help; ? again goes back"]
]

const SHOWN: ReadonlyArray<readonly [string, string]> = [
  ["slots", "each slot's load against its cap; <- next: where the next spawn goes"],
  ["cooling", "each cooling model: reason, strike, time left"],
  ["quota", "remaining/limit of each stated quota, time to its reset"],
  ["learned", "budgets learned from 429s: remaining/limit, how sure, time to the window's end"],
  ["permits", "heavy-work budgets: who holds, who waits"],
  ["fleet", "the hosts sharing the state (PostgreSQL backend)"],
  ["fallbacks", "root sessions on a fallback while their model cools"],
  ["decisions", "the last decisions of a recorded trace"]
]

const helpLines = (cols: number, paint: Paint): ReadonlyArray<string> => {
  const keyW = widest([...HELP, ...SHOWN].map(([k]) => k))
  const rows = (xs: ReadonlyArray<readonly [string, string]>) => xs.map(([k, text]) => fit(`  ${k.padEnd(keyW)}  ${text}`, cols))
  return [fit(paint(BOLD, "keys"), cols), ...rows(HELP), fit(paint(BOLD, "what the view shows"), cols), ...rows(SHOWN)]
}

/** `left` and `right` on one line of `cols` columns, `left` cut first; `right` dropped when there is no room for it. */
const spread = (left: string, right: string, cols: number): string => {
  if (right === "") return fit(left, cols)
  const rw = visibleWidth(right)
  if (cols < rw + 8) return fit(left, cols)
  const l = fit(left, cols - rw - 1)
  return `${l}${" ".repeat(Math.max(1, cols - visibleWidth(l) - rw))}${right}`
}

/** The header's counts: claims in flight, live processes, cooling models (`procs` on a narrow terminal). */
const counts = (view: StatusView, short = false): ReadonlyArray<string> => [
  plural(view.claims, "claim"),
  short ? `${view.processes.length} procs` : plural(view.processes.length, "process", "processes"),
  `${coolingModels(view).length} cooling`
]

/** The header's text: the title and the counts, the title left out and words shortened when they do not fit in `room`. */
const headerText = (view: StatusView, title: string, room: number): string => {
  const full = [title, ...counts(view)].join("  ")
  return visibleWidth(full) <= room ? full : counts(view, true).join("  ")
}

/**
 * A full-screen frame of the live view: exactly `rows` lines, none wider than `cols`. A header
 * (claims, processes, cooling count, clock), the body from `ui.scroll` (clamped to `[0, maxScroll]`)
 * and a footer with the keys. When some cooling model's line is off the screen, the body's last line
 * counts them (`…and 3 more cooling`): every cooling model is shown or counted. `ui.help` shows the
 * keys instead of the body.
 */
export const liveFrame = (view: StatusView, now: number, size: LiveSize, ui: LiveUi): LiveFrame => {
  const rows = Number.isFinite(size.rows) ? Math.max(0, Math.floor(size.rows)) : 0
  const cols = Number.isFinite(size.cols) ? Math.max(0, Math.floor(size.cols)) : 0
  const paint = painter(size.color)
  const body: Body = ui.help ? { lines: helpLines(cols, paint), cooling: [] } : bodyOf(view, now, cols, paint, ui.decisions)
  const bodyRows = Math.max(0, rows - 2)
  const maxScroll = Math.max(0, body.lines.length - bodyRows)
  const scroll = Number.isFinite(ui.scroll) ? Math.min(maxScroll, Math.max(0, Math.floor(ui.scroll))) : 0
  const window = body.lines.slice(scroll, scroll + bodyRows)
  const hidden = (shown: number) => body.cooling.filter((i) => i < scroll || i >= scroll + shown).length
  if (bodyRows > 0 && hidden(bodyRows) > 0) {
    // the body is longer than the screen here, so the window is full: its last line counts what is off it
    window[window.length - 1] = fit(paint(RED, `…and ${hidden(bodyRows - 1)} more cooling`), cols)
  }
  const bar = (text: string) => (size.color ? paint(INVERSE, padTo(text, cols)) : fit(text, cols))
  const clock = clockTime(now)
  const header = bar(spread(headerText(view, clean(ui.title ?? "ocpool"), cols - visibleWidth(clock) - 1), clock, cols))
  const position = maxScroll > 0 ? `${scroll + 1}-${scroll + window.length}/${body.lines.length}` : ""
  const footer = bar(spread(ui.help ? "q quit  j/k scroll  ? back" : "q quit  j/k scroll  ? help", position, cols))
  if (rows === 0) return { lines: [], maxScroll }
  if (rows === 1) return { lines: [header], maxScroll }
  const blank = Array.from({ length: bodyRows - window.length }, () => "")
  return { lines: [header, ...window, ...blank, footer], maxScroll }
}

// ---------------------------------------------------------------------------------------------
// the chat's view

/** At most `max` items; past it, `max - 1` and a line counting the rest. */
const capped = (items: ReadonlyArray<string>, max: number, what: string): ReadonlyArray<string> =>
  items.length <= max ? items : [...items.slice(0, max - 1), `  …and ${items.length - (max - 1)} more ${what}`]

/**
 * The compact view `pool_status` ends with: the live view's slots, cooling and quota, the rest
 * summed up, no colour, at most 20 lines of at most `cols` columns; every cooling model shown or
 * counted.
 */
/** What separates `pool_status`'s text from its compact view. */
export const GLANCE = "\n\nat a glance:"

export const compactView = (view: StatusView, now: number, cols = 72): ReadonlyArray<string> => {
  const paint = painter(false)
  const out: Array<string> = [`opencode-pool: ${counts(view).join(", ")}`]
  out.push(...capped(slotItems(view, cols, paint), 6, "slots"))
  const cooling = coolingItems(view, now, cols, paint)
  if (cooling.length > 0) out.push("cooling", ...capped(cooling, 4, "cooling"))
  const quota = quotaItems(view, now, cols, paint)
  if (quota.length > 0) out.push("quota", ...capped(quota, 2, "quota lines"))
  const learned = view.learned ?? []
  if (learned.length > 0) out.push(`learned: ${learned.map((l) => `${clean(l.group)} ${num(l.remaining)}/${num(l.limit)} a ${l.window}`).join("; ")}`)
  const busy = busyBudgets(view)
  if (busy.length > 0) {
    const budgets = busy.map((b) => `${clean(b.name)} ${num(b.used)}${b.capacity === null ? "" : `/${num(b.capacity)}`} used, ${b.queue.length} waiting`)
    out.push(`permits: ${budgets.join("; ")}`)
  }
  const f = view.fleet
  if (f !== undefined) {
    out.push(f.reachable ? `fleet: ${plural(f.hosts.length, "host")}, ${f.hosts.filter((h) => h.live).length} live` : `fleet: ${clean(f.url)} did not answer; the state directory is shown`)
  }
  const fallbacks = view.fallbacks ?? []
  if (fallbacks.length > 0) {
    out.push(`fallbacks: ${fallbacks.map((x) => `${clean(x.session)} ${clean(x.original)} -> ${clean(x.active)} ${remaining(x.until - now)}`).join("; ")}`)
  }
  if (view.warnings.length > 0) out.push(`warnings: ${view.warnings.length}`)
  return out.map((l) => fit(l, cols))
}

// ---------------------------------------------------------------------------------------------
// countdowns

/**
 * The ms until a countdown the views show would read differently: the nearest cooling end, shown
 * quota reset or fallback end. Undefined when nothing counts down (the shell then redraws only on a
 * change of the state).
 */
export const nextTickIn = (view: StatusView, now: number): number | undefined => {
  const targets: Array<number> = []
  for (const c of coolingModels(view)) targets.push(c.cooling.until)
  for (const q of view.quota ?? []) {
    for (const f of [q.requests, q.tokens]) if (f !== null && f.resetAt !== null && Math.abs(f.resetAt - now) <= STATED_RESET_MAX_MS) targets.push(f.resetAt)
  }
  for (const l of view.learned ?? []) targets.push(l.resetAt)
  for (const f of view.fallbacks ?? []) targets.push(f.until)
  let best: number | undefined
  for (const t of targets) {
    const ms = remainingChangesIn(t - now)
    if (ms !== undefined && (best === undefined || ms < best)) best = ms
  }
  return best
}
