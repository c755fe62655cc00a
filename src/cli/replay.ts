/** `ocpool replay [FILE|-]` (SPEC §12.2, TRACE.md): re-runs the routing rules over a spawn trace. */
import { Args, Command, Options } from "@effect/cli"
import { Chunk, Console, Effect, Option, Stream } from "effect"
import { createReadStream } from "node:fs"
import { basename } from "node:path"
import { LINE_MAX_CHARS, POOL_FILE_MAX_BYTES } from "../core/readLimits.js"
import { LineSplitter } from "../core/lines.js"
import { parsePoolText } from "../core/pool/pool.js"
import { printable } from "../core/printable.js"
import { explainDecision, formatDecision } from "../core/trace/format.js"
import { feed, startReplay, type ReplayOptions } from "../core/trace/replay.js"
import { timelineBuilder, type TimelineBuilder } from "../core/view/timeline.js"
import { timelineHtml } from "../core/view/timelineHtml.js"
import { timelineSvg } from "../core/view/timelineSvg.js"
import { writeFileAtomic } from "../layers/fs/atomicWrite.js"
import { lineReader, openRegular, readTextFile } from "../layers/fs/safeRead.js"
import { BadInput, ExpectMismatch, FileUnreadable, PathUnusable, PoolUnusable, TraceInvalid, UsageProblem } from "./errors.js"
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
const timeline = Options.text("timeline").pipe(
  Options.withPseudoName("FILE"),
  Options.withDescription(
    "Also draw the trace once every line is replayed: FILE.html is a self-contained interactive page (zoom, keyboard, the --explain text on hover), FILE.svg a static picture"
  ),
  Options.optional
)
const json = Options.boolean("json").pipe(Options.withDescription("JSON Lines on stdout (always the case for replay)"))

/** A named file's text through safeRead: a regular file of at most `maxBytes`, else exit 2 with the reason. */
const readText = (path: string, maxBytes: number) =>
  Effect.suspend(() => {
    const read = readTextFile(path, maxBytes)
    return read._tag === "Text" ? Effect.succeed(read.text) : Effect.fail(new FileUnreadable({ path, reason: read._tag === "Missing" ? "no such file or directory" : read.reason }))
  })

/** What `--timeline FILE` writes, by FILE's extension (any case); `undefined` for any other name. */
export const timelineKind = (path: string): "html" | "svg" | undefined => {
  const ext = /\.([^./\\]+)$/.exec(path)?.[1]?.toLowerCase()
  return ext === "html" ? "html" : ext === "svg" ? "svg" : undefined
}

const WRITE_REASONS: Readonly<Record<string, string>> = {
  ENOENT: "no such directory",
  ENOTDIR: "a part of the path is not a directory",
  EACCES: "permission denied",
  EPERM: "permission denied",
  EISDIR: "is a directory",
  EROFS: "read-only file system",
  ENOSPC: "no space left on device"
}

/** The timeline drawn and written whole (a `.tmp` sibling, then a rename); a failure is one line, exit 1. */
const writeTimeline = (path: string, kind: "html" | "svg", builder: TimelineBuilder) =>
  Effect.gen(function* () {
    const t = builder.finish()
    const body = kind === "html" ? timelineHtml(t) : timelineSvg(t)
    yield* Effect.try({
      try: () => writeFileAtomic(path, body, 0o644),
      catch: (e) => {
        const code = (e as NodeJS.ErrnoException | null)?.code
        const reason = code === undefined ? String((e as Error | null)?.message ?? e).split("\n")[0]! : (WRITE_REASONS[code] ?? code)
        return new PathUnusable({ path, reason: `cannot write the timeline: ${reason}` })
      }
    })
    yield* Console.error(`timeline: ${t.bars.length} bars, ${t.cools.length} cooldowns, ${t.marks.length} marks -> ${printable(path)}`)
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

export const replayCommand = Command.make("replay", { trace, pool, expect, explain, json, timeline }, (args) =>
  Effect.gen(function* () {
    if (args.trace.startsWith("-") && args.trace !== "-") {
      return yield* new UsageProblem({ message: `unknown flag ${args.trace} (a file whose name starts with - is read as ./${args.trace})`, option: args.trace })
    }
    // the timeline's name is checked before anything is read
    const timelinePath = Option.getOrUndefined(args.timeline)
    const kind = timelinePath === undefined ? undefined : timelineKind(timelinePath)
    if (timelinePath !== undefined && kind === undefined) {
      return yield* new BadInput({
        message: `--timeline ${printable(timelinePath)}: the name must end in .html (an interactive page) or .svg (a static picture)`,
        option: "--timeline",
        value: timelinePath
      })
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
    let inputs = 0
    let decisionNo = 0
    const path = args.trace === "-" ? "stdin" : args.trace
    const builder = kind === undefined ? undefined : timelineBuilder(args.trace === "-" ? "stdin" : basename(args.trace), { pool: options.pool })
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
          if (line.trim() !== "") inputs++
          const r = feed(cursor, line, options)
          if (r._tag === "Invalid") {
            problem = new TraceInvalid({ path, line: lineNo, reason: r.message })
            break
          }
          cursor = r.cursor
          builder?.add(r.input, r.decisions)
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
    // nothing to replay is said, not left to silence (exit 0: an empty trace is not an invalid one)
    if (inputs === 0) yield* diagnostic(`${printable(path)}: the trace is empty (no input lines): nothing replayed`)
    if (builder !== undefined && timelinePath !== undefined && kind !== undefined) yield* writeTimeline(timelinePath, kind, builder)
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
    "Replay a spawn trace: prints one decision per line (JSON Lines); --timeline FILE.html|FILE.svg also draws it. Exit 0 ok; 1 invalid trace (naming the line), an --expect mismatch or a timeline that cannot be written; 2 unreadable file or a --timeline name that is neither .html nor .svg."
  )
)
