/**
 * Where the CLI's output goes: one writer per stream that strips ANSI styling when colour is off
 * (NO_COLOR, or the stream is not a terminal), waits for each write (back-pressure, so a million
 * decisions stream in bounded memory) and turns a write error (a closed pipe, a full disk) into an
 * `OutputFailed` defect the entry point reports in one line (SPEC §12.1).
 */
import { Console, Context, Data, Effect } from "effect"
import { format, stripVTControlCharacters } from "node:util"
import { colourWanted } from "./streams.js"

export { writeReason } from "./streams.js"

/** A stream the CLI writes to: process.stdout/stderr, or any Writable (tests capture output with one). */
export interface OutStream {
  readonly isTTY?: boolean
  /** The terminal's width, when the stream is one (help is wrapped to it). */
  readonly columns?: number
  write(chunk: string, cb: (error?: Error | null) => void): boolean
  on(event: "error", listener: (error: Error) => void): unknown
}

/** The CLI's standard streams and environment. */
export interface CliIo {
  readonly stdout: OutStream
  readonly stderr: OutStream
  /** Whether standard input is an interactive terminal (the `--wizard` needs one). */
  readonly stdinIsTTY: boolean
  readonly env: Readonly<Record<string, string | undefined>>
}

/** A write that failed: `stream` names which, `error` is the Node error (EPIPE, ENOSPC, …). */
export class OutputFailed extends Data.TaggedError("OutputFailed")<{ readonly stream: "stdout" | "stderr"; readonly error: unknown }> {}

/** The first write error seen on each stream; later writes to that stream fail at once. */
const failures = new WeakMap<OutStream, OutputFailed>()
const watched = new WeakSet<OutStream>()

/** Keeps an asynchronous 'error' event (EPIPE on a pipe) from crashing the process: it is recorded instead. */
const watch = (stream: OutStream, name: "stdout" | "stderr"): void => {
  if (watched.has(stream)) return
  watched.add(stream)
  stream.on("error", (error) => {
    if (!failures.has(stream)) failures.set(stream, new OutputFailed({ stream: name, error }))
  })
}

/** The process's own streams, watched for write errors. */
export const processIo = (): CliIo => {
  watch(process.stdout, "stdout")
  watch(process.stderr, "stderr")
  return { stdout: process.stdout, stderr: process.stderr, stdinIsTTY: process.stdin.isTTY === true, env: process.env }
}

/** The io of the running command (a Context reference: the process's streams unless one is provided). */
export class CurrentIo extends Context.Reference<CurrentIo>()("ocpool/CurrentIo", { defaultValue: (): CliIo => processIo() }) {}

/** Colour only on a terminal, and never with NO_COLOR set (streams.ts). */
export const colourOn = (io: CliIo, stream: OutStream): boolean => colourWanted(stream.isTTY, io.env)

/**
 * Writes `text` and resumes once the stream took it (or failed). A failure dies with `OutputFailed`:
 * a command has no way to go on without its output, and the entry point reports it (SPEC §12.1).
 */
export const writeTo = (stream: OutStream, name: "stdout" | "stderr", text: string): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    const failed = failures.get(stream)
    if (failed !== undefined) return resume(Effect.die(failed))
    const fail = (error: unknown) => {
      const f = failures.get(stream) ?? new OutputFailed({ stream: name, error })
      failures.set(stream, f)
      resume(Effect.die(f))
    }
    try {
      stream.write(text, (error) => (error ? fail(error) : resume(Effect.void)))
    } catch (error) {
      fail(error)
    }
  })

/** `text` as it should reach `stream`: ANSI styling and other escape sequences removed when colour is off. */
export const forStream = (io: CliIo, stream: OutStream, text: string): string => (colourOn(io, stream) ? text : stripVTControlCharacters(text))

/** Writes to the io's stdout or stderr, stripped as `forStream` says. */
export const writeOut = (io: CliIo, which: "stdout" | "stderr", text: string): Effect.Effect<void> => {
  watch(io[which], which)
  return writeTo(io[which], which, forStream(io, io[which], text))
}

/** The first recorded write failure of the io's streams, if any (a late EPIPE after the last write). */
export const recordedFailure = (io: CliIo): OutputFailed | undefined => failures.get(io.stdout) ?? failures.get(io.stderr)

/** Waits until everything written to stdout and stderr was handed to the system (or failed). */
export const drain = (io: CliIo): Effect.Effect<void> =>
  Effect.all([writeTo(io.stdout, "stdout", ""), writeTo(io.stderr, "stderr", "")], { discard: true, concurrency: 2 }).pipe(
    Effect.catchAllDefect(() => Effect.void)
  )

/** An Effect `Console` writing to `io`: what @effect/cli prints (help, errors) and every `Console.log` of a command. */
export const ioConsole = (io: CliIo, base: Console.Console): Console.Console => {
  const line = (which: "stdout" | "stderr") => (...args: ReadonlyArray<unknown>) => writeOut(io, which, `${format(...args)}\n`)
  const out = line("stdout")
  const err = line("stderr")
  return { ...base, log: out, info: out, debug: err, warn: err, error: err, trace: err }
}

/** Runs `self` with `io` as the current io and its Console. */
export const withIo =
  (io: CliIo) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Console.consoleWith((base) => self.pipe(Effect.withConsole(ioConsole(io, base)), Effect.provideService(CurrentIo, io)))

export interface LineSink {
  readonly pushAll: (lines: ReadonlyArray<string>) => Effect.Effect<void>
  readonly flush: Effect.Effect<void>
}

/** Collects lines for the current io's stdout and writes them in ~64 KiB batches. */
export const lineSink = (batchChars = 65_536): LineSink => {
  let buffer: Array<string> = []
  let size = 0
  const flush = Effect.suspend(() => {
    if (buffer.length === 0) return Effect.void
    const text = buffer.join("")
    buffer = []
    size = 0
    return Effect.flatMap(CurrentIo, (io) => writeOut(io, "stdout", text))
  })
  return {
    pushAll: (lines) =>
      Effect.suspend(() => {
        for (const line of lines) {
          buffer.push(line, "\n")
          size += line.length + 1
        }
        return size >= batchChars ? flush : Effect.void
      }),
    flush
  }
}

/** One diagnostic line on stderr, prefixed `ocpool:` (SPEC §12.1). */
export const diagnostic = (message: string): Effect.Effect<void> => Console.error(`ocpool: ${message}`)


/** A closed pipe: the reader stopped reading (`ocpool status | head -1`), not a failure of ocpool. */
export const isClosedPipe = (f: OutputFailed): boolean => {
  const code = (f.error as { code?: unknown } | null)?.code
  return code === "EPIPE" || code === "ERR_STREAM_DESTROYED" || code === "ERR_STREAM_WRITE_AFTER_END"
}

/** A stream that keeps what is written (`text`): the build renders help into one, tests capture output with it. */
export const captureStream = (isTTY: boolean): OutStream & { text: string } => {
  const s = {
    isTTY,
    text: "",
    write(chunk: string, cb: (error?: Error | null) => void) {
      s.text += chunk
      cb()
      return true
    },
    on() {
      return s
    }
  }
  return s
}
