/**
 * The one home of time as text (issue 34): every instant (ISO, clock times, axis labels) and every
 * duration the project writes, in logs, trace lines, warnings, views and the timeline page (whose
 * browser script bundles this module). Where two places write a duration differently (rounded up for
 * a countdown, down for an age, spoken words for a person), each form is its own function here, and
 * no caller formats time by hand. Pure.
 */
import { DAY_MS } from "./constants.js"

const SECOND_MS = 1000
const MINUTE_MS = 60 * SECOND_MS

const two = (n: number): string => String(n).padStart(2, "0")

// ---------------------------------------------------------------------------------------------------
// instants

/** An instant in full (ISO 8601, UTC). Throws on a time no date can show: callers pass dates. */
export const isoTime = (ms: number): string => new Date(ms).toISOString()

/** An instant in full, or the number itself when no date can show it. */
export const isoTimeOr = (ms: number): string => {
  const d = new Date(ms)
  return Number.isFinite(d.getTime()) ? d.toISOString() : String(ms)
}

/** The time of day of an instant, `HH:MMZ`. */
export const clockTime = (ms: number): string => `${isoTime(ms).slice(11, 16)}Z`

/** The time of day, with the date when it is a day or more after `now`. */
export const clockTimeFrom = (ms: number, now: number): string =>
  ms - now >= DAY_MS ? `${isoTime(ms).slice(0, 10)} ${clockTime(ms)}` : clockTime(ms)

/** The time of day to the second, `HH:MM:SS` (no zone letter: callers add `Z` where they write one). */
export const clockSeconds = (ms: number): string => isoTime(ms).slice(11, 19)

/**
 * An axis label for a tick every `step` ms: the date (`YYYY-MM-DD`) for steps of a day or more, else
 * `HH:MM`, `HH:MM:SS` or `HH:MM:SS.mmm`; the number itself when no date can show it (the page's axis
 * and the static SVG's).
 */
export const tickLabel = (ms: number, step: number): string => {
  const s = isoTimeOr(ms)
  if (s.length < 20) return s
  return step >= DAY_MS ? s.slice(0, 10) : step >= MINUTE_MS ? s.slice(11, 16) : step >= SECOND_MS ? s.slice(11, 19) : s.slice(11, 23)
}

// ---------------------------------------------------------------------------------------------------
// durations, compact (`4m10s`)

/** Whole seconds compact: `12s`, `4m10s`, `2h05m`. */
const compact = (s: number): string => {
  if (s >= 3600) return `${Math.floor(s / 3600)}h${two(Math.floor((s % 3600) / 60))}m`
  if (s >= 60) return `${Math.floor(s / 60)}m${two(s % 60)}s`
  return `${s}s`
}

/** A duration for people: `850ms`, `42s`, `3m05s`, `2h10m` (whole seconds rounded down; negative or NaN: `0s`). */
export const formatDuration = (ms: number): string => {
  if (!(ms >= 0)) return "0s"
  if (ms < SECOND_MS) return `${Math.round(ms)}ms`
  return compact(Math.floor(ms / SECOND_MS))
}

/** Time left, rounded up to the second: `2h05m`, `4m10s`, `12s` (`0s` once passed). */
export const remaining = (ms: number): string => compact(Math.max(0, Math.ceil(ms / SECOND_MS)))

/** The ms until `remaining(ms - elapsed)` reads differently (each second, each minute past an hour); undefined once it reads `0s`. */
export const remainingChangesIn = (ms: number): number | undefined => {
  if (!(ms > 0) || !Number.isFinite(ms)) return undefined
  const s = Math.ceil(ms / SECOND_MS)
  const next = s >= 3600 ? 60 * Math.floor(s / 60) - 1 : s - 1
  return ms - next * SECOND_MS
}

/** Time taken, to the nearest second: `42s`, `3m05s`, `1h02m`. */
export const elapsed = (ms: number): string => compact(Math.max(0, Math.round(ms / SECOND_MS)))

/** `42s`, `3m05s`, `2h10m`, `3d04h`: how long ago, rounded down (a time in the future reads as 0s). */
export const ageText = (ms: number): string => {
  const s = Math.max(0, Math.floor(ms / SECOND_MS))
  if (s < 60) return `${s}s`
  const m = Math.floor(s / 60)
  if (m < 60) return `${m}m${two(s % 60)}s`
  const h = Math.floor(m / 60)
  if (h < 24) return `${h}h${two(m % 60)}m`
  return `${Math.floor(h / 24)}d${two(h % 24)}h`
}

/** How long something has run, coarse, rounded down: `42s`, `3m`, `2h05m`. */
export const uptime = (ms: number): string => {
  const s = Math.max(0, Math.floor(ms / SECOND_MS))
  if (s >= 3600) return `${Math.floor(s / 3600)}h${two(Math.floor((s % 3600) / 60))}m`
  if (s >= 60) return `${Math.floor(s / 60)}m`
  return `${s}s`
}

/** Whole seconds, rounded: `42s`, `90s` (log lines). */
export const wholeSeconds = (ms: number): string => `${Math.round(ms / SECOND_MS)}s`

/** Seconds to a tenth: `1.2s`, `30s` (the `--explain` sentences). */
export const tenthSeconds = (ms: number): string => `${Math.round(ms / 100) / 10}s`

/** Whole minutes when it is some, else rounded seconds: `10m`, `90s` (settings in a log line). */
export const minutesOrSeconds = (ms: number): string => (ms % MINUTE_MS === 0 ? `${ms / MINUTE_MS}m` : wholeSeconds(ms))

// ---------------------------------------------------------------------------------------------------
// durations, spoken (`1 min 5 s`)

/** `42 s`, `1 min 5 s`, `850 ms`: how long, for a person (seconds rounded; negative or NaN: `0 s`). */
export const spokenDuration = (ms: number): string => {
  if (!Number.isFinite(ms) || ms < 0) return "0 s"
  if (ms < SECOND_MS) return `${Math.round(ms)} ms`
  const s = Math.round(ms / SECOND_MS)
  if (s < 60) return `${s} s`
  const m = Math.floor(s / 60)
  return s % 60 === 0 ? `${m} min` : `${m} min ${s % 60} s`
}

/**
 * A span on the timeline page: `850 ms`, `1.25 s`, `12.5 s`, then whole seconds spelled out with every
 * larger unit from the first one present (`2 min 0 s`, `1 h 0 min 5 s`, `3 d 0 h 0 min 0 s`).
 */
export const spanText = (ms: number): string => {
  if (ms < SECOND_MS) return `${Math.round(ms)} ms`
  if (ms < MINUTE_MS) return `${(ms / SECOND_MS).toFixed(ms < 10 * SECOND_MS ? 2 : 1)} s`
  const s = Math.round(ms / SECOND_MS)
  const d = Math.floor(s / 86400)
  const h = Math.floor((s % 86400) / 3600)
  const m = Math.floor((s % 3600) / 60)
  return `${d ? `${d} d ` : ""}${d || h ? `${h} h ` : ""}${d || h || m ? `${m} min ` : ""}${s % 60} s`
}
