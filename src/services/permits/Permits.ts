/**
 * Machine-wide permits for heavy work (issue 21): the port every front end uses (the opencode plugin's
 * gate, `ocpool run`, `ocpool mcp`, `ocpool permits`). Each call is one step of the pure permit machine
 * (src/core/permits/machine.ts) inside one `SharedState` transaction; its lines and decisions go to the
 * trace when one is recorded. Every method is the span `Permits.<method>`.
 */
import { Context, type Effect } from "effect"
import type { CancelCause, PermitAnswer, PermitHolder, PermitView } from "../../core/permits/types.js"
import type { BudgetInfo, BudgetView } from "../../core/permits/view.js"

/** A budget as the views show it (core/permits/view.ts). */
export type { BudgetView }

/** What a requester asks for. */
export interface PermitRequest {
  readonly budget: string
  readonly weight: number
  readonly reason: string
  readonly holder: PermitHolder
  /** The client comes back by itself (MCP): paused after 30 s at the head without asking. */
  readonly pausable?: boolean | undefined
}

/** A request as its requester keeps it: the id is public, the token is what releases it. */
export interface PermitTicket {
  readonly id: string
  readonly token: string
  readonly budget: string
  readonly weight: number
}

/** How a wait ended. */
export type WaitOutcome =
  | { readonly state: "granted"; readonly waitedMs: number; readonly before: number }
  | { readonly state: "timeout" }
  | { readonly state: "gone"; readonly cause: string }

/** One line of progress while waiting (position and holders), for a terminal status line. */
export interface WaitProgress {
  readonly position: number
  readonly paused: boolean
  readonly holders: ReadonlyArray<PermitView>
}

export interface PermitsService {
  /** Queues a request and grants it at once when the FIFO order allows. */
  readonly request: (req: PermitRequest) => Effect.Effect<{ readonly ticket: PermitTicket; readonly answer: PermitAnswer }>
  /** One check on a request (settles the table first). */
  readonly poll: (ticket: PermitTicket) => Effect.Effect<PermitAnswer>
  /**
   * Polls until granted, gone, or `deadline` (epoch ms on the Effect clock; none: no deadline). Interrupting
   * the wait leaves the request queued: the caller cancels it (a finalizer does).
   */
  readonly wait: (ticket: PermitTicket, options?: { readonly deadline?: number | undefined; readonly onProgress?: ((p: WaitProgress) => Effect.Effect<void>) | undefined }) => Effect.Effect<WaitOutcome>
  /** Releases a held or queued request; idempotent (`already`); another's token is `refused`. */
  readonly release: (ticket: Pick<PermitTicket, "id" | "token">) => Effect.Effect<PermitAnswer>
  readonly cancel: (ticket: Pick<PermitTicket, "id" | "token">, cause: CancelCause) => Effect.Effect<PermitAnswer>
  /** `ocpool run`: the permit follows the command's process group from now on. */
  readonly rebind: (ticket: Pick<PermitTicket, "id" | "token">, group: { readonly pgid: number; readonly startToken: string | null }) => Effect.Effect<PermitAnswer>
  /** `ocpool permits release ID [--force]`: frees an entry whose holder is gone (or any, forced). */
  readonly free: (id: string, force: boolean) => Effect.Effect<{ readonly answer: PermitAnswer; readonly found: PermitView | undefined }>
  /** The budgets this process knows, their capacities resolved once when the service was made (issue 34: `pool_status` renders them over its one snapshot). */
  readonly budgets: ReadonlyArray<BudgetInfo>
  /** Every budget this process knows, and entries of budgets it does not (with capacity 0 and source `unknown`). */
  readonly status: Effect.Effect<ReadonlyArray<BudgetView>>
}

export class Permits extends Context.Tag("opencode-pool/Permits")<Permits, PermitsService>() {}
