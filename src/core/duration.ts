/**
 * Durations on the command line (`ocpool run --wait 30s --timeout 10m`): a number with a unit, `ms`, `s`,
 * `m` or `h` (`500ms`, `1.5s`, `10m`, `1h`), at most 7 days. Pure: a value in milliseconds or a
 * one-line reason the CLI turns into exit 2. Written back by `formatDuration` (core/time.ts).
 */

/** The longest duration accepted: longer waits and timeouts are mistakes, and stay far from timer overflow. */
export const DURATION_MAX_MS = 7 * 24 * 3_600_000

/** Longer texts are refused before the pattern runs (no duration needs more). */
const TEXT_MAX = 32

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }

const DURATION = /^(\d+(?:\.\d+)?|\.\d+)(ms|s|m|h)$/

/** `text` as milliseconds (rounded to a whole one), or why it is not a duration. */
export const parseDuration = (text: string): number | { readonly error: string } => {
  if (text === "") return { error: "empty: expected a number with a unit (500ms, 30s, 10m, 1h)" }
  const m = text.length <= TEXT_MAX ? DURATION.exec(text) : null
  if (m === null) {
    if (/^-/.test(text)) return { error: "negative: expected a number with a unit (500ms, 30s, 10m, 1h)" }
    if (text.length <= TEXT_MAX && /^(\d+(\.\d*)?|\.\d+)$/.test(text)) return { error: "no unit: expected ms, s, m or h after the number (30s)" }
    return { error: "not a duration: expected a number with a unit (500ms, 30s, 10m, 1h)" }
  }
  const ms = Math.round(Number(m[1]) * UNIT_MS[m[2]!]!)
  if (!(ms <= DURATION_MAX_MS)) return { error: "too long: at most 7 days (168h)" }
  return ms
}
