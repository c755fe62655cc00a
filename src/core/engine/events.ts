/**
 * What the engine takes and gives (SPEC §6–§8): the opencode events the hooks hand it, what one event
 * needs of the shared state, and the outcome of stepping one (the next state, the trace lines applied,
 * the machine's decisions and the effects the shell carries out). Types, and the one `NeedSnapshot`.
 */
import type { Claim } from "../pool/claims.js"
import type { Cooldown } from "../pool/cooldown.js"
import type { FallbackRecord } from "../quota/fallbackRecord.js"
import type { GroupBudget } from "../limits/learned.js"
import type { QuotaRecord } from "../quota/record.js"
import type { Slot } from "../pool/pool.js"
import type { QuotaObservation } from "../quota/headers.js"
import type { Decision } from "../trace/decision.js"
import type { TraceInput } from "../trace/input.js"
import type { LogLevel } from "../options.js"
import type { EngineState } from "./state.js"
import type { LastRun, MapStamp } from "../context/refresh.js"
import type { EngineEffect } from "./effects.js"
import type { Count } from "../metrics/counters.js"

export type { RefreshOrder, SwitchOrder } from "./effects.js"

export type { LogLevel } from "../options.js"

/** What a log line is about, beside its text: the shell sends them as the line's annotations (issue 34). */
export interface LogAnnotations {
  readonly claim?: string
  readonly session?: string
  readonly model?: string
}

export interface LogLine {
  readonly level: LogLevel
  readonly message: string
  /** Absent on lines about no claim, session or model; never holds an undefined value. */
  readonly annotations?: LogAnnotations
}

/** The annotations of a line about a claim, a session and a model, each that is known (`null`, `undefined` and "" are not). */
export const logAbout = (claim: string | null | undefined, session: string | null | undefined, model: string | null | undefined): LogAnnotations => {
  const a: { claim?: string; session?: string; model?: string } = {}
  if (claim) a.claim = claim
  if (session) a.session = session
  if (model) a.model = model
  return a
}

/** One opencode happening, as the hooks see it. */
export type EngineEvent =
  | {
      readonly type: "pool"
      readonly slots: ReadonlyArray<Slot>
      readonly origin: string
      readonly warnings: ReadonlyArray<string>
      /** The option `fallbackModels` (US-50), validated. */
      readonly fallbacks?: ReadonlyArray<string> | undefined
    }
  | { readonly type: "spawn"; readonly owner: string; readonly call: string; readonly base: string; readonly taskId?: string | undefined }
  | { readonly type: "taskEnd"; readonly claim: string; readonly ok: boolean }
  | { readonly type: "child"; readonly id: string; readonly parent: string; readonly agent?: string | undefined; readonly title?: string | undefined }
  /** `assistant`: an assistant message of the session was written (a model request started; issue 35). */
  | { readonly type: "activity"; readonly session: string; readonly assistant?: boolean | undefined }
  | { readonly type: "ask"; readonly session: string; readonly id: string }
  | { readonly type: "answered"; readonly session: string; readonly id: string }
  | { readonly type: "busy"; readonly session: string }
  /** `context`: the map as it is and whether a refresh was asked for (issue 23), added by the shell when the context map is on. */
  | { readonly type: "idle"; readonly session: string; readonly context?: { readonly map: MapStamp; readonly requested: boolean } | undefined }
  | { readonly type: "output"; readonly session: string }
  /** `chat.params`: a model request of `session` starts, on `model` (`provider/model`) for `agent`. */
  | { readonly type: "request"; readonly session: string; readonly model?: string | undefined; readonly agent?: string | undefined }
  /** `chat.message`: a user message of `session` is created on `model` for `agent` (US-50: it may run on a fallback instead). */
  | { readonly type: "message"; readonly session: string; readonly model: string; readonly agent?: string | undefined }
  /** The outcome of carrying out a `switch` (US-50): the "continue" prompt on `to` was sent, or why not. */
  | { readonly type: "switched"; readonly session: string; readonly to: string; readonly ok: boolean; readonly reason: string }
  | { readonly type: "error"; readonly session: string; readonly error: unknown; readonly model?: string | undefined }
  | { readonly type: "retry"; readonly session: string; readonly message: string; readonly next: number; readonly provider?: string | undefined }
  /**
   * A provider answered a request of `session` with an error status (issue 19): what it said, kept for
   * the retry status opencode publishes next (which carries only a message).
   */
  | {
      readonly type: "failed"
      readonly session: string
      readonly status: number
      readonly headers: Readonly<Record<string, string>>
      readonly body: string
    }
  | { readonly type: "sweep" }
  | { readonly type: "aborted"; readonly claim: string; readonly ok: boolean; readonly reason: string }
  | { readonly type: "status" }
  /**
   * A provider response's rate-limit headers (issue 12): `model` when the shell could tell it from the
   * request, else the model of the claim whose session sent it; `reserve` the option `quotaReserve`.
   */
  | {
      readonly type: "response"
      readonly headers: Readonly<Record<string, string>>
      readonly model?: string | undefined
      readonly session?: string | undefined
      readonly reserve: number
    }
  /**
   * A provider answered a request without an error (issue 35): `model` when the shell could tell it
   * from the request, else the model of the claim whose session sent it. Counted in its group's budget.
   */
  | { readonly type: "sent"; readonly model?: string | undefined; readonly session?: string | undefined; readonly reserve: number }
  /** What a 429 taught (the `Learn` effect of its signal's turn, issue 35): its models' groups learn their budgets. */
  | { readonly type: "learn"; readonly models: ReadonlyArray<string>; readonly resetAt?: number | undefined }
  /** A model request of `session` is being built (issue 12, US-49): the coaching line, when it is due. */
  | { readonly type: "coach"; readonly session: string; readonly model: string }
  /** The context map's record as the state directory kept it (issue 23), at start: the project root and the refresh queue. */
  | {
      readonly type: "contextLoad"
      readonly root: string
      readonly maxBytes: number
      readonly pending: ReadonlyArray<string>
      readonly dropped: number
      readonly lastStartedAt: number | undefined
      readonly lastRun: LastRun | undefined
    }
  /** An edit, write or patch tool of `session` finished (issue 23): the paths it wrote, as the tool named them. */
  | { readonly type: "contextEdit"; readonly session: string; readonly paths: ReadonlyArray<string> }
  /** A refresh run's session was created and prompted (issue 23). */
  | { readonly type: "contextBound"; readonly run: string; readonly session: string }
  /** A refresh run could not be started (its session not created, or not prompted): it failed. */
  | { readonly type: "contextEnd"; readonly run: string; readonly map: MapStamp; readonly reason: string }

/**
 * What one step writes to the shared state (the shell hands it to the port's `commit` or `transact`):
 * its claims when they changed, the cooldown records it made or dropped, the quota record the response
 * headers stated (throttled: core/state/quotaMemo.ts), the fallback records of the switches it decided
 * and of the episode that ended.
 */
export interface EngineCommit {
  /** This process's claims, when they (or its reaped count) changed and must be published. */
  readonly claims: { readonly claims: ReadonlyArray<Claim>; readonly reaped: number } | undefined
  /** Cooldown records to write (the machine's records after this event). */
  readonly cool: ReadonlyArray<Cooldown>
  /** Models whose record the machine dropped (a success after the window): their records go. */
  readonly uncool: ReadonlyArray<string>
  readonly quota: ReadonlyArray<QuotaRecord> | undefined
  /** The model groups' budget records the turn decided (issue 35). */
  readonly learned?: ReadonlyArray<GroupBudget> | undefined
  readonly fallbacks: ReadonlyArray<FallbackRecord> | undefined
  /** The session whose fallback episode ended (`message`: its original recovered): its record goes. */
  readonly endFallbacks: ReadonlyArray<string> | undefined
  /** The counters the turn's decisions add to (issue 36: core/metrics/engineCounts.ts), one per counter; absent when none (or `metrics: false`). */
  readonly counts?: ReadonlyArray<Count> | undefined
}

export interface Applied {
  readonly _tag: "Applied"
  readonly state: EngineState
  /** The input lines applied to the trace machine, in order: what the recorder writes. */
  readonly lines: ReadonlyArray<TraceInput>
  readonly decisions: ReadonlyArray<Decision>
  readonly logs: ReadonlyArray<LogLine>
  /** For `response`: the quota the headers stated (the commit's quota record is what the write throttle lets through). */
  readonly observed?: { readonly model: string; readonly observation: QuotaObservation } | undefined
  /** What the shell carries out, each by its feature's runner (effects.ts). */
  readonly effects: ReadonlyArray<EngineEffect>
  /** What the shell writes to the shared state for it. */
  readonly commit: EngineCommit
}

/**
 * What deciding one event needs of the shared state, declared before the event is stepped: `none`
 * (this process's state is enough), `read` (the snapshot read without the pool lock: the decision
 * writes nothing shared) or `transact` (read, decide and write under the lock); `peers` when the
 * decision counts the other processes' claims (routing, the status view). The shell turns it into
 * the records it asks the `SharedState` port for.
 */
export interface EventNeeds {
  readonly shared: "none" | "read" | "transact"
  readonly peers: boolean
  /** The model groups' learned budgets (issue 35): a request's outcome counts in them. */
  readonly learned?: boolean
}

/**
 * The event's decision reads shared state (its `EventNeeds` say so, before anything is stepped) and no
 * snapshot was given: nothing changed; the shell reads the snapshot and steps the event with it.
 */
export interface NeedSnapshot {
  readonly _tag: "NeedSnapshot"
}

export type StepOutcome = Applied | NeedSnapshot

export const NEED_SNAPSHOT: NeedSnapshot = { _tag: "NeedSnapshot" }

/** A step that writes nothing. */
export const NO_COMMIT: EngineCommit = { claims: undefined, cool: [], uncool: [], quota: undefined, fallbacks: undefined, endFallbacks: undefined }

