/** `ocpool replay [FILE|-]` (SPEC §12.2, TRACE.md): re-runs the routing rules over a spawn trace. */
import { Args, Command, Options } from "@effect/cli"
import { FileSystem } from "@effect/platform"
import { type Chunk, Effect, Option, Stream } from "effect"
import { parsePoolText } from "../core/pool.js"
import { explainDecision, formatDecision } from "../core/trace/format.js"
import { feed, startReplay, type ReplayOptions } from "../core/trace/replay.js"
import { ExpectMismatch, FileUnreadable, fileReason, PoolUnusable, TraceInvalid, UsageProblem } from "./errors.js"
import { diagnostic, lineSink } from "./output.js"

const trace = Args.file({ name: "trace" }).pipe(
  Args.withDescription("The spawn trace (JSON Lines, TRACE.md); `-` or nothing reads standard input"),
  Args.withDefault("-")
)
const pool = Options.file("pool").pipe(
  Options.withDescription("A pool file (flat or JSON form) applied as a pool line before the first line"),
  Options.optional
)
const expect = Options.file("expect").pipe(
  Options.withDescription("A decisions file; exit 1 at the first line that differs"),
  Options.optional
)
const explain = Options.boolean("explain").pipe(Options.withDescription("One human sentence per decision on stderr"))
const json = Options.boolean("json").pipe(Options.withDescription("JSON Lines on stdout (always the case for replay)"))

const readText = (path: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => fs.readFileString(path)).pipe(
    Effect.mapError((e) => new FileUnreadable({ path, reason: fileReason(e) }))
  )

/** The trace's lines as a stream: a file, or standard input for `-`. */
const traceLines = (path: string) =>
  path === "-"
    ? Stream.fromAsyncIterable(process.stdin, (e) => new FileUnreadable({ path: "stdin", reason: String(e) })).pipe(
        Stream.map((chunk: Buffer | string) => (typeof chunk === "string" ? chunk : chunk.toString("utf8"))),
        Stream.splitLines
      )
    : Stream.unwrap(
        Effect.map(FileSystem.FileSystem, (fs) =>
          fs.stream(path).pipe(Stream.decodeText(), Stream.splitLines, Stream.mapError((e) => new FileUnreadable({ path, reason: fileReason(e) })))
        )
      )

export const replayCommand = Command.make("replay", { trace, pool, expect, explain, json }, (args) =>
  Effect.gen(function* () {
    if (args.trace.startsWith("-") && args.trace !== "-") {
      return yield* new UsageProblem({ message: `unknown flag ${args.trace} (a file whose name starts with - is read as ./${args.trace})` })
    }
    const options: { pool?: ReplayOptions["pool"] } = {}
    if (Option.isSome(args.pool)) {
      const path = args.pool.value
      const parsed = parsePoolText(yield* readText(path))
      for (const w of parsed.warnings) yield* diagnostic(`${path}: ${w}`)
      if (parsed._tag === "Unusable") return yield* new PoolUnusable({ path, reason: parsed.reason })
      options.pool = parsed.slots
    }
    const expected = Option.isSome(args.expect)
      ? (yield* readText(args.expect.value)).split("\n").filter((line, i, all) => !(i === all.length - 1 && line === ""))
      : undefined
    const out = lineSink(process.stdout)
    let cursor = startReplay(options)
    let lineNo = 0
    let decisionNo = 0
    const path = args.trace === "-" ? "stdin" : args.trace
    /** One chunk of lines, replayed synchronously; Effect only at chunk boundaries (docs/PERFORMANCE.md). */
    const replayChunk = (lines: Chunk.Chunk<string>) =>
      Effect.suspend(() => {
        const text: Array<string> = []
        const explained: Array<string> = []
        const warnings: Array<string> = []
        let problem: TraceInvalid | ExpectMismatch | undefined
        for (const line of lines) {
          lineNo++
          const r = feed(cursor, line, options)
          if (r._tag === "Invalid") {
            problem = new TraceInvalid({ path, line: lineNo, reason: r.message })
            break
          }
          cursor = r.cursor
          for (const w of r.warnings) warnings.push(`line ${lineNo}: ${w}`)
          for (const d of r.decisions) {
            decisionNo++
            const formatted = formatDecision(d)
            text.push(formatted)
            if (args.explain) explained.push(explainDecision(d))
            if (expected !== undefined && expected[decisionNo - 1] !== formatted) {
              problem = new ExpectMismatch({ line: decisionNo, expected: expected[decisionNo - 1] ?? "<none>", got: formatted })
              break
            }
          }
          if (problem !== undefined) break
        }
        return Effect.gen(function* () {
          for (const w of warnings) yield* diagnostic(w)
          yield* out.pushAll(text)
          if (explained.length > 0) yield* Effect.sync(() => process.stderr.write(`${explained.join("\n")}\n`))
          if (problem !== undefined) return yield* problem
        })
      })
    yield* traceLines(args.trace).pipe(Stream.runForEachChunk(replayChunk), Effect.ensuring(out.flush))
    if (expected !== undefined) {
      if (expected.length > decisionNo) {
        return yield* new ExpectMismatch({ line: decisionNo + 1, expected: expected[decisionNo]!, got: "<none>" })
      }
      yield* diagnostic(`${decisionNo} decisions match ${Option.getOrElse(args.expect, () => "")}`)
    }
  })
).pipe(
  Command.withDescription(
    "Replay a spawn trace: prints one decision per line (JSON Lines). Exit 0 ok; 1 invalid trace (naming the line) or an --expect mismatch; 2 unreadable file."
  )
)
