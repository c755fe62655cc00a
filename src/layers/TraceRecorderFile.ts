/**
 * Records spawn traces (TRACE.md §4): the input lines the engine applied, appended to the trace path
 * (`%p` → pid) in the order they were applied, and the machine's decisions beside it in
 * `<trace>.decisions.jsonl`, as they were made. A failed write logs one warning and stops recording;
 * routing goes on.
 */
import { Effect, Layer } from "effect"
import { appendFileSync, mkdirSync } from "node:fs"
import { dirname } from "node:path"
import { formatDecision } from "../core/trace/format.js"
import { AppLog } from "../services/AppLog.js"
import { TraceRecorder } from "../services/TraceRecorder.js"

export const tracePath = (template: string, pid: number): string => template.replaceAll("%p", String(pid))

export const TraceRecorderFile = (template: string | undefined) =>
  Layer.effect(
    TraceRecorder,
    Effect.gen(function* () {
      const log = yield* AppLog
      if (template === undefined) return { record: () => Effect.void }
      const path = tracePath(template, process.pid)
      const decisionsPath = `${path}.decisions.jsonl`
      let broken = false
      try {
        mkdirSync(dirname(path), { recursive: true })
      } catch {
        // reported by the first append
      }
      return {
        record: (lines, decisions) =>
          Effect.suspend(() => {
            if (broken || lines.length === 0) return Effect.void
            try {
              appendFileSync(path, lines.map((l) => `${JSON.stringify(l)}\n`).join(""), { mode: 0o600 })
              if (decisions.length > 0) appendFileSync(decisionsPath, decisions.map((d) => `${formatDecision(d)}\n`).join(""), { mode: 0o600 })
              return Effect.void
            } catch (e) {
              broken = true
              return log.log("warn", `trace ${path} cannot be written (${(e as NodeJS.ErrnoException).code ?? String(e)}); recording stopped, routing continues`)
            }
          })
      }
    })
  )
