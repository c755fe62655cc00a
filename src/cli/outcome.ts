/**
 * How a command's run becomes an exit code (SPEC §12.1: 0 ok, 1 failure, 2 bad input, 75 busy), shared
 * by the full command tree (app.ts) and the fast `status` path (statusMain.ts). No @effect/cli here: the
 * fast path must not load it.
 */
import { Cause, Effect, Layer, Logger, Option } from "effect"
import { describeFailure, type CliFailure, type BadInput, type CostUnknown, type PathUnusable, type SweepIncomplete } from "./errors.js"
import { stderrLine, stderrLogger as processStderrLogger } from "../layers/process/LoggerStderr.js"
import { appLevelOf, lineOf } from "../layers/opencode/LoggerAppLog.js"
import { type CliIo, diagnostic, drain, forStream, isClosedPipe, OutputFailed, recordedFailure, withIo, writeOut, writeReason } from "./output.js"

/** One diagnostic line and the exit code it stands for. */
export const fail = (f: { readonly message: string; readonly exitCode: number }): Effect.Effect<number> => Effect.as(diagnostic(f.message), f.exitCode)

type Typed = CliFailure | PathUnusable | BadInput | SweepIncomplete | CostUnknown

/** Every typed failure of a command mapped to its line and exit code. */
export const exitCodeOfFailures = <R>(self: Effect.Effect<number, unknown, R>): Effect.Effect<number, unknown, R> =>
  Effect.catchIf(
    self,
    (e: unknown): e is Typed => typeof e === "object" && e !== null && "_tag" in e && TYPED.has((e as { _tag: string })._tag),
    (e: Typed) => {
      switch (e._tag) {
        case "ChecksFailed":
          return Effect.succeed(1)
        case "BadInput":
          return fail({ message: e.message, exitCode: 2 })
        case "SweepIncomplete":
          return fail(e)
        case "CostUnknown":
          return fail({ message: e.message, exitCode: 1 })
        default:
          return fail(describeFailure(e))
      }
    }
  )

const TYPED = new Set(["FileUnreadable", "TraceInvalid", "ExpectMismatch", "PoolUnusable", "StateUnreadable", "InitRefused", "PathUnusable", "BadInput", "SweepIncomplete", "ChecksFailed", "CostUnknown"])

/** The first line of a defect's message, for the one line an unexpected failure gets. */
const defectLine = (defect: unknown): string => {
  const text = defect instanceof Error ? defect.message : typeof defect === "string" ? defect : String(defect)
  return text.split("\n")[0]!.slice(0, 300)
}

/**
 * Effect's own log lines (a forked fiber's unhandled failure, `--log-level`) as one line each on stderr,
 * never a pretty-printed cause on stdout.
 */
const stderrLogger = (io: CliIo) =>
  Logger.make<unknown, void>(({ logLevel, message, cause }) => {
    try {
      io.stderr.write(forStream(io, io.stderr, stderrLine(appLevelOf(logLevel), lineOf(message, cause).slice(0, 300))), () => {})
    } catch {
      // stderr is gone: nowhere to say it
    }
  })

/**
 * Runs a command's effect on `io` and resolves to the exit code. A closed stdout ends the run quietly
 * with the command's own code; any other write failure is `ocpool: cannot write output: <reason>` and 1;
 * an unexpected failure or defect is one line and 1.
 */
export const finishRun = (run: Effect.Effect<number, unknown>, io: CliIo): Effect.Effect<number> =>
  run.pipe(
    Effect.catchAllCause((cause): Effect.Effect<number | "output"> => {
      if (Cause.isInterruptedOnly(cause)) return Effect.succeed(1)
      if (Option.exists(Cause.dieOption(cause), (d) => d instanceof OutputFailed)) return Effect.succeed("output")
      const failure = Cause.failureOption(cause)
      const reason = Option.isSome(failure) ? defectLine(failure.value) : Option.match(Cause.dieOption(cause), { onNone: () => "interrupted", onSome: defectLine })
      return fail({ message: `internal error: ${reason}`, exitCode: 1 })
    }),
    Effect.flatMap((code) =>
      Effect.zipRight(
        drain(io),
        Effect.suspend(() => {
          const failed = recordedFailure(io)
          // a write failed but no record is left (cannot happen): a failure all the same
          if (failed === undefined) return Effect.succeed(code === "output" ? 1 : code)
          // the reader closed the pipe (`ocpool status | head -1`): stop quietly, with the command's own code
          if (isClosedPipe(failed)) return Effect.succeed(code === "output" ? 0 : code)
          // stderr itself is unwritable: nowhere to say why
          if (failed.stream === "stderr") return Effect.succeed(code === "output" || code === 0 ? 1 : code)
          return Effect.as(Effect.catchAllDefect(writeOut(io, "stderr", `ocpool: cannot write output: ${writeReason(failed.error)}\n`), () => Effect.void), 1)
        })
      )
    ),
    withIo(io),
    // one logger: the io's stderr in place of Effect's default and of main.ts's process-wide LoggerStderr
    // (which still serves fibers that outlive this scope), so a line is never printed twice
    Effect.provide(Layer.merge(Logger.remove(processStderrLogger), Logger.replace(Logger.defaultLogger, stderrLogger(io))))
  )
