/**
 * A root session's active fallback (issue 12, US-50) as every process and `ocpool status` read it:
 * `fallback.<enc>.json` in the state directory, one per session (`<enc>` as cooldown files encode a
 * model). Over once its original model no longer cools. Pure: encoding, tolerant decoding (effect/Schema).
 */
import { Option, Schema } from "effect"
import { modelFileKey } from "../pool/cooldownFile.js"
import { EpochMs } from "../tolerant.js"

export interface FallbackRecord {
  readonly session: string
  /** The model the session ran out on. */
  readonly original: string
  /** The fallback it runs on now. */
  readonly active: string
  /** Until when the original cools: the record is over then. */
  readonly until: number
  /** When the switch was decided. */
  readonly at: number
}

export const fallbackFileName = (session: string): string => `fallback.${modelFileKey(session)}.json`

export const FALLBACK_FILE = /^fallback\..+\.json$/

export const encodeFallback = (r: FallbackRecord): string =>
  JSON.stringify({ version: 1, session: r.session, original: r.original, active: r.active, until: r.until, at: r.at })

const FallbackJson = Schema.parseJson(
  Schema.Struct({ session: Schema.String, original: Schema.String, active: Schema.String, until: EpochMs, at: EpochMs })
)

const decodeFile = Schema.decodeUnknownOption(FallbackJson)

/** A parsed file, or `undefined` when it is unusable. Never throws. */
export const decodeFallback = (text: string): FallbackRecord | undefined => {
  const r = Option.getOrUndefined(decodeFile(text))
  return r === undefined ? undefined : { session: r.session, original: r.original, active: r.active, until: r.until, at: r.at }
}

/** Over once the original model's cooldown has ended: new messages go back to it. */
export const isOver = (r: FallbackRecord, now: number): boolean => now >= r.until

export const bySession = (records: Iterable<FallbackRecord>): ReadonlyArray<FallbackRecord> =>
  [...records].sort((a, b) => (a.session < b.session ? -1 : a.session > b.session ? 1 : 0))
