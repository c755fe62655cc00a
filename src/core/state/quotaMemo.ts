/**
 * The quota write throttle's memory (issue 12, US-48): the record this process last wrote per model,
 * and which record one observation becomes (core/quota/write.ts). The shell keeps the memo and puts
 * the record in the decision's commit; the backend writes what it is given. Pure.
 */
import type { QuotaObservation } from "../quota/headers.js"
import type { QuotaRecord } from "../quota/record.js"
import { quotaToWrite } from "../quota/write.js"

/** model → the record this process last wrote. */
export type QuotaMemo = ReadonlyMap<string, QuotaRecord>

export const NO_QUOTA_WRITTEN: QuotaMemo = new Map()

/** The record to write for what a response said (none: nothing to say, or throttled) and the memo after it. */
export const quotaStep = (
  memo: QuotaMemo,
  observed: { readonly model: string; readonly observation: QuotaObservation } | undefined,
  now: number
): { readonly write: QuotaRecord | undefined; readonly memo: QuotaMemo } => {
  if (observed === undefined) return { write: undefined, memo }
  const write = quotaToWrite(memo.get(observed.model), observed.model, observed.observation, now)
  return write === undefined ? { write, memo } : { write, memo: new Map(memo).set(observed.model, write) }
}
