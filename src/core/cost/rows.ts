/**
 * The usage records of `ocpool cost` (US-3) as the database aggregates them, decoded with
 * effect/Schema into the report's rows; the messages that could not be read are counted, never summed.
 * Pure.
 *
 * Which message rows are readable is decided per row in SQL (layers/cost/CostSqlite.ts; docs/COST.md,
 * "Unreadable rows"): a row whose data is not a JSON object, or an assistant message whose agent,
 * provider or model is not a string, or whose token counts or cost are not JSON numbers in range,
 * contributes nothing but its count. The database hands over one record per readable group, with the
 * agent, provider and model as their JSON text (so that SQL only checks they are strings), and
 * records of unreadable rows flagged `ok = 0`. A readable record that still fails to decode here
 * (a session id that is not text, say) is counted as unreadable too: its messages all share the bad
 * value.
 */
import { Either, Schema } from "effect"
import { DAY_MS } from "../constants.js"
import { TIME_MAX_MS } from "../readLimits.js"
import type { Tokens } from "../prices.js"

/** One group of assistant messages as the database aggregates them. */
export interface UsageRow {
  readonly sessionId: string
  readonly agent: string
  /** `provider/model`. */
  readonly model: string
  /** `YYYY-MM-DD` (UTC) of the messages, or `unknown` for a time that is not a date, when grouping by day; otherwise empty. */
  readonly day: string
  readonly calls: number
  readonly tokens: Tokens
  /** The sum of the costs opencode recorded. */
  readonly cost: number
}

/** The day of a message whose `time_created` is not a time within the date range. */
export const UNKNOWN_DAY = "unknown"

/** Day numbers (days since 1970-01-01, UTC) of the date range (±8.64e15 ms, src/core/readLimits.ts). */
export const DAY_NUMBER_MAX = TIME_MAX_MS / DAY_MS

/** The largest token count or cost summed (Number.MAX_SAFE_INTEGER): larger values are not real usage. */
export const USAGE_VALUE_MAX = Number.MAX_SAFE_INTEGER

/**
 * The `--by day` key of a day number: `YYYY-MM-DD` (UTC); a year outside 0000–9999 in the extended
 * form `+YYYYYY-MM-DD` that Date uses; `unknown` when the time was not a date (null).
 */
export const dayKey = (day: number | null): string => (day === null ? UNKNOWN_DAY : new Date(day * DAY_MS).toISOString().split("T")[0]!)

/** Days in date order, `unknown` after every date. */
export const dayOrder = (a: string, b: string): number => {
  const at = (key: string) => {
    const t = Date.parse(key)
    return Number.isNaN(t) ? Number.POSITIVE_INFINITY : t
  }
  return at(a) - at(b) || (a < b ? -1 : a > b ? 1 : 0)
}

/** A name the database gave as JSON text: it must be a JSON string. */
const Name = Schema.parseJson(Schema.String)

/** A sum of values each in 0…USAGE_VALUE_MAX. */
const Sum = Schema.Number.pipe(Schema.finite(), Schema.nonNegative())

const DayNumber = Schema.Number.pipe(Schema.int(), Schema.between(-DAY_NUMBER_MAX, DAY_NUMBER_MAX))

/** The record of a group of readable assistant messages (SQL column names). */
const Readable = Schema.Struct({
  ok: Schema.Literal(1),
  session_id: Schema.String,
  agent: Name,
  provider: Name,
  model: Name,
  day: Schema.NullOr(DayNumber),
  calls: Schema.Number.pipe(Schema.int(), Schema.positive()),
  input: Sum,
  output: Sum,
  reasoning: Sum,
  cache_read: Sum,
  cache_write: Sum,
  cost: Sum
})

const decodeReadable = Schema.decodeUnknownEither(Readable)

/** The report's rows and the number of message rows that could not be read. */
export interface UsageScan {
  readonly rows: ReadonlyArray<UsageRow>
  /** Message rows in the window that were skipped: not a JSON object, or an assistant message with a missing or invalid field. */
  readonly unreadable: number
}

const callsOf = (record: unknown): number => {
  const calls = typeof record === "object" && record !== null ? (record as { readonly calls?: unknown }).calls : undefined
  return typeof calls === "number" && Number.isSafeInteger(calls) && calls > 0 ? calls : 1
}

/**
 * The database's usage records as rows; `byDay` keeps the day (a day number, or null for a time that
 * is not a date), otherwise the day is empty. Every record that does not decode is unreadable.
 */
export const decodeUsage = (records: ReadonlyArray<unknown>, byDay: boolean): UsageScan => {
  const rows: Array<UsageRow> = []
  let unreadable = 0
  for (const record of records) {
    const decoded = decodeReadable(record)
    if (Either.isLeft(decoded)) {
      unreadable += callsOf(record)
      continue
    }
    const r = decoded.right
    rows.push({
      sessionId: r.session_id,
      agent: r.agent,
      model: `${r.provider}/${r.model}`,
      day: byDay ? dayKey(r.day) : "",
      calls: r.calls,
      tokens: { input: r.input, output: r.output, reasoning: r.reasoning, cacheRead: r.cache_read, cacheWrite: r.cache_write },
      cost: r.cost
    })
  }
  return { rows, unreadable }
}
