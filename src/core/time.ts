/** How instants are written in logs, trace lines and warnings: one formatter for each shape. Pure. */
import { DAY_MS } from "./constants.js"

/** An instant in full (ISO 8601, UTC). */
export const isoTime = (ms: number): string => new Date(ms).toISOString()

/** The time of day of an instant, `HH:MMZ`. */
export const clockTime = (ms: number): string => `${isoTime(ms).slice(11, 16)}Z`

/** The time of day, with the date when it is a day or more after `now`. */
export const clockTimeFrom = (ms: number, now: number): string =>
  ms - now >= DAY_MS ? `${isoTime(ms).slice(0, 10)} ${clockTime(ms)}` : clockTime(ms)
