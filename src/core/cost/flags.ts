/**
 * The flags of `ocpool cost` parsed from their text (US-3): `--since`, `--by`, `--baseline-model`.
 * A value or a one-line problem naming the flag; the CLI turns a problem into exit 2.
 */
import { DAY_MS, HOUR_MS } from "../constants.js"
import { FLAG_TEXT_MAX, problem, shownValue, value, type Parsed } from "../retention/flags.js"

export const GROUP_BY = ["agent", "model", "session", "day"] as const
export type GroupBy = (typeof GROUP_BY)[number]

export const DEFAULT_SINCE = "7d"
export const DEFAULT_BY: GroupBy = "agent"

/** A window back from now; `ms` undefined is `all` (every message). */
export interface Since {
  readonly text: string
  readonly ms: number | undefined
}

/** The longest window: 100 years, far inside the date range. */
export const SINCE_MAX_MS = 36_500 * DAY_MS

const UNIT_MS: Readonly<Record<string, number>> = { m: 60_000, h: HOUR_MS, d: DAY_MS, w: 7 * DAY_MS }
const SINCE = /^(\d+(?:\.\d+)?)([mhdw])$/

/** `30m`, `24h`, `7d`, `2w` (fractions allowed, above zero), or `all`; absent, DEFAULT_SINCE. */
export const parseSince = (text: string | undefined): Parsed<Since> => {
  const t = text ?? DEFAULT_SINCE
  if (t === "all") return value({ text: t, ms: undefined })
  const m = t.length <= FLAG_TEXT_MAX ? SINCE.exec(t) : null
  const ms = m === null ? Number.NaN : Number(m[1]) * UNIT_MS[m[2]!]!
  if (!(ms > 0)) return problem(`--since must be a duration such as 30m, 24h, 7d or 2w (above zero), or 'all', got '${shownValue(t)}'`)
  if (ms > SINCE_MAX_MS) return problem(`--since must be at most 36500d, got '${shownValue(t)}'`)
  return value({ text: t, ms })
}

const isGroupBy = (t: string): t is GroupBy => (GROUP_BY as ReadonlyArray<string>).includes(t)

/** One of GROUP_BY; absent, DEFAULT_BY. */
export const parseBy = (text: string | undefined): Parsed<GroupBy> => {
  if (text === undefined) return value(DEFAULT_BY)
  return isGroupBy(text) ? value(text) : problem(`--by must be one of ${GROUP_BY.join(", ")}, got '${shownValue(text)}'`)
}

const MODEL = /^[^/\s]+\/\S+$/

/** `provider/model` (the model id may hold more slashes); absent, undefined. */
export const parseModel = (flag: string, text: string | undefined): Parsed<string | undefined> => {
  if (text === undefined) return value(undefined)
  return text.length <= 200 && MODEL.test(text) ? value(text) : problem(`--${flag} must be provider/model, got '${shownValue(text)}'`)
}
