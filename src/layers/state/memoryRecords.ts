/**
 * Record parts in memory (the memory backend, where several test "processes" share one `MemoryState`):
 * cooldowns, quota records and fallback records, one table each; what is over at `now` is not read.
 */
import { Effect } from "effect"
import type { Cooldown } from "../../core/pool/cooldown.js"
import { isCooldownExpired } from "../../core/pool/cooldownFile.js"
import { bySession, isOver, type FallbackRecord } from "../../core/quota/fallbackRecord.js"
import { isStale, type QuotaRecord } from "../../core/quota/record.js"
import type { ContextEntry } from "../../services/state/SharedState.js"
import { counterKey, type CounterRow } from "../../core/metrics/counters.js"
import type { ContextRecords, CooldownRecords, CounterRecords, FallbackRecords, LearnedRecords, QuotaRecords } from "./sharedStateOver.js"
import { byGroup, byModel } from "./sqlRecords.js"
import { isBudgetStale, type GroupBudget } from "../../core/limits/learned.js"

/** Cooldowns in one table; expired ones are dropped as they are read. */
export const cooldownsInMemory = (table: Map<string, Cooldown> = new Map()): CooldownRecords => ({
  readAll: (now) =>
    Effect.sync(() => {
      for (const [model, c] of table) if (isCooldownExpired(c, now)) table.delete(model)
      return [...table.values()]
    }),
  write: (records) => Effect.sync(() => records.forEach((r) => table.set(r.model, r))),
  remove: (model) => Effect.sync(() => void table.delete(model))
})

/** Quota records in one table, model → record. */
export const quotaInMemory = (table: Map<string, QuotaRecord> = new Map()): QuotaRecords => ({
  write: (records) => Effect.sync(() => records.forEach((r) => table.set(r.model, r))),
  readAll: (now) => Effect.sync(() => byModel([...table.values()].filter((r) => !isStale(r, now))))
})

/** Fallback records in one table, session → record. */
export const fallbacksInMemory = (table: Map<string, FallbackRecord> = new Map()): FallbackRecords => ({
  write: (records) => Effect.sync(() => records.forEach((r) => table.set(r.session, r))),
  remove: (session) => Effect.sync(() => void table.delete(session)),
  readAll: (now) => Effect.sync(() => bySession([...table.values()].filter((r) => !isOver(r, now))))
})

/** The context map's entries in one table, key → body. */
export const contextInMemory = (table: Map<string, string> = new Map()): ContextRecords => ({
  readAll: Effect.sync((): ReadonlyArray<ContextEntry> => [...table.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, body]) => ({ key, body }))),
  write: (changes) =>
    Effect.sync(() => {
      for (const k of changes.remove) table.delete(k)
      for (const e of changes.put) table.set(e.key, e.body)
    })
})

/** Learned budgets in one table, group → record (issue 35). */
export const learnedInMemory = (table: Map<string, GroupBudget> = new Map()): LearnedRecords => ({
  readAll: (now) => Effect.sync(() => byGroup([...table.values()].filter((b) => !isBudgetStale(b, now)))),
  write: (records) => Effect.sync(() => records.forEach((r) => table.set(r.group, r))),
  remove: (group) => Effect.sync(() => void table.delete(group))
})

/** Every host's counters in one table, keyed by host, name and labels (issue 36); `host` is the one this port adds to. */
export const countersInMemory = (table: Map<string, CounterRow>, host: string): CounterRecords => ({
  readAll: Effect.sync(() => [...table.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row)),
  add: (counts) =>
    Effect.sync(() => {
      for (const c of counts) {
        const key = `${host}\u0000${counterKey(c)}`
        const had = table.get(key)
        table.set(key, { host, name: c.name, labels: c.labels, value: (had?.value ?? 0) + c.by })
      }
    })
})
