/** RetentionLog in memory, for tests: the lines appended, readable through `RetentionLogMemory.lines`. */
import { Effect, Layer } from "effect"
import { RetentionLog, RetentionLogError, type RunLog } from "../../services/retention/RetentionLog.js"
import { traced } from "../hotPath.js"

export interface MemoryLines {
  readonly archive: Array<string>
  readonly runs: Record<RunLog, Array<string>>
  /** When set, every append fails with this reason. */
  failWith?: string
}

export const memoryLines = (): MemoryLines => ({ archive: [], runs: { "session-retire": [], "event-prune": [] } })

export const RetentionLogMemory = (lines: MemoryLines = memoryLines()) => {
  const guard = (path: string): Effect.Effect<void, RetentionLogError> =>
    lines.failWith === undefined ? Effect.void : Effect.fail(new RetentionLogError({ path, reason: lines.failWith }))
  return Layer.succeed(
    RetentionLog,
    RetentionLog.of({
      archivePath: "<memory>/archive/retired-sessions.jsonl",
      runPath: (log) => `<memory>/runs/${log}.jsonl`,
      archive: traced("RetentionLog.archive")((appended: ReadonlyArray<string>) => guard("archive").pipe(Effect.tap(() => lines.archive.push(...appended)))),
      run: traced("RetentionLog.run")((log: RunLog, line: string) => guard(log).pipe(Effect.tap(() => lines.runs[log].push(line))))
    })
  )
}
