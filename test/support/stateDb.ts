/** What a state directory's `state.db` holds (issue 32), read as a test sees it: rows decoded, nothing written. */
import { existsSync, mkdirSync } from "node:fs"
import { join } from "node:path"
import { decodeClaimFile, type ClaimFile } from "../../src/core/pool/claimFile.js"
import type { Claim } from "../../src/core/pool/claims.js"
import type { Cooldown } from "../../src/core/pool/cooldown.js"
import { decodeCooldown } from "../../src/core/pool/cooldownFile.js"
import { decodeQuota, type QuotaRecord } from "../../src/core/quota/record.js"
import type { GroupBudget } from "../../src/core/limits/learned.js"
import type { PermitEntry } from "../../src/core/permits/types.js"
import { decodePermits } from "../../src/layers/state/permitCodec.js"
import { openSqlite } from "../../src/layers/state/sqliteDriver.js"
import { Effect } from "effect"
import { DEAD_FILE_MS } from "../../src/core/constants.js"
import type { RecordsError } from "../../src/layers/state/sharedStateOver.js"
import { directExec, openStateDb } from "../../src/layers/state/SharedStateSqlite.js"
import { migrateSqlite } from "../../src/layers/state/sqliteSchema.js"
import { sqlClaims, sqlContext, sqlCooldowns, sqlLearned, sqlPermits, sqlQuota, type SqlExec } from "../../src/layers/state/sqlRecords.js"
import { decodeQueued, decodeRecord, encodeQueued, encodeRecord, type ContextRecord } from "../../src/core/context/record.js"

const rows = <R>(dir: string, sql: string, params: ReadonlyArray<string | number> = []): ReadonlyArray<R> => {
  const path = join(dir, "state.db")
  if (!existsSync(path)) return []
  const db = openSqlite(path, { readonly: true })
  try {
    return db.all<R>(sql, params)
  } catch {
    return []
  } finally {
    db.close()
  }
}

/** Every claims row: its holder and table. */
export const claimRowsIn = (dir: string): ReadonlyArray<{ readonly pid: number; readonly instance: number; readonly file: ClaimFile | undefined }> =>
  rows<{ pid: number; instance: number; body: string }>(dir, "SELECT pid, instance, body FROM claims ORDER BY pid, instance").map((r) => ({ pid: r.pid, instance: r.instance, file: decodeClaimFile(r.body) }))

/** Whether process `pid` has a claims row (of any plugin instance). */
export const hasClaimsRow = (dir: string, pid = process.pid): boolean => claimRowsIn(dir).some((r) => r.pid === pid)

/** Process `pid`'s claims by key ({} without a row). */
export const claimsOf = (dir: string, pid = process.pid, instance = 0): Readonly<Record<string, Claim>> =>
  Object.fromEntries((claimRowsIn(dir).find((r) => r.pid === pid && r.instance === instance)?.file?.claims ?? []).map((c) => [c.key, c]))

/** The cooldown of `model`, as written. */
export const cooldownIn = (dir: string, model: string): Cooldown | undefined => {
  const row = rows<{ body: string }>(dir, "SELECT body FROM cooldowns WHERE model = ?", [model])[0]
  return row === undefined ? undefined : decodeCooldown(row.body)
}

/** Every cooldown's model. */
export const cooledModelsIn = (dir: string): ReadonlyArray<string> => rows<{ model: string }>(dir, "SELECT model FROM cooldowns ORDER BY model").map((r) => r.model)

/** The quota record of `model`, as written. */
export const quotaIn = (dir: string, model: string): QuotaRecord | undefined => {
  const row = rows<{ body: string }>(dir, "SELECT body FROM quota WHERE model = ?", [model])[0]
  return row === undefined ? undefined : decodeQuota(row.body)
}

/** Every process's claims, merged by key. */
export const allClaimsIn = (dir: string): Readonly<Record<string, Claim>> =>
  Object.fromEntries(claimRowsIn(dir).flatMap((r) => (r.file?.claims ?? []).map((c) => [c.key, c] as const)))

/** Every cooldown, by model. */
export const cooldownsIn = (dir: string): Readonly<Record<string, Cooldown>> =>
  Object.fromEntries(
    rows<{ body: string }>(dir, "SELECT body FROM cooldowns")
      .map((r) => decodeCooldown(r.body))
      .filter((c) => c !== undefined)
      .map((c) => [c.model, c] as const)
  )

/** Every permit entry, in FIFO order. */
export const permitEntriesIn = (dir: string): ReadonlyArray<PermitEntry> =>
  rows<{ body: string }>(dir, "SELECT body FROM permits ORDER BY seq, pos").flatMap((r) => {
    const d = decodePermits(`{"v":1,"entries":[${r.body}]}`)
    return d._tag === "Entries" ? d.entries : []
  })

/** Writes records into `dir`'s state.db as a process would (the database made and migrated when missing). */
const seeding = <A>(dir: string, f: (exec: SqlExec) => Effect.Effect<A, RecordsError>): A => {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const db = openStateDb(join(dir, "state.db"))
  try {
    migrateSqlite(db)
    return Effect.runSync(f(directExec(db)).pipe(Effect.orDie))
  } finally {
    db.close()
  }
}

/** A process's claims row (and its holder's lease from `writtenAt`), as its publish writes it. */
export const seedClaims = (dir: string, f: Omit<ClaimFile, "reaped"> & { readonly reaped?: number; readonly instance?: number }): void =>
  seeding(dir, (exec) =>
    sqlClaims(exec, { host: f.host, pid: f.pid, startToken: f.startTime, instance: f.instance ?? 0, leaseMs: DEAD_FILE_MS }).part.publish({ claims: f.claims, reaped: f.reaped ?? 0 }, f.writtenAt)
  )

export const seedCooldowns = (dir: string, cooldowns: ReadonlyArray<Cooldown>): void => seeding(dir, (exec) => sqlCooldowns(exec).write(cooldowns))

export const seedQuota = (dir: string, records: ReadonlyArray<QuotaRecord>): void => seeding(dir, (exec) => sqlQuota(exec).write(records))

/** Learned budgets (issue 35), as the engine writes them. */
export const seedLearned = (dir: string, records: ReadonlyArray<GroupBudget>): void => seeding(dir, (exec) => sqlLearned(exec).write(records))

/** The learned budgets in `dir`'s state.db, by group. */
export const learnedIn = (dir: string): ReadonlyArray<string> => rows<{ grp: string }>(dir, "SELECT grp FROM learned ORDER BY grp", []).map((r) => r.grp)

export const seedPermits = (dir: string, entries: ReadonlyArray<PermitEntry>, now = Date.now()): void =>
  seeding(dir, (exec) => sqlPermits(exec, { host: "", facts: () => ({}), groupAlive: () => undefined }, DEAD_FILE_MS).write({ put: entries, remove: [] }, now))

/** Runs raw SQL on `dir`'s state.db (a test's hostile row). */
export const seedSql = (dir: string, sql: string, params: ReadonlyArray<string | number | null> = []): void =>
  void seeding(dir, (exec) => exec.run({ text: sql, params }))

/** The context map's record of project `root`, as written (undefined without one). */
export const contextRecordIn = (dir: string, root: string): ContextRecord | undefined => {
  const row = rows<{ body: string }>(dir, "SELECT body FROM context WHERE key = ?", [`record:${root}`])[0]
  return row === undefined ? undefined : decodeRecord(row.body)
}

/** When a refresh of project `root` was queued (undefined: none). */
export const contextQueuedIn = (dir: string, root: string): number | undefined => {
  const row = rows<{ body: string }>(dir, "SELECT body FROM context WHERE key = ?", [`queued:${root}`])[0]
  return row === undefined ? undefined : decodeQueued(row.body)
}

export const seedContextRecord = (dir: string, record: ContextRecord): void =>
  seeding(dir, (exec) => sqlContext(exec).write({ put: [{ key: `record:${record.root}`, body: encodeRecord(record) }], remove: [] }))

export const seedContextQueued = (dir: string, root: string, at: number): void =>
  seeding(dir, (exec) => sqlContext(exec).write({ put: [{ key: `queued:${root}`, body: encodeQueued(at) }], remove: [] }))
