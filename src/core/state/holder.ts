/**
 * Whether the holder of a shared record (a claims table, the pool lock, a permit) is gone (SPEC §5.2, §5.3).
 * A holder is `{ host, pid, startToken }` with a lease: past the lease it is gone wherever it ran; on
 * this host it is also gone once its pid is dead, or alive under another start token (the pid was
 * reused). A holder on another host is judged by its lease alone. Pure: the backend gathers the facts.
 */

export interface Holder {
  readonly host: string | null
  readonly pid: number
  /** The start token it wrote (Linux: field 22 of /proc/<pid>/stat), or null where there is none. */
  readonly startToken: string | null
}

/** What the backend saw of a holder on its own host (nothing for one elsewhere). */
export interface HolderFacts {
  /** `kill(pid, 0)`: undefined when not asked (another host). */
  readonly pidState?: "alive" | "dead" | undefined
  /** The start token of the process running under that pid now (undefined: not read). */
  readonly liveStartToken?: string | null | undefined
}

/** Whether the backend needs this host's process facts for `holder` (they are only read for a local holder). */
export const isLocal = (holder: Holder, ownHost: string): boolean => holder.host === ownHost

/** `true` when the holder is gone: its lease ran out, or (on this host) its process is dead or another one. */
export const holderGone = (holder: Holder, leaseUntil: number, facts: HolderFacts, ownHost: string, now: number): boolean => {
  if (now > leaseUntil) return true
  if (!isLocal(holder, ownHost)) return false
  if (facts.pidState === "dead") return true
  return facts.pidState === "alive" && holder.startToken != null && facts.liveStartToken != null && holder.startToken !== facts.liveStartToken
}

/**
 * A permit's holder (issue 21): a holder as above, and for `ocpool run` the command's process group,
 * which keeps the permit while any of its processes lives, even after the runner itself died.
 */
export interface PermitHolderLike extends Holder {
  readonly group?: { readonly pgid: number; readonly startToken: string | null } | undefined
}

/** The holder facts, and for a local holder with a group whether any process of it lives (undefined: not asked). */
export interface PermitFacts extends HolderFacts {
  readonly groupAlive?: boolean | undefined
}

/**
 * `true` when a permit's holder is gone: `holderGone` says so, and when it has a group, the lease ran
 * out or the group is known to have no live member. A group not looked at holds (as a local holder
 * with no facts gathered does).
 */
export const permitGone = (holder: PermitHolderLike, leaseUntil: number, facts: PermitFacts, ownHost: string, now: number): boolean =>
  holderGone(holder, leaseUntil, facts, ownHost, now) && (holder.group == null || now > leaseUntil || facts.groupAlive === false)
