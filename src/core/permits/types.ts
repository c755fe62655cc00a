/**
 * Machine-wide permits for heavy work (issue 21): the records and the machine's vocabulary.
 *
 * A budget (`heavy` always; users add others) has a capacity in units. A request asks for `weight`
 * units of one budget; requests are served first-in first-out with head-of-line blocking: a queued
 * request is granted before any later one, even a later one that would fit. Every process on the
 * machine sees the same entries through the shared-state port (`SharedState`, record kind `permits`).
 * Pure data: no I/O, no clock.
 */

/** Who holds (or waits for) a permit. Judged like every holder (core/state/holder.ts). */
export interface PermitHolder {
  readonly host: string
  readonly pid: number
  /** Linux: field 22 of /proc/<pid>/stat; null where there is none. */
  readonly startToken: string | null
  /** The opencode session the command runs for, when there is one. */
  readonly session?: string | undefined
  /**
   * `ocpool run`: the command's process group. The entry stays alive while any process of the group
   * lives, even after the runner itself (the `pid` above) died.
   */
  readonly group?: { readonly pgid: number; readonly startToken: string | null } | undefined
  /** Which front end asked: the opencode plugin, `ocpool run`, the MCP server. */
  readonly via: PermitVia
}

export type PermitVia = "plugin" | "run" | "mcp"

/** One request, queued or held. */
export interface PermitEntry {
  /** Public id (`p-…`): shown by `ocpool permits`, accepted by `ocpool permits release ID`. */
  readonly id: string
  /** Secret the requester keeps: a release or cancel must carry it. */
  readonly token: string
  readonly budget: string
  /** Units asked for, 1..capacity. */
  readonly weight: number
  /** What for (the command, or the MCP client's reason), one printable line. */
  readonly reason: string
  readonly holder: PermitHolder
  /** FIFO order: assigned by the machine when the request is queued (greater than every entry's). */
  readonly seq: number
  readonly requestedAt: number
  /** Set once granted: the entry is held from then on. */
  readonly grantedAt?: number | undefined
  /**
   * Requests whose client comes back by itself (MCP): the last time the client asked. A queued pausable
   * request at the head for more than PAUSE_AFTER_MS without its client asking is skipped (paused)
   * until the client asks again. Absent: never paused (the plugin and `ocpool run` wait actively).
   */
  readonly seenAt?: number | undefined
  /** Entries of its budget held or queued ahead of it when it was queued: they run before it (the waited line). */
  readonly ahead?: number | undefined
  /** Pausable requests: when it became the head of its budget's queue. */
  readonly headSince?: number | undefined
  /** Pausable requests: when it was paused (skipped by the grant walk until its client asks again); absent when not paused. */
  readonly pausedAt?: number | undefined
}

/** An entry as a backend read it: `gone` when its holder is gone (core/state/holder.ts, with the group rule). */
export interface PermitView extends PermitEntry {
  readonly gone: boolean
}

/** A queued pausable request whose client has not asked for this long since reaching the head is paused. */
export const PAUSE_AFTER_MS = 30_000

/** The budget that always exists. */
export const HEAVY = "heavy"

/** Capacities by budget name (units), as this process configured them. */
export type Capacities = Readonly<Record<string, number>>

/** What changed in the shared permit records (the commit). */
export interface PermitChanges {
  /** Entries written as they are (new, granted, paused-state or holder changes). */
  readonly put: ReadonlyArray<PermitEntry>
  /** Entry ids removed (released, cancelled, dropped). */
  readonly remove: ReadonlyArray<string>
}

export const NO_PERMIT_CHANGES: PermitChanges = { put: [], remove: [] }

/** What a front end asks of the permit machine. */
export type PermitOp =
  /** A new request (its seq is assigned by the machine). */
  | { readonly op: "request"; readonly entry: Omit<PermitEntry, "seq" | "grantedAt" | "headSince" | "ahead"> }
  /** The requester checks on its request (a pausable one counts as its client coming back). */
  | { readonly op: "poll"; readonly id: string; readonly token: string }
  /** The holder is done (idempotent: an unknown id is `already`). */
  | { readonly op: "release"; readonly id: string; readonly token: string }
  /** A queued or held request given up by its requester (the session was aborted, `--wait` ran out, …). */
  | { readonly op: "cancel"; readonly id: string; readonly token: string; readonly cause: CancelCause }
  /** `ocpool run`: the holder becomes the command's process group once it started. */
  | { readonly op: "rebind"; readonly id: string; readonly token: string; readonly group: { readonly pgid: number; readonly startToken: string | null } }
  /** `ocpool permits release ID`: frees an entry whose holder is gone, or any with `force`. */
  | { readonly op: "free"; readonly id: string; readonly force: boolean }
  /** Drop gone holders and grant what the FIFO order allows (any transaction may settle). */
  | { readonly op: "settle" }

export type CancelCause = "aborted" | "timeout" | "wait" | "error" | "dispose"

/** Why an entry left without its own release. */
export type DropCause = "holder gone" | "requester gone" | "forced"

/** The machine's decisions (trace decision lines `{"type":"permit",…}`). */
export type PermitDecision =
  | { readonly type: "permit"; readonly at: number; readonly act: "queue"; readonly id: string; readonly budget: string; readonly weight: number; readonly position: number }
  | { readonly type: "permit"; readonly at: number; readonly act: "grant"; readonly id: string; readonly budget: string; readonly weight: number; readonly waitedMs: number; readonly before: number }
  | { readonly type: "permit"; readonly at: number; readonly act: "release"; readonly id: string; readonly budget: string; readonly weight: number; readonly cause: "released" | DropCause }
  | { readonly type: "permit"; readonly at: number; readonly act: "cancel"; readonly id: string; readonly budget: string; readonly weight: number; readonly cause: CancelCause | DropCause }
  | { readonly type: "permit"; readonly at: number; readonly act: "pause" | "resume"; readonly id: string; readonly budget: string }
  | { readonly type: "permit"; readonly at: number; readonly act: "refuse"; readonly id: string; readonly budget: string; readonly reason: RefuseReason }

export type RefuseReason = "unknown budget" | "weight outside 1..capacity" | "not yours" | "holder alive" | "unknown permit"

/** What the requester learns from one step about its own request. */
export type PermitAnswer =
  | { readonly state: "granted"; readonly id: string; readonly waitedMs: number; readonly before: number }
  | { readonly state: "queued"; readonly id: string; readonly position: number; readonly paused: boolean }
  | { readonly state: "released" }
  | { readonly state: "already" }
  | { readonly state: "gone"; readonly cause: CancelCause | DropCause }
  | { readonly state: "refused"; readonly reason: RefuseReason }

/** One step of the machine: the next entries (of every budget), what changed, the decisions, the requester's answer. */
export interface PermitStep {
  readonly entries: ReadonlyArray<PermitView>
  readonly changes: PermitChanges
  readonly decisions: ReadonlyArray<PermitDecision>
  readonly answer: PermitAnswer
}
