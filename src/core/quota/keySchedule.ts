/**
 * When a provider's budget endpoint (keyEndpoints.ts) is read, and what is logged about it (issue 35,
 * US-48). A provider is read only while this process holds a live claim on one of its slot models that
 * draw on the budget, and at most once every KEY_READ_EVERY_MS; a provider with no such slot in the
 * pool is never read. A failed read is logged once, until it fails differently or succeeds again.
 * Pure: the memory is a value, `now` is passed in.
 */
import { isLive, type Claim } from "../pool/claims.js"
import type { Slot } from "../pool/pool.js"
import { clockTime } from "../time.js"
import { coveredModels } from "./keyBudget.js"
import type { KeyEndpoint, StatedBudget } from "./keyEndpoints.js"

/** At most one read of a provider's endpoint per this long. */
export const KEY_READ_EVERY_MS = 60_000
/** How often the shell asks whether a read is due (no network call unless one is). */
export const KEY_TICK_MS = 5_000

/** What the shell remembers of one provider: when it was last read, and the failure last logged. */
export interface KeyProviderMemory {
  readonly readAt: number | undefined
  /** The kind of failure last logged (`KeyFailure.kind`), until a read succeeds. */
  readonly told: string | undefined
}

export type KeyMemory = ReadonlyMap<string, KeyProviderMemory>

export const NO_KEY_MEMORY: KeyMemory = new Map()

const FRESH: KeyProviderMemory = { readAt: undefined, told: undefined }

/** The endpoints with a covered slot model that one of `claims` (this process's) holds live at `now`. */
export const endpointsInUse = (
  endpoints: ReadonlyArray<KeyEndpoint>,
  slots: ReadonlyArray<Slot>,
  claims: ReadonlyArray<Pick<Claim, "model" | "heartbeatAt">>,
  now: number
): ReadonlyArray<KeyEndpoint> =>
  endpoints.filter((e) => {
    const models = new Set(coveredModels(e, slots))
    return models.size > 0 && claims.some((c) => models.has(c.model) && isLive(c, now))
  })

/** Whether `provider` may be read at `now`: never read, or last read KEY_READ_EVERY_MS or more ago. */
export const isDue = (memory: KeyMemory, provider: string, now: number): boolean => {
  const readAt = memory.get(provider)?.readAt
  return readAt === undefined || now - readAt >= KEY_READ_EVERY_MS
}

/** The endpoints to read at `now`, and the memory with their reads started. */
export const dueReads = (
  memory: KeyMemory,
  endpoints: ReadonlyArray<KeyEndpoint>,
  slots: ReadonlyArray<Slot>,
  claims: ReadonlyArray<Pick<Claim, "model" | "heartbeatAt">>,
  now: number
): { readonly due: ReadonlyArray<KeyEndpoint>; readonly memory: KeyMemory } => {
  const due = endpointsInUse(endpoints, slots, claims, now).filter((e) => isDue(memory, e.provider, now))
  if (due.length === 0) return { due, memory }
  const next = new Map(memory)
  for (const e of due) next.set(e.provider, { ...(memory.get(e.provider) ?? FRESH), readAt: now })
  return { due, memory: next }
}

/** Why a read gave no budget, as the shell's typed errors and the core's readings say it. */
export interface KeyFailure {
  /** What stays the same while the failure does (`timeout`, `status 401`, `malformed`, `no key`, …): logged once per kind. */
  readonly kind: string
  /** The log line's reason (never the key). */
  readonly reason: string
}

/** The failure kind of a provider whose key neither the config nor the environment gives (no request is made). */
export const NO_KEY = "no key"

export interface KeyLogLine {
  readonly level: "debug" | "info" | "warn"
  readonly message: string
}

/** A failed read: the memory, and the line to log when this kind was not the last one logged. */
export const readFailed = (memory: KeyMemory, e: KeyEndpoint, failure: KeyFailure): { readonly memory: KeyMemory; readonly line: KeyLogLine | undefined } => {
  const before = memory.get(e.provider) ?? FRESH
  if (before.told === failure.kind) return { memory, line: undefined }
  return {
    memory: new Map(memory).set(e.provider, { ...before, told: failure.kind }),
    // a key opencode keeps elsewhere (auth.json) is no fault: said once, quietly
    line: { level: failure.kind === NO_KEY ? "info" : "warn", message: `${e.provider} budget not read (${failure.reason}); its ${e.budgetName} are known only from its answers` }
  }
}

/** A read that stated a budget (or none): the memory, and the line (info once a failure had been logged, debug otherwise). */
export const readDone = (memory: KeyMemory, e: KeyEndpoint, budget: StatedBudget | undefined): { readonly memory: KeyMemory; readonly line: KeyLogLine } => {
  const before = memory.get(e.provider) ?? FRESH
  const what = budget === undefined ? `states no ${e.budgetName} for this key` : `${budget.remaining}/${budget.limit} ${e.budgetName}, until ${clockTime(budget.resetAt)}`
  const recovered = before.told !== undefined
  return {
    memory: recovered ? new Map(memory).set(e.provider, { ...before, told: undefined }) : memory,
    line: { level: recovered ? "info" : "debug", message: `${e.provider} budget read${recovered ? " again" : ""}: ${what}` }
  }
}
