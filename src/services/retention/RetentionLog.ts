/** The data-directory records of the retention sweeps (SPEC §2.1): the archive of retired sessions and the run logs. */
import { Context, Data, type Effect } from "effect"

export class RetentionLogError extends Data.TaggedError("RetentionLogError")<{ readonly path: string; readonly reason: string }> {}

export type RunLog = "session-retire" | "event-prune"

export interface RetentionLogService {
  /** Where the archive is (`archive/retired-sessions.jsonl`). */
  readonly archivePath: string
  readonly runPath: (log: RunLog) => string
  /** Appends the lines and fsyncs before returning: the archive must be on disk before any row goes. */
  readonly archive: (lines: ReadonlyArray<string>) => Effect.Effect<void, RetentionLogError>
  readonly run: (log: RunLog, line: string) => Effect.Effect<void, RetentionLogError>
}

export class RetentionLog extends Context.Tag("opencode-pool/RetentionLog")<RetentionLog, RetentionLogService>() {}
