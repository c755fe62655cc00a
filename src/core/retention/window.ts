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
