/** The archive and run logs on disk (US-32.9, US-33.12). */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { RetentionLogFile } from "../../src/layers/retention/RetentionLogFile.js"
import { RetentionLog } from "../../src/services/retention/RetentionLog.js"

const withDir = <A, E>(body: (dir: string) => Effect.Effect<A, E, RetentionLog>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "ocpool-log-"))),
    (dir) => body(dir).pipe(Effect.provide(RetentionLogFile(join(dir, "data")))),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

describe("RetentionLogFile", () => {
  it.live("US-32.9 archive lines are appended under archive/, in 0700 directories and a 0600 file", () =>
    withDir((dir) =>
      Effect.gen(function* () {
        const log = yield* RetentionLog
        yield* log.archive(['{"id":"a"}', '{"id":"b"}'])
        yield* log.archive(['{"id":"c"}'])
        const path = join(dir, "data", "archive", "retired-sessions.jsonl")
        expect(log.archivePath).toBe(path)
        expect(readFileSync(path, "utf8")).toBe('{"id":"a"}\n{"id":"b"}\n{"id":"c"}\n')
        expect(statSync(path).mode & 0o777).toBe(0o600)
        expect(statSync(join(dir, "data", "archive")).mode & 0o777).toBe(0o700)
      })
    )
  )

  it.live("US-32.9 a line torn by a crash does not swallow the next run's first line", () =>
    withDir(() =>
      Effect.gen(function* () {
        const log = yield* RetentionLog
        yield* log.archive(['{"id":"a"}'])
        appendFileSync(log.archivePath, '{"id":"tor')
        yield* log.archive(['{"id":"b"}'])
        expect(readFileSync(log.archivePath, "utf8").split("\n")).toEqual(['{"id":"a"}', '{"id":"tor', '{"id":"b"}', ""])
      })
    )
  )

  it.live("US-33.12 run lines go to runs/<log>.jsonl, one per call", () =>
    withDir((dir) =>
      Effect.gen(function* () {
        const log = yield* RetentionLog
        yield* log.run("event-prune", '{"n":1}')
        yield* log.run("event-prune", '{"n":2}')
        yield* log.run("session-retire", '{"n":3}')
        expect(readFileSync(join(dir, "data", "runs", "event-prune.jsonl"), "utf8")).toBe('{"n":1}\n{"n":2}\n')
        expect(readFileSync(log.runPath("session-retire"), "utf8")).toBe('{"n":3}\n')
      })
    )
  )
})
