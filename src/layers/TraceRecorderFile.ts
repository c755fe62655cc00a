/**
 * Records spawn traces (TRACE.md §4): input lines appended to the trace path (`%p` → pid), and the
 * decisions beside it in `<trace>.decisions.jsonl`. The decisions are produced by running each recorded
 * line through the same state machine `ocpool replay` uses, so a recording always replays to its own
 * decisions file. A failed write logs one warning and stops recording; routing goes on.
 */
import { Effect, Layer } from "effect"
import { appendFileSync, mkdirSync } from "node:fs"
import { dirname } from "node:path"
import { formatDecision } from "../core/trace/format.js"
import { feed, startReplay } from "../core/trace/replay.js"
import { AppLog } from "../services/AppLog.js"
import { TraceRecorder } from "../services/TraceRecorder.js"

export const tracePath = (template: string, pid: number): string => template.replaceAll("%p", String(pid))

export const TraceRecorderFile = (template: string | undefined) =>
  Layer.effect(
    TraceRecorder,
    Effect.gen(function* () {
      const log = yield* AppLog
      if (template === undefined) return { input: () => Effect.void }
      const path = tracePath(template, process.pid)
      const decisionsPath = `${path}.decisions.jsonl`
      let broken = false
      let lastAt = Number.NEGATIVE_INFINITY
      let cursor = startReplay()
      try {
        mkdirSync(dirname(path), { recursive: true })
      } catch {
        // reported by the first append
      }
      const input = (line: Record<string, unknown> & { readonly at: number; readonly type: string }) =>
        Effect.suspend(() => {
          if (broken) return Effect.void
          const at = Math.max(line.at, lastAt)
          lastAt = at
          const { at: _drop, type, ...rest } = line
          const text = JSON.stringify({ at, type, ...rest })
          const r = feed(cursor, text)
          const decided = r._tag === "Ok" ? r.decisions.map((d) => `${formatDecision(d)}\n`).join("") : ""
          if (r._tag === "Ok") cursor = r.cursor
          try {
            appendFileSync(path, `${text}\n`, { mode: 0o600 })
            if (decided !== "") appendFileSync(decisionsPath, decided, { mode: 0o600 })
            return Effect.void
          } catch (e) {
            broken = true
            return log.log("warn", `trace ${path} cannot be written (${(e as NodeJS.ErrnoException).code ?? String(e)}); recording stopped, routing continues`)
          }
        })
      return { input }
    })
  )
