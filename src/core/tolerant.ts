/** Tolerant building blocks for the decoders of the state files and options; the decoding uses effect/Schema. Pure. */
import { Schema } from "effect"
import { isRecord, type JsonRecord } from "./json.js"
import { isEpochMs } from "./readLimits.js"

/** A JSON object (not null, not an array), decoded as the very same object. */
export const JsonObject = Schema.declare((u: unknown): u is JsonRecord => isRecord(u), { identifier: "JsonObject" })

/** A field read tolerantly: its value when `schema` accepts it, otherwise (missing, wrong type) `fallback`. */
export const orElse = <A>(schema: Schema.Schema<A>, fallback: A): Schema.Schema<A, unknown> => {
  const accepts = Schema.is(schema)
  return Schema.transform(Schema.Unknown, Schema.typeSchema(schema), {
    strict: true,
    decode: (u) => (accepts(u) ? u : fallback),
    encode: (a) => a
  })
}

/** An epoch-ms time a date can show (|t| ≤ 8.64e15): a time beyond it is an invalid value, not a far future. */
export const EpochMs = Schema.Number.pipe(Schema.filter((n) => isEpochMs(n) || "a time within ±8.64e15 ms"))

/** A count: an integer ≥ 0 (strikes, reaped claims, abort attempts, a slot number). */
export const Count = Schema.Number.pipe(Schema.int(), Schema.between(0, Number.MAX_SAFE_INTEGER))

/** A process id: an integer ≥ 1. */
export const Pid = Schema.Number.pipe(Schema.int(), Schema.between(1, Number.MAX_SAFE_INTEGER))
