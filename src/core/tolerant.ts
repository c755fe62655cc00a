/** Tolerant building blocks for the decoders of the state files and options; the decoding uses effect/Schema. Pure. */
import { Schema } from "effect"
import { isRecord, type JsonRecord } from "./json.js"

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
