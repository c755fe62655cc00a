/**
 * What the trace-line decoders share (input.ts, permitInput.ts, contextInput.ts): a failed check
 * throws `Invalid` with its one-line message, and each decoder's entry (`decodeLine`, `decodePermit`,
 * `decodeContext`) catches it, so no exception leaves them. Pure.
 */
import { TRACE_TIME_MAX_MS } from "../readLimits.js"

export type Obj = Record<string, unknown>

/** Local control flow only: the decoders' entries catch it. `field`: the line's field at fault, when the problem is one field's. */
export class Invalid {
  constructor(
    readonly message: string,
    readonly field?: string | undefined
  ) {}
}

export const fail = (message: string, field?: string): never => {
  throw new Invalid(message, field)
}

/** A time a trace line may carry: a finite number of epoch ms within ±TRACE_TIME_MAX_MS. */
export const isTraceTime = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v) && Math.abs(v) <= TRACE_TIME_MAX_MS
