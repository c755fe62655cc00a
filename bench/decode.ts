/**
 * Trace-line decoding (`npm run bench:decode [-- --lines N --rounds R]`, not part of CI): the
 * hand-written decoder of `src/core/trace/input.ts` next to an `effect/Schema` decoder of the same lines
 * (`Schema.parseJson` over a union of one struct per input type, with the same optional fields and
 * defaults), on the replay benchmark's generated trace, alternating in one process. It answers whether
 * the trace parser should move to Schema like the state files did: only if Schema is not slower.
 */
import { Either, Schema } from "effect"
import { decodeLine, InputError } from "../src/core/trace/input.js"
import { arg } from "./common.js"
import { generate } from "./traceGen.js"

const LINES = arg("lines", 1_000_000)
const ROUNDS = arg("rounds", 3)

const At = Schema.Number.pipe(Schema.int())
const Outcome = Schema.Literal("ok", "fail", "pending")
const Reason = Schema.Literal("rate_limit", "quota", "outage", "unavailable", "auth", "hang")
const PeerCooling = Schema.Array(Schema.Struct({ model: Schema.String, until: Schema.Number, reason: Reason, strikes: Schema.optional(Schema.Number) }))
const Peers = Schema.Record({ key: Schema.String, value: Schema.Number })
const AbortFields = { abort: Schema.optional(Outcome), aborts: Schema.optional(Schema.Record({ key: Schema.String, value: Outcome })), peerCooling: Schema.optional(PeerCooling) }
const Line = Schema.Union(
  Schema.Struct({ at: At, type: Schema.Literal("pool"), slots: Schema.Array(Schema.Unknown), maxSlots: Schema.optional(Schema.Unknown) }),
  Schema.Struct({ at: At, type: Schema.Literal("spawn"), claim: Schema.String, base: Schema.String, session: Schema.optional(Schema.String), blocked: Schema.optional(Schema.Array(Schema.String)), peers: Schema.optional(Peers), ...AbortFields }),
  Schema.Struct({ at: At, type: Schema.Literal("bind"), claim: Schema.String, session: Schema.String, activity: Schema.optionalWith(Schema.Boolean, { default: () => true }) }),
  Schema.Struct({ at: At, type: Schema.Literal("activity"), session: Schema.String }),
  Schema.Struct({ at: At, type: Schema.Literal("release"), claim: Schema.String, ok: Schema.optionalWith(Schema.Boolean, { default: () => true }), peerCooling: Schema.optional(PeerCooling) }),
  Schema.Struct({ at: At, type: Schema.Literal("aborted"), claim: Schema.String, ok: Schema.Boolean, peerCooling: Schema.optional(PeerCooling) }),
  Schema.Struct({
    at: At,
    type: Schema.Literal("limit"),
    text: Schema.String,
    status: Schema.optional(Schema.Number),
    headers: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
    model: Schema.optional(Schema.String),
    provider: Schema.optional(Schema.String),
    session: Schema.optional(Schema.String),
    ...AbortFields
  }),
  Schema.Struct({ at: At, type: Schema.Literal("retry"), session: Schema.String, message: Schema.String, next: Schema.Number, provider: Schema.optional(Schema.String), ...AbortFields }),
  Schema.Struct({ at: At, type: Schema.Literal("sweep"), blocked: Schema.optional(Schema.Array(Schema.String)), spinning: Schema.optional(Schema.Array(Schema.String)), ...AbortFields }),
  Schema.Struct({ at: At, type: Schema.Literal("status"), peers: Schema.optional(Peers), peerCooling: Schema.optional(PeerCooling) })
)
const decodeSchema = Schema.decodeUnknownEither(Schema.parseJson(Line))

const lines = generate(LINES)
const time = (f: () => number): { ms: number; rejected: number } => {
  const t0 = process.hrtime.bigint()
  const rejected = f()
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, rejected }
}
const hand = () => lines.reduce((n, l) => n + (decodeLine(l) instanceof InputError ? 1 : 0), 0)
const schema = () => lines.reduce((n, l) => n + (Either.isLeft(decodeSchema(l)) ? 1 : 0), 0)
hand()
schema()
const ratios: Array<number> = []
console.log(`decode bench: ${LINES.toLocaleString("en-US")} lines, ${ROUNDS} rounds, node ${process.version}`)
for (let i = 0; i < ROUNDS; i++) {
  const h = time(hand)
  const s = time(schema)
  if (h.rejected + s.rejected > 0) throw new Error(`rejected lines: hand ${h.rejected}, schema ${s.rejected}`)
  ratios.push(s.ms / h.ms)
  console.log(`round ${i + 1}: hand-written ${h.ms.toFixed(0)} ms, effect/Schema ${s.ms.toFixed(0)} ms`)
}
console.log(`effect/Schema / hand-written (median): ${[...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)]!.toFixed(1)}x`)
