/** The output lines of the spawn-trace state machine (TRACE.md §3). */
import type { CoolReason } from "../pool/cooldown.js"
import type { PermitDecision } from "../permits/types.js"
import type { ContextDecision } from "../context/refresh.js"
import type { Pass } from "../pool/routing.js"
import type { GroupBudget, LearnedQuota } from "../limits/learned.js"

export type ReleaseReason = "done" | "failed" | "signal" | "hung" | "unbound" | "gave_up"

export interface SlotView {
  readonly slot: number
  readonly model: string
  readonly weight: number
  readonly load: number
  readonly cap: number
  readonly cooling: { readonly until: number; readonly reason: CoolReason } | null
}

/** One output line. `route` also carries what it compared, for `--explain`; it is not printed. */
export type Decision =
  | {
      readonly type: "route"
      readonly at: number
      readonly claim: string
      readonly base: string
      readonly slot: number
      readonly model: string
      readonly agent: string
      readonly pass: Pass
      readonly loads: ReadonlyArray<number>
      readonly weights: ReadonlyArray<number>
      readonly cooling: ReadonlyArray<boolean>
    }
  | { readonly type: "refuse"; readonly at: number; readonly claim: string; readonly requested: string; readonly base: string }
  | {
      readonly type: "cool"
      readonly at: number
      readonly models: ReadonlyArray<string>
      readonly scope: "model" | "provider"
      readonly reason: CoolReason
      readonly until: number
      readonly strike: number
    }
  | { readonly type: "ignore"; readonly at: number; readonly reason: "context_limit" | "not_a_limit" }
  | { readonly type: "abort"; readonly at: number; readonly claim: string; readonly session: string; readonly ok: boolean }
  | { readonly type: "release"; readonly at: number; readonly claim: string; readonly cooled: boolean; readonly reason: ReleaseReason }
  /** A root session's model ran out (US-50): continue it on `to`; `until` is when `from` cools until. */
  | {
      readonly type: "switch"
      readonly at: number
      readonly session: string
      readonly from: string
      readonly to: string
      readonly via: "abort" | "idle" | "message"
      readonly until: number
    }
  /** A user message naming the cooling original runs on the episode's fallback (US-50). */
  | { readonly type: "model"; readonly at: number; readonly session: string; readonly requested: string; readonly model: string }
  /** A model group's learned budget after a `budget` line (issue 35): the record the commit writes, and what it has left. */
  | { readonly type: "budget"; readonly at: number; readonly record: GroupBudget; readonly quota?: LearnedQuota | undefined; readonly learned: boolean }
  | {
      readonly type: "status"
      readonly at: number
      readonly next: { readonly slot: number; readonly model: string; readonly pass: Pass }
      readonly slots: ReadonlyArray<SlotView>
      readonly reaped: number
    }
  /** A permit machine decision (issue 21): queue, grant, release, cancel, pause, resume, refuse. */
  | PermitDecision
  /** A context map refresh decision (issue 23): a run started, skipped, or done. */
  | ContextDecision
