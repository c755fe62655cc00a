/**
 * Which quota record a process writes for one provider response (issue 12, US-48): the record of the
 * observation, when it says anything about requests or tokens and the write throttle (`shouldWrite` in
 * record.ts) lets it replace the record this process last wrote for the model. A write that fails is
 * not the last written one: the next response tries again. Pure.
 */
import type { QuotaObservation } from "./headers.js"
import { recordOf, shouldWrite, type QuotaRecord } from "./record.js"

/** The record to write for `model` now, or `undefined` (nothing to say, or throttled against `lastWritten`). */
export const quotaToWrite = (lastWritten: QuotaRecord | undefined, model: string, observation: QuotaObservation, now: number): QuotaRecord | undefined => {
  const next = recordOf(model, observation, now)
  return next !== undefined && shouldWrite(lastWritten, next) ? next : undefined
}
