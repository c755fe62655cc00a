/** The content of `pool.lock` (SPEC §5.3); the decoding uses effect/Schema. Pure. */
import { Option, Schema } from "effect"
import type { LockFacts } from "./claims.js"
import { EpochMs, orElse, Pid } from "./tolerant.js"

export type LockContent = NonNullable<LockFacts["content"]>

/** `pid` (an integer ≥ 1) and `at` (a time within ±8.64e15 ms) are required; a `host` or `startTime` that is not a string reads as `null`. */
const LockJson = Schema.parseJson(
  Schema.Struct({
    pid: Pid,
    host: orElse(Schema.NullOr(Schema.String), null),
    startTime: orElse(Schema.NullOr(Schema.String), null),
    at: EpochMs
  })
)

const decodeLock = Schema.decodeUnknownOption(LockJson)

/** The lock's holder, or `undefined` when the text is not a usable lock (then only its mtime counts). */
export const decodeLockFile = (text: string): LockContent | undefined =>
  Option.match(decodeLock(text), { onNone: () => undefined, onSome: (o) => ({ pid: o.pid, host: o.host, startTime: o.startTime, at: o.at }) })
