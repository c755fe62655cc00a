/**
 * The opencode plugin's gate for heavy bash commands (issue 21): `before` waits in `tool.execute.before`
 * for the command's permit (a waiting session is blocked, not hung), `after` releases it and says how
 * long it waited, `sessionEnded` ends a session's waits at once and releases what it holds (an abort or
 * an error of that session). The command itself is never rewritten. Every method is the span
 * `PermitGate.<method>`.
 */
import { Context, type Effect } from "effect"

export interface HeavyCall {
  readonly session: string
  readonly call: string
  /** The command as opencode will run it (its first line, bounded: the permit's reason). */
  readonly command: string
  readonly budget: string
  readonly weight: number
}

export interface PermitGateService {
  /**
   * Waits until the call holds its permit, or its session ended, or the permit could not be asked for
   * (logged). `"ended"`: the session was aborted while it waited, and its command must not run.
   */
  readonly before: (call: HeavyCall) => Effect.Effect<"run" | "ended">
  /** Releases the call's permit; the line to append to the tool's output when it waited. */
  readonly after: (session: string, call: string) => Effect.Effect<string | undefined>
  /** The session was aborted or failed: its waits end now (cancelled), its permits are released. */
  readonly sessionEnded: (session: string) => Effect.Effect<void>
}

/**
 * Thrown out of `tool.execute.before` when the session was aborted while its heavy command waited (US-51:
 * the command never runs). opencode spawns a tool whose hook returned even for an aborted session, and
 * kills it only afterwards: a shell could start before it is killed.
 */
export class PermitWaitEnded extends Error {
  constructor(readonly session: string) {
    super(`opencode-pool: session ${session} was aborted while its command waited for a heavy-work permit; the command does not run`)
    this.name = "PermitWaitEnded"
  }
}

export class PermitGate extends Context.Tag("opencode-pool/PermitGate")<PermitGate, PermitGateService>() {}
