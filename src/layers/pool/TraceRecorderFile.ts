/**
 * Records spawn traces (TRACE.md §4): the input lines the engine applied, appended to the trace path
 * (`%p` → pid) in the order they were applied, and the machine's decisions beside it in
 * `<trace>.decisions.jsonl`, as they were made. A trace path whose directory cannot be created, or
 * that is not a regular file, logs one warning at boot and nothing is recorded; a failed write logs
 * one warning and stops recording; routing goes on either way. Files are opened without blocking, so a
 * FIFO at the trace path cannot stall a spawn.
 */
import { Effect, Layer } from "effect"
import { closeSync, constants, openSync, statSync, writeSync } from "node:fs"
import { dirname } from "node:path"
import { formatDecision } from "../../core/trace/format.js"
import { TraceRecorder } from "../../services/pool/TraceRecorder.js"
import { dirReason, makeDir } from "../fs/dirs.js"
import { spanned, traced } from "../hotPath.js"

export const tracePath = (template: string, pid: number): string => template.replaceAll("%p", String(pid))

/** Append, create if missing, never block on a FIFO (ENXIO without a reader instead). */
const APPEND = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NONBLOCK

const append = (path: string, text: string): void => {
  const fd = openSync(path, APPEND, 0o600)
  try {
    writeSync(fd, text)
  } finally {
    closeSync(fd)
  }
}

/** Why `path` cannot take appends, checked once at boot; `undefined` when it can (or is not there yet). */
const unusable = (path: string): string | undefined => {
  const problem = makeDir(dirname(path), 0o700)
  if (problem !== undefined) return `${problem.path}: ${dirReason(problem.code)}`
  try {
    return statSync(path).isFile() ? undefined : "not a regular file"
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    return code === "ENOENT" ? undefined : dirReason(code ?? String(e))
  }
}

export const TraceRecorderFile = (template: string | undefined) =>
  Layer.effect(
    TraceRecorder,
    Effect.gen(function* () {
      if (template === undefined) return { record: () => spanned(Effect.void, "TraceRecorder.record") }
      const path = tracePath(template, process.pid)
      const decisionsPath = `${path}.decisions.jsonl`
      const why = unusable(path) ?? unusable(decisionsPath)
      let broken = why !== undefined
      if (why !== undefined) yield* Effect.logWarning(`trace ${path} cannot be written (${why}); recording stopped, routing continues`)
      return {
        record: traced("TraceRecorder.record")(function* (lines, decisions) {
          if (broken || lines.length === 0) return
          try {
            append(path, lines.map((l) => `${JSON.stringify(l)}\n`).join(""))
            if (decisions.length > 0) append(decisionsPath, decisions.map((d) => `${formatDecision(d)}\n`).join(""))
          } catch (e) {
            broken = true
            yield* Effect.logWarning(`trace ${path} cannot be written (${(e as NodeJS.ErrnoException).code ?? String(e)}); recording stopped, routing continues`)
          }
        })
      }
    })
  )
