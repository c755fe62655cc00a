/**
 * The state files of earlier versions (issue 32): `cooldown.<enc>.json`, `quota.<enc>.json`,
 * `fallback.<enc>.json` and the context map's `context.<enc>.json` and `.queued` are imported into `state.db` once, so that an upgrade forgets no six-hour
 * cooldown, and then renamed `<name>.imported`. Claim files (`claims.<pid>.json`), `permits.json` and
 * `pool.lock` are not imported: their processes restart with the new version; `ocpool doctor` names
 * them as leftovers. A file that does not decode, or whose record is over, is renamed all the same.
 */
import { readdirSync, renameSync } from "node:fs"
import { join } from "node:path"
import type { Cooldown } from "../../core/pool/cooldown.js"
import { COOLDOWN_FILE, decodeCooldown, isCooldownExpired } from "../../core/pool/cooldownFile.js"
import { STATE_FILE_MAX_BYTES } from "../../core/readLimits.js"
import { decodeFallback, FALLBACK_FILE, fallbackFileName, isOver, type FallbackRecord } from "../../core/quota/fallbackRecord.js"
import { decodeQuota, isStale, QUOTA_FILE, quotaFileName, type QuotaRecord } from "../../core/quota/record.js"
import { CLAIM_FILE } from "../../core/pool/claimFile.js"
import { readTextFile } from "../fs/safeRead.js"
import { CONTEXT_QUEUE_FILE, CONTEXT_RECORD_FILE, decodeQueued, decodeRecord, encodeQueued, encodeRecord, queueFileName, recordFileName } from "../../core/context/record.js"
import type { ContextEntry } from "../../services/state/SharedState.js"

export const IMPORTED_SUFFIX = ".imported"

export interface LegacyRecords {
  readonly cooldowns: ReadonlyArray<Cooldown>
  readonly quota: ReadonlyArray<QuotaRecord>
  readonly fallbacks: ReadonlyArray<FallbackRecord>
  /** The context map's records and refresh markers, as the port's entries. */
  readonly context: ReadonlyArray<ContextEntry>
  /** The files read (renamed once what they held is committed). */
  readonly files: ReadonlyArray<string>
}

const IMPORTABLE = [COOLDOWN_FILE, QUOTA_FILE, FALLBACK_FILE, CONTEXT_RECORD_FILE, CONTEXT_QUEUE_FILE]

/** Whether `name` is an earlier version's record that is imported. */
export const isImportable = (name: string): boolean => IMPORTABLE.some((p) => p.test(name))

/** Earlier versions' files that are never imported: what `doctor` names as leftovers. */
export const isLeftover = (name: string): boolean =>
  CLAIM_FILE.test(name) || name === "permits.json" || name === "pool.lock" || name.endsWith(".tmp") || isImportable(name)

/** Whether `dir` holds an importable file (one listing; never throws). */
export const hasLegacy = (dir: string): boolean => {
  try {
    return readdirSync(dir).some(isImportable)
  } catch {
    return false
  }
}

/** The records of `dir`'s importable files that are not over at `now`; never throws (an unreadable directory has none). */
export const readLegacy = (dir: string, now: number): LegacyRecords => {
  let names: Array<string>
  try {
    names = readdirSync(dir).filter(isImportable)
  } catch {
    names = []
  }
  const cooldowns: Array<Cooldown> = []
  const quota: Array<QuotaRecord> = []
  const fallbacks: Array<FallbackRecord> = []
  const context: Array<ContextEntry> = []
  // a marker names no root: it is matched, after the pass, to the record whose root its name encodes
  const rootsByMarker = new Map<string, string>()
  const markers: Array<{ readonly name: string; readonly at: number }> = []
  for (const name of names) {
    const read = readTextFile(join(dir, name), STATE_FILE_MAX_BYTES)
    if (read._tag !== "Text") continue
    if (CONTEXT_RECORD_FILE.test(name)) {
      const r = decodeRecord(read.text)
      if (r !== undefined && recordFileName(r.root) === name) {
        context.push({ key: `record:${r.root}`, body: encodeRecord(r) })
        rootsByMarker.set(queueFileName(r.root), r.root)
      }
    } else if (CONTEXT_QUEUE_FILE.test(name)) {
      const at = decodeQueued(read.text)
      if (at !== undefined) markers.push({ name, at })
    } else if (COOLDOWN_FILE.test(name)) {
      const c = decodeCooldown(read.text)
      if (c !== undefined && !isCooldownExpired(c, now)) cooldowns.push(c)
    } else if (QUOTA_FILE.test(name)) {
      const q = decodeQuota(read.text)
      // a file under another model's name (copied by hand) is not that model's
      if (q !== undefined && !isStale(q, now) && quotaFileName(q.model) === name) quota.push(q)
    } else {
      const f = decodeFallback(read.text)
      if (f !== undefined && !isOver(f, now) && fallbackFileName(f.session) === name) fallbacks.push(f)
    }
  }
  for (const m of markers) {
    const root = rootsByMarker.get(m.name)
    if (root !== undefined) context.push({ key: `queued:${root}`, body: encodeQueued(m.at) })
  }
  return { cooldowns, quota, fallbacks, context, files: names }
}

/** Renames the files read to `<name>.imported` (one already gone is skipped). */
export const markImported = (dir: string, files: ReadonlyArray<string>): void => {
  for (const name of files) {
    try {
      renameSync(join(dir, name), join(dir, `${name}${IMPORTED_SUFFIX}`))
    } catch {
      // another process renamed it first
    }
  }
}
