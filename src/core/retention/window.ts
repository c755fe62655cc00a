/** The time windows of the retention sweeps (SPEC §11.2–§11.4): cutoffs and the era clamp. */
import { DAY_MS, HOUR_MS, ID_ERA_MS } from "../constants.js"

export interface EventWindow {
  /** Decoded times strictly before this are old enough. */
  readonly cutoff: number
  /** True when `days` asked for more than one id era and was clamped. */
  readonly clamped: boolean
  /** The days actually used: `days`, or the era length in days when clamped. */
  readonly effectiveDays: number
}

export const ERA_DAYS = ID_ERA_MS / DAY_MS

/**
 * The largest `--days` and `--grace-hours` (about 273 790 years): beyond them now − window falls
 * before the earliest date a Date can hold (−8.64e15 ms), and no cutoff could be written down.
 */
export const MAX_DAYS = 100_000_000
export const MAX_GRACE_HOURS = MAX_DAYS * 24

/** The range of a Date: ±8.64e15 ms around the epoch. */
export const isValidTime = (ms: number): boolean => Number.isFinite(ms) && Math.abs(ms) <= 8.64e15

/** Why these flags give no valid cutoff at `now` (a clock far outside the Date range), or undefined when they do. */
export const windowProblem = (now: number, days: number, graceHours: number): string | undefined => {
  const session = sessionWindow(now, days, graceHours)
  const events = eventWindow(now, days)
  if (!isValidTime(now)) return `the clock reads ${now}, outside the dates a cutoff can name`
  if (!isValidTime(session.cutoffCreated) || !isValidTime(events.cutoff)) return `--days ${days} puts the cutoff outside the dates a cutoff can name`
  if (!isValidTime(session.cutoffUpdated)) return `--grace-hours ${graceHours} puts the cutoff outside the dates a cutoff can name`
  return undefined
}
export const CLAMP_WARNING = `window clamped to the id era (${ERA_DAYS.toFixed(2)} days)`

/** cutoff = now − min(days × 86 400 000, ID_ERA_MS). A clamped cutoff precedes every decoded time, so nothing goes. */
export const eventWindow = (now: number, days: number): EventWindow => {
  const windowMs = days * DAY_MS
  const clamped = windowMs > ID_ERA_MS
  return { cutoff: now - (clamped ? ID_ERA_MS : windowMs), clamped, effectiveDays: clamped ? ERA_DAYS : days }
}

export interface SessionWindow {
  /** A root created before this is old enough. */
  readonly cutoffCreated: number
  /** Every session of a tree must be updated before this. */
  readonly cutoffUpdated: number
}

/** Sessions updated at or after this are inside the grace window. */
export const graceCutoff = (now: number, graceHours: number): number => now - graceHours * HOUR_MS

export const sessionWindow = (now: number, days: number, graceHours: number): SessionWindow => ({
  cutoffCreated: now - days * DAY_MS,
  cutoffUpdated: graceCutoff(now, graceHours)
})
