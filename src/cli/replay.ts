/** `ocpool replay [FILE|-]` (SPEC §12.2, TRACE.md): re-runs the routing rules over a spawn trace. */
import { Args, Command, Options } from "@effect/cli"
import { Chunk, Console, Effect, Option, Stream } from "effect"
import { createReadStream } from "node:fs"
import { LINE_MAX_CHARS, POOL_FILE_MAX_BYTES } from "../core/limits.js"
import { LineSplitter } from "../core/lines.js"
import { parsePoolText } from "../core/pool.js"
import { printable } from "../core/printable.js"
import { explainDecision, formatDecision } from "../core/trace/format.js"
import { feed, startReplay, type ReplayOptions } from "../core/trace/replay.js"
import { lineReader, openRegular, readTextFile } from "../layers/fs/safeRead.js"
import { ExpectMismatch, FileUnreadable, PoolUnusable, TraceInvalid, UsageProblem } from "./errors.js"
import { diagnostic, lineSink } from "./output.js"

// text, not Args.file: the file is checked and read by safeRead, so every refusal is one `ocpool: FILE: reason` line (exit 2)
const trace = Args.text({ name: "trace" }).pipe(
  Args.withDescription("The spawn trace (JSON Lines, TRACE.md); `-` or nothing reads standard input"),
  Args.withDefault("-")
)
const pool = Options.text("pool").pipe(
  Options.withPseudoName("FILE"),
  Options.withDescription("A pool file (flat or JSON form) applied as a pool line before the first line"),
  Options.optional
)
const expect = Options.text("expect").pipe(
  Options.withPseudoName("FILE"),
  Options.withDescription("A decisions file; exit 1 at the first line that differs"),
  Options.optional
)
const explain = Options.boolean("explain").pipe(Options.withDescription("One human sentence per decision on stderr"))
const json = Options.boolean("json").pipe(Options.withDescription("JSON Lines on stdout (always the case for replay)"))

/** A named file's text through safeRead: a regular file of at most `maxBytes`, else exit 2 with the reason. */
const readText = (path: string, maxBytes: number) =>
  Effect.suspend(() => {
    const read = readTextFile(path, maxBytes)
    return read._tag === "Text" ? Effect.succeed(read.text) : Effect.fail(new FileUnreadable({ path, reason: read._tag === "Missing" ? "no such file or directory" : read.reason }))
  })

/** Text chunks split into lines with a bounded buffer: a line over LINE_MAX_CHARS comes out cut (and is refused by the caller). */
const cappedLines = <E>(text: Stream.Stream<string, E>): Stream.Stream<string, E> =>
  Stream.suspend(() => {
    const splitter = new LineSplitter(LINE_MAX_CHARS)
    return text.pipe(
      Stream.mapChunks((chunk) => Chunk.unsafeFromArray(Chunk.toReadonlyArray(chunk).flatMap((s) => splitter.push(s)))),
      Stream.concat(Stream.suspend(() => Stream.fromIterable(splitter.end())))
    )
  })

/** Bytes as text: UTF-8 across chunk boundaries, a leading byte-order mark dropped. */
const decoded = <E>(bytes: Stream.Stream<Buffer | string, E>): Stream.Stream<string, E> =>
  Stream.suspend(() => {
    const decoder = new TextDecoder("utf-8")
    return bytes.pipe(
      Stream.map((chunk) => (typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true }))),
      Stream.concat(Stream.suspend(() => Stream.make(decoder.decode())))
    )
  })

/**
 * The trace's lines as a stream: standard input for `-`, else a regular file opened through safeRead
 * (a FIFO, device or link loop is refused with exit 2). Streamed in 64 KiB chunks: the file may be huge.
 */
const traceLines = (path: string): Stream.Stream<string, FileUnreadable> => {
  if (path === "-") return cappedLines(decoded(Stream.fromAsyncIterable(process.stdin as AsyncIterable<Buffer | string>, (e) => new FileUnreadable({ path: "stdin", reason: String(e) }))))
  return Stream.unwrap(
    Effect.suspend(() => {
      const opened = openRegular(path)
      if (opened._tag !== "Open") return Effect.fail(new FileUnreadable({ path, reason: opened._tag === "Missing" ? "no such file or directory" : opened.reason }))
      const file = createReadStream("", { fd: opened.fd, highWaterMark: 64 << 10 }) as AsyncIterable<Buffer>
      return Effect.succeed(cappedLines(decoded(Stream.fromAsyncIterable(file, (e) => new FileUnreadable({ path, reason: String((e as NodeJS.ErrnoException).code ?? e) })))))
    })
  )
}

export const replayCommand = Command.make("replay", { trace, pool, expect, explain, json }, (args) =>
  Effect.gen(function* () {
    if (args.trace.startsWith("-") && args.trace !== "-") {
      return yield* new UsageProblem({ message: `unknown flag ${args.trace} (a file whose name starts with - is read as ./${args.trace})` })
    }
    const options: { pool?: ReplayOptions["pool"] } = {}
    if (Option.isSome(args.pool)) {
      const path = args.pool.value
      const parsed = parsePoolText(yield* readText(path, POOL_FILE_MAX_BYTES))
      for (const w of parsed.warnings) yield* diagnostic(`${path}: ${w}`)
      if (parsed._tag === "Unusable") return yield* new PoolUnusable({ path, reason: parsed.reason })
      options.pool = parsed.slots
    }
    // the decisions file is read a line at a time, in step with the replay
    const expected = Option.isSome(args.expect) ? lineReader(args.expect.value, LINE_MAX_CHARS) : undefined
    if (expected !== undefined && !("next" in expected)) {
      return yield* new FileUnreadable({ path: Option.getOrElse(args.expect, () => ""), reason: expected._tag === "Missing" ? "no such file or directory" : expected.reason })
    }
    const out = lineSink()
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
          if (line.length > LINE_MAX_CHARS) {
            problem = new TraceInvalid({ path, line: lineNo, reason: `longer than ${LINE_MAX_CHARS} characters` })
            break
          }
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
            if (expected !== undefined) {
              const want = expected.next()
              if (want !== formatted) {
                problem = new ExpectMismatch({ line: decisionNo, expected: want ?? "<none>", got: formatted })
                break
              }
            }
          }
          if (problem !== undefined) break
        }
        return Effect.gen(function* () {
          for (const w of warnings) yield* diagnostic(printable(w))
          yield* out.pushAll(text)
          if (explained.length > 0) yield* Console.error(explained.join("\n"))
          if (problem !== undefined) return yield* problem
        })
      })
    yield* traceLines(args.trace).pipe(
      Stream.runForEachChunk(replayChunk),
      Effect.ensuring(out.flush),
      Effect.ensuring(Effect.sync(() => expected?.close()))
    )
    if (expected !== undefined) {
      const more = expected.next()
      expected.close()
      if (more !== undefined) return yield* new ExpectMismatch({ line: decisionNo + 1, expected: more, got: "<none>" })
      const failure = expected.failure()
      if (failure !== undefined) return yield* new FileUnreadable({ path: Option.getOrElse(args.expect, () => ""), reason: failure })
      yield* diagnostic(`${decisionNo} decisions match ${Option.getOrElse(args.expect, () => "")}`)
    }
  })
).pipe(
  Command.withDescription(
    "Replay a spawn trace: prints one decision per line (JSON Lines). Exit 0 ok; 1 invalid trace (naming the line) or an --expect mismatch; 2 unreadable file."
  )
)
