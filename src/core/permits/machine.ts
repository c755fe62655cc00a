/**
 * The permit machine (issue 21): one pure step over every budget's entries as a backend read them.
 *
 * A step first settles (entries whose holder is gone leave: a held one `release` cause `holder gone`,
 * a queued one `cancel` cause `requester gone`), then applies the op, then walks each budget's queue in
 * `seq` order: paused entries are skipped, the others are granted while `used + weight ≤ capacity`, and
 * the walk of a budget stops at the first that does not fit (head-of-line blocking: nothing later is
 * granted, even one that would fit). Budgets missing from `capacities` are neither granted nor paused
 * (another process knows their capacity); their gone entries still leave, and their entries may still
 * be released, cancelled, polled or freed.
 *
 * Pausing (MCP requests, which carry `seenAt`): the head of a budget's queue (its first non-paused
 * queued entry) that does not fit gets `headSince` when it has none; a pausable head whose client has
 * not asked for more than PAUSE_AFTER_MS since `max(seenAt, headSince)` is paused (`pausedAt`, one
 * `pause` decision) and the next entry becomes the head. A poll (or rebind) of a paused entry resumes
 * it (`resume`). A queued entry that is no longer the head loses its `headSince`.
 *
 * Answers, about the op's own request, read after the whole step:
 * - `request`, `poll`, `rebind`: `granted` (waited, entries that were ahead), `queued` (position: 1 +
 *   the non-paused queued entries of its budget before it; `paused`), or `gone` (an unknown id; the
 *   cause this step dropped it with, else `requester gone`). A request whose id is already in the table
 *   is answered as a poll with the same token (a resent request), else refused `not yours`.
 * - `release`, `cancel`: `released` (removed by this op), `already` (unknown id: idempotent).
 *   A release of a queued entry is a `cancel` decision with cause `wait` (it never held units); a
 *   cancel is a `cancel` decision with its cause, held or queued.
 * - `free`: `gone` with the cause it left with (`forced`; `holder gone` / `requester gone` when the
 *   settle of this step dropped it), or `refused` (`unknown permit`, `holder alive` without `force`).
 * - `settle`: `already`.
 * Refusals are also `refuse` decisions (`budget` "" when the id is unknown).
 *
 * Decisions are in order: the settle's drops (in seq order), the op's own, then the walk's grants and
 * pauses (in seq order over all budgets). A request granted in its own step prints only `grant`; one
 * left queued prints `queue` at the op's place, with its position after the step. `grant` carries
 * `waitedMs = now − requestedAt` (0 when the requester's clock is ahead) and `before = ahead ?? 0`.
 *
 * `changes` are what turns the input into the output: remove the ids in `remove`, then write (upsert
 * by id) the entries in `put`. Each touched entry is put once, with its final fields, without `gone`.
 * Entry ids are unique. Pure and total: no exception, O(n log n) in the number of entries.
 */
import {
  PAUSE_AFTER_MS,
  type Capacities,
  type CancelCause,
  type DropCause,
  type PermitAnswer,
  type PermitDecision,
  type PermitEntry,
  type PermitOp,
  type PermitStep,
  type PermitView,
  type RefuseReason
} from "./types.js"

/** A budget's capacity, when this process knows it (own keys only: a budget named `constructor` is a name like any other). */
export const capacityOf = (capacities: Capacities, budget: string): number | undefined => {
  if (!Object.prototype.hasOwnProperty.call(capacities, budget)) return undefined
  const c = capacities[budget]
  return typeof c === "number" ? c : undefined
}

/** Whether `weight` may be asked of a budget of `capacity` units: an integer in 1..capacity. */
export const weightFits = (weight: number, capacity: number): boolean => Number.isInteger(weight) && weight >= 1 && weight <= capacity

const bySeq = (a: PermitEntry, b: PermitEntry): number => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

const isHeld = (e: PermitEntry): boolean => e.grantedAt !== undefined

const ALREADY: PermitAnswer = { state: "already" }
const RELEASED: PermitAnswer = { state: "released" }

type Patch = { readonly [K in "grantedAt" | "seenAt" | "headSince" | "pausedAt"]?: number | undefined } & { readonly holder?: PermitEntry["holder"] }

/** The entry with `patch` applied; optional fields patched to `undefined` are dropped, so the record stays as written. */
const patched = (e: PermitView, patch: Patch): PermitView => {
  const next: Record<string, unknown> = { ...e, ...patch }
  for (const k of Object.keys(patch)) if (next[k] === undefined) delete next[k]
  return next as unknown as PermitView
}

/** The stored record: the view without `gone`. */
const toEntry = (v: PermitView): PermitEntry => {
  const { gone: _gone, ...entry } = v
  return entry
}

/** One step's working table; mutated only inside `stepPermits`. */
class Work {
  readonly table = new Map<string, PermitView>()
  readonly inInput = new Set<string>()
  readonly removed = new Set<string>()
  readonly touched = new Set<string>()
  readonly dropped = new Map<string, DropCause>()
  readonly decisions: Array<PermitDecision> = []
  constructor(readonly now: number) {}

  put(v: PermitView): void {
    this.table.set(v.id, v)
    this.touched.add(v.id)
    this.removed.delete(v.id)
  }

  update(e: PermitView, patch: Patch): PermitView {
    let same = true
    for (const k of Object.keys(patch) as Array<keyof Patch>) if (e[k] !== patch[k]) same = false
    if (same) return e
    const next = patched(e, patch)
    this.put(next)
    return next
  }

  remove(e: PermitView): void {
    this.table.delete(e.id)
    this.touched.delete(e.id)
    if (this.inInput.has(e.id)) this.removed.add(e.id)
  }

  /** Removes an entry with its decision: `release` when it held units, else `cancel`. */
  leave(e: PermitView, releaseCause: "released" | DropCause, cancelCause: CancelCause | DropCause): void {
    this.remove(e)
    this.decisions.push(
      isHeld(e)
        ? { type: "permit", at: this.now, act: "release", id: e.id, budget: e.budget, weight: e.weight, cause: releaseCause }
        : { type: "permit", at: this.now, act: "cancel", id: e.id, budget: e.budget, weight: e.weight, cause: cancelCause }
    )
  }

  /** A cancel by its requester: `cancel` with its cause, held or queued. */
  cancel(e: PermitView, cause: CancelCause): void {
    this.remove(e)
    this.decisions.push({ type: "permit", at: this.now, act: "cancel", id: e.id, budget: e.budget, weight: e.weight, cause })
  }

  drop(e: PermitView, cause: DropCause): void {
    this.dropped.set(e.id, cause)
    this.leave(e, cause, cause)
  }

  refuse(id: string, budget: string, reason: RefuseReason): PermitAnswer {
    this.decisions.push({ type: "permit", at: this.now, act: "refuse", id, budget, reason })
    return { state: "refused", reason }
  }

  /** Its client asked: a queued pausable entry is seen now, a paused one resumes. */
  seen(e: PermitView): void {
    if (isHeld(e) || e.seenAt === undefined) return
    if (e.pausedAt !== undefined) {
      this.update(e, { seenAt: this.now, pausedAt: undefined })
      this.decisions.push({ type: "permit", at: this.now, act: "resume", id: e.id, budget: e.budget })
    } else this.update(e, { seenAt: this.now })
  }
}

/** Position in its budget's queue: 1 + the non-paused queued entries of the budget before it. */
const positionOf = (table: ReadonlyMap<string, PermitView>, e: PermitEntry): number => {
  let n = 1
  for (const o of table.values()) if (o.budget === e.budget && !isHeld(o) && o.pausedAt === undefined && bySeq(o, e) < 0) n++
  return n
}

const answerFor = (w: Work, id: string): PermitAnswer => {
  const e = w.table.get(id)
  if (e === undefined) return { state: "gone", cause: w.dropped.get(id) ?? "requester gone" }
  if (e.grantedAt !== undefined) return { state: "granted", id, waitedMs: Math.max(0, e.grantedAt - e.requestedAt), before: e.ahead ?? 0 }
  return { state: "queued", id, position: positionOf(w.table, e), paused: e.pausedAt !== undefined }
}

/** Grants and pauses what the FIFO order allows, budget by budget (one walk over all, in seq order). */
const walk = (w: Work, capacities: Capacities): void => {
  const sorted = [...w.table.values()].sort(bySeq)
  const used = new Map<string, number>()
  for (const e of sorted) if (isHeld(e)) used.set(e.budget, (used.get(e.budget) ?? 0) + e.weight)
  const blocked = new Set<string>()
  for (const e of sorted) {
    if (isHeld(e) || e.pausedAt !== undefined) continue
    const cap = capacityOf(capacities, e.budget)
    if (cap === undefined) continue
    if (blocked.has(e.budget)) {
      // behind the head: not the head any more (an earlier entry resumed)
      if (e.headSince !== undefined) w.update(e, { headSince: undefined })
      continue
    }
    // e is the head of its budget's queue
    if (e.seenAt !== undefined && e.headSince !== undefined && w.now - Math.max(e.seenAt, e.headSince) > PAUSE_AFTER_MS) {
      w.update(e, { pausedAt: w.now, headSince: undefined })
      w.decisions.push({ type: "permit", at: w.now, act: "pause", id: e.id, budget: e.budget })
      continue
    }
    const u = used.get(e.budget) ?? 0
    if (u + e.weight <= cap) {
      used.set(e.budget, u + e.weight)
      w.update(e, { grantedAt: w.now, headSince: undefined })
      w.decisions.push({ type: "permit", at: w.now, act: "grant", id: e.id, budget: e.budget, weight: e.weight, waitedMs: Math.max(0, w.now - e.requestedAt), before: e.ahead ?? 0 })
      continue
    }
    blocked.add(e.budget)
    if (e.seenAt !== undefined && e.headSince === undefined) w.update(e, { headSince: w.now })
  }
}

/** One step: settle, the op, the grant walk (see the module comment). */
export const stepPermits = (entries: ReadonlyArray<PermitView>, capacities: Capacities, op: PermitOp, now: number): PermitStep => {
  const w = new Work(now)
  let maxSeq = 0
  for (const e of entries) {
    w.table.set(e.id, e)
    w.inInput.add(e.id)
    if (e.seq > maxSeq) maxSeq = e.seq
  }
  const gone = entries.filter((e) => e.gone).sort(bySeq)
  for (const e of gone) w.drop(e, isHeld(e) ? "holder gone" : "requester gone")

  let answer: PermitAnswer = ALREADY
  /** The op's own request, answered after the walk. */
  let asked: string | undefined
  /** A new request: where its `queue` decision goes if it is not granted at once. */
  let fresh: { readonly id: string; readonly at: number } | undefined
  switch (op.op) {
    case "settle":
      break
    case "request": {
      const r = op.entry
      const existing = w.table.get(r.id)
      if (existing !== undefined) {
        if (existing.token !== r.token) answer = w.refuse(r.id, existing.budget, "not yours")
        else {
          w.seen(existing)
          asked = r.id
        }
        break
      }
      const cap = capacityOf(capacities, r.budget)
      if (cap === undefined) answer = w.refuse(r.id, r.budget, "unknown budget")
      else if (!weightFits(r.weight, cap)) answer = w.refuse(r.id, r.budget, "weight outside 1..capacity")
      else {
        let ahead = 0
        for (const o of w.table.values()) if (o.budget === r.budget) ahead++
        const entry: PermitView = {
          id: r.id,
          token: r.token,
          budget: r.budget,
          weight: r.weight,
          reason: r.reason,
          holder: r.holder,
          seq: maxSeq + 1,
          requestedAt: r.requestedAt,
          ...(r.seenAt === undefined ? {} : { seenAt: r.seenAt }),
          ahead,
          gone: false
        }
        w.put(entry)
        asked = r.id
        fresh = { id: r.id, at: w.decisions.length }
      }
      break
    }
    case "poll":
    case "rebind": {
      const e = w.table.get(op.id)
      if (e === undefined) answer = { state: "gone", cause: w.dropped.get(op.id) ?? "requester gone" }
      else if (e.token !== op.token) answer = w.refuse(e.id, e.budget, "not yours")
      else {
        const g = op.op === "rebind" ? op.group : undefined
        const cur = g !== undefined && (e.holder.group?.pgid !== g.pgid || e.holder.group?.startToken !== g.startToken) ? w.update(e, { holder: { ...e.holder, group: g } }) : e
        w.seen(cur)
        asked = e.id
      }
      break
    }
    case "release":
    case "cancel": {
      const e = w.table.get(op.id)
      if (e === undefined) answer = ALREADY
      else if (e.token !== op.token) answer = w.refuse(e.id, e.budget, "not yours")
      else {
        if (op.op === "release") w.leave(e, "released", "wait")
        else w.cancel(e, op.cause)
        answer = RELEASED
      }
      break
    }
    case "free": {
      const e = w.table.get(op.id)
      const dropped = w.dropped.get(op.id)
      if (e === undefined) answer = dropped !== undefined ? { state: "gone", cause: dropped } : w.refuse(op.id, "", "unknown permit")
      else if (!op.force) answer = w.refuse(e.id, e.budget, "holder alive")
      else {
        w.drop(e, "forced")
        answer = { state: "gone", cause: "forced" }
      }
      break
    }
  }

  walk(w, capacities)

  if (asked !== undefined) answer = answerFor(w, asked)
  if (fresh !== undefined) {
    const e = w.table.get(fresh.id)
    if (e !== undefined && !isHeld(e)) {
      w.decisions.splice(fresh.at, 0, { type: "permit", at: now, act: "queue", id: e.id, budget: e.budget, weight: e.weight, position: positionOf(w.table, e) })
    }
  }

  const out = [...w.table.values()].sort(bySeq)
  const put: Array<PermitEntry> = []
  for (const e of out) if (w.touched.has(e.id)) put.push(toEntry(e))
  return { entries: out, changes: { put, remove: [...w.removed] }, decisions: w.decisions, answer }
}
