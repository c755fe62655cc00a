/**
 * Fail-open on the pool lock (SPEC §5.3): when the lock cannot be had within `lockWaitMs` the work goes
 * ahead without it; every such time is counted, and it is warned about at most once a minute (a lock
 * stuck busy would otherwise warn on every spawn). Pure: the shell keeps the memory and the clock.
 */

/** At most one warning this often. */
export const FAIL_OPEN_WARN_EVERY_MS = 60_000

export const FAIL_OPEN_WARNING = "pool lock busy; routing without it"

export interface FailOpenMemory {
  /** Times the work went ahead without the lock. */
  readonly count: number
  /** When the last warning was given (−∞: never). */
  readonly warnedAt: number
}

export const NO_FAIL_OPENS: FailOpenMemory = { count: 0, warnedAt: Number.NEGATIVE_INFINITY }

/** One fail-open at `now`: the memory after it, and the warning to log, if one is due. */
export const failOpen = (memory: FailOpenMemory, now: number): { readonly memory: FailOpenMemory; readonly warning: string | undefined } =>
  now - memory.warnedAt >= FAIL_OPEN_WARN_EVERY_MS
    ? { memory: { count: memory.count + 1, warnedAt: now }, warning: FAIL_OPEN_WARNING }
    : { memory: { count: memory.count + 1, warnedAt: memory.warnedAt }, warning: undefined }
