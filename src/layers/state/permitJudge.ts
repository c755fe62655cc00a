/**
 * How permit entries' holders are judged (issue 21), for every backend: on this host by pid, start
 * token and, for an `ocpool run` entry, its process group, never by lease (a build may hold for an
 * hour without its row being rewritten); on another host by the lease its holder last renewed
 * (core/state/holder.ts `permitGone`). The backend only stores and judges: the permit machine decides
 * what is removed. Also the memory backend's permits part (a table several test "processes" share).
 */
import { Effect } from "effect"
import { DEAD_FILE_MS } from "../../core/constants.js"
import type { PermitChanges, PermitEntry, PermitView } from "../../core/permits/types.js"
import { holderGone, isLocal, permitGone, type HolderFacts } from "../../core/state/holder.js"
import { bySeq, entryOf, PERMITS_MAX_ENTRIES } from "./permitCodec.js"
import { groupAlive, pidState, startTimeOf } from "./proc.js"
import type { PermitRecords } from "./sharedStateOver.js"

/** How holders on the backend's own host are looked at. */
export interface PermitJudge {
  readonly host: string
  /** `kill(pid, 0)` and, when the holder wrote one, the start token running under its pid now. */
  readonly facts: (pid: number, startToken: string | null) => HolderFacts
  /** Whether any process of the group lives; asked only once the holder's own pid is gone. */
  readonly groupAlive: (pgid: number, leaderStartToken: string | null) => boolean | undefined
}

/** This machine's processes, as `/proc` and signal 0 show them. */
export const procJudge = (host: string): PermitJudge => ({
  host,
  facts: (pid, startToken) => {
    const state = pidState(pid)
    return { pidState: state, liveStartToken: state === "alive" && startToken !== null ? startTimeOf(pid) : undefined }
  },
  groupAlive
})

/**
 * `entries` as views in FIFO order, each holder judged at `now`; `writtenAt`: when they were last written
 * (another host's lease is that + DEAD_FILE_MS), or the lease of each entry's holder on another host.
 */
export const judgePermits = (entries: Iterable<PermitEntry>, writtenAt: number | ((e: PermitEntry) => number), judge: PermitJudge, now: number): ReadonlyArray<PermitView> => {
  const otherLease = typeof writtenAt === "number" ? () => writtenAt + DEAD_FILE_MS : writtenAt
  const groups = new Map<number, boolean | undefined>()
  const views: Array<PermitView> = []
  for (const e of entries) {
    const h = e.holder
    const local = isLocal(h, judge.host)
    const leaseUntil = local ? Number.POSITIVE_INFINITY : otherLease(e)
    const facts = local ? judge.facts(h.pid, h.startToken) : {}
    let groupAliveNow: boolean | undefined
    if (local && h.group != null && holderGone(h, leaseUntil, facts, judge.host, now)) {
      const pgid = h.group.pgid
      if (!groups.has(pgid)) groups.set(pgid, judge.groupAlive(pgid, h.group.startToken))
      groupAliveNow = groups.get(pgid)
    }
    views.push({ ...e, gone: permitGone(h, leaseUntil, { ...facts, groupAlive: groupAliveNow }, judge.host, now) })
  }
  return bySeq(views)
}

/** `entries` with `changes` applied (puts by id, in place or appended; removes), kept within PERMITS_MAX_ENTRIES (lowest seq first); `undefined` when nothing changes. */
export const applyPermitChanges = (entries: ReadonlyArray<PermitEntry>, changes: PermitChanges): ReadonlyArray<PermitEntry> | undefined => {
  if (changes.put.length === 0 && !changes.remove.some((id) => entries.some((e) => e.id === id))) return undefined
  const table = new Map<string, PermitEntry>(entries.map((e) => [e.id, e]))
  for (const id of changes.remove) table.delete(id)
  for (const e of changes.put) table.set(e.id, entryOf(e))
  return bySeq(table.values()).slice(0, PERMITS_MAX_ENTRIES)
}

/** The entries of a memory backend (several "processes" may share it) and when they were last written. */
export interface PermitTable {
  readonly entries: Map<string, PermitEntry>
  writtenAt: number
}

export const permitTable = (): PermitTable => ({ entries: new Map(), writtenAt: 0 })

/** Entries in one table, holders judged by `judge`; the write's `now` is their lease's start. */
export const permitsInMemory = (judge: PermitJudge, table: PermitTable = permitTable()): PermitRecords => ({
  readAll: (now) => Effect.sync(() => judgePermits(table.entries.values(), table.writtenAt, judge, now)),
  write: (changes, now) =>
    Effect.sync(() => {
      const next = applyPermitChanges([...table.entries.values()], changes)
      if (next === undefined) return
      table.entries.clear()
      for (const e of next) table.entries.set(e.id, e)
      table.writtenAt = now
    })
})
