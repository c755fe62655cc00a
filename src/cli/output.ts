/** Buffered stdout/stderr writing that respects back-pressure, so a million decisions stream in bounded memory. */
import { Effect } from "effect"

export interface LineSink {
  readonly pushAll: (lines: ReadonlyArray<string>) => Effect.Effect<void>
  readonly flush: Effect.Effect<void>
}

const write = (stream: NodeJS.WriteStream, text: string): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    if (stream.write(text)) resume(Effect.void)
    else stream.once("drain", () => resume(Effect.void))
  })

/** Collects lines and writes them in ~64 KiB batches. */
export const lineSink = (stream: NodeJS.WriteStream, batchChars = 65_536): LineSink => {
  let buffer: Array<string> = []
  let size = 0
  const flush = Effect.suspend(() => {
    if (buffer.length === 0) return Effect.void
    const text = buffer.join("")
    buffer = []
    size = 0
    return write(stream, text)
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
export const diagnostic = (message: string): Effect.Effect<void> => Effect.sync(() => process.stderr.write(`ocpool: ${message}\n`))
