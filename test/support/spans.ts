/**
 * A recording `Tracer` for tests (no OpenTelemetry): every span the program opens is kept with its
 * name, parent name and how it ended. `Effect.withTracer(spans.tracer)` puts it under a program.
 */
import { Context, Option, Tracer, type Exit } from "effect"

export interface RecordedSpan {
  readonly name: string
  readonly parent: string | undefined
  /** The names of every enclosing span, nearest first. */
  readonly ancestors: ReadonlyArray<string>
  readonly attributes: Map<string, unknown>
  exit: Exit.Exit<unknown, unknown> | undefined
}

export interface SpanRecorder {
  readonly tracer: Tracer.Tracer
  readonly spans: ReadonlyArray<RecordedSpan>
  /** The names of the spans opened so far, in order. */
  readonly names: () => ReadonlyArray<string>
}

let nextId = 0

export const recordSpans = (): SpanRecorder => {
  const spans: Array<RecordedSpan> = []
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind) => {
      const ancestors: Array<string> = []
      for (let p = Option.getOrUndefined(parent); p !== undefined; p = p._tag === "Span" ? Option.getOrUndefined(p.parent) : undefined) ancestors.push(p._tag === "Span" ? p.name : p.spanId)
      const record: RecordedSpan = { name, parent: ancestors[0], ancestors, attributes: new Map(), exit: undefined }
      spans.push(record)
      const span: Tracer.Span = {
        _tag: "Span",
        name,
        spanId: `span${++nextId}`,
        traceId: "trace",
        parent,
        context: context ?? Context.empty(),
        status: { _tag: "Started", startTime },
        attributes: record.attributes,
        links: [...links],
        sampled: true,
        kind,
        end: (_endTime, exit) => void (record.exit = exit),
        attribute: (key, value) => void record.attributes.set(key, value),
        event: () => {},
        addLinks: () => {}
      }
      return span
    },
    context: (f) => f()
  })
  return { tracer, spans, names: () => spans.map((s) => s.name) }
}
