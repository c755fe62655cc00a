/**
 * Spans that cost nothing when nobody listens (issue 32). Every service method is a span (DECISIONS
 * 160), named `Service.method`; but Effect's own tracer, the one a runtime has when no tracer was
 * installed, keeps its spans for no one, and making them was a fifth of a spawn's routing time and
 * about half of what each spawn left for the garbage collector (a span's context and its stack-trace
 * closure outlive the spawn until the next scavenge copies them: the p99 of bench:route). So a method
 * is a span whenever a tracer is installed (a test's recorder, an exporter), and runs as it is
 * otherwise. `traced(name)` is `Effect.fn(name)` and `spanned` is `Effect.withSpan` on those terms.
 */
import { Effect, Function as F, type Tracer } from "effect"
import { isGeneratorFunction } from "effect/Utils"

/** The tracer of a runtime nobody gave one (read once, at the first span). */
let native: Tracer.Tracer | undefined
const nativeTracer = (): Tracer.Tracer => (native ??= Effect.runSync(Effect.tracer))

/** `self` inside the span `name` when a tracer other than Effect's own is installed; `self` otherwise. */
export const spanned: {
  (name: string): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  <A, E, R>(self: Effect.Effect<A, E, R>, name: string): Effect.Effect<A, E, R>
} = F.dual(2, <A, E, R>(self: Effect.Effect<A, E, R>, name: string): Effect.Effect<A, E, R> =>
  Effect.tracerWith((tracer) => (tracer === nativeTracer() ? self : Effect.withSpan(self, name)))
)

type Piped = (effect: Effect.Effect<unknown, unknown, unknown>, ...args: Array<unknown>) => Effect.Effect<unknown, unknown, unknown>

/** `Effect.fn(name)`: a function whose every call is the span `name` (when a tracer listens); generator or effect-returning bodies, with pipeables. */
export const traced = (name: string): Effect.fn.Gen & Effect.fn.NonGen =>
  ((body: (...args: Array<unknown>) => unknown, ...pipeables: Array<Piped>) => {
    const untraced = isGeneratorFunction(body)
      ? (Effect.fnUntraced as unknown as (b: typeof body, ...p: Array<Piped>) => (...args: Array<unknown>) => Effect.Effect<unknown, unknown, unknown>)(body, ...pipeables)
      : function (this: unknown, ...args: Array<unknown>) {
          let effect = body.apply(this, args) as Effect.Effect<unknown, unknown, unknown>
          for (const p of pipeables) effect = p(effect, ...args)
          return effect
        }
    return function (this: unknown, ...args: Array<unknown>) {
      return spanned(untraced.apply(this, args), name)
    }
  }) as unknown as Effect.fn.Gen & Effect.fn.NonGen
