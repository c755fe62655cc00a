/**
 * Effect's tools without what they cost when unused, on the paths every spawn and every limit takes
 * (issue 32): spans made only when a tracer listens, and a gate taken without suspending when free.
 *
 * Spans. Every service method is a span (DECISIONS
 * 160), named `Service.method`; but Effect's own tracer, the one a runtime has when no tracer was
 * installed, keeps its spans for no one, and making them was a fifth of a spawn's routing time and
 * about half of what each spawn left for the garbage collector (a span's context and its stack-trace
 * closure outlive the spawn until the next scavenge copies them: the p99 of bench:route). So a method
 * is a span whenever a tracer is installed (a test's recorder, an exporter), and runs as it is
 * otherwise. `traced(name)` is `Effect.fn(name)` and `spanned` is `Effect.withSpan` on those terms.
 *
 * Gates. Effect's semaphore takes
 * its permit through an asynchronous step even when the permit is free, and a fiber that suspends
 * leaves what it holds to be copied by the garbage collector's next scavenge: with one suspension per
 * spawn that was most of the routing's p99 (bench:route). A free gate is taken synchronously here; a
 * busy one waits as before.
 */
import { Effect, Function as F, Option, type Tracer } from "effect"
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

/** `body` holding `gate`'s one permit: taken at once when free, waited for otherwise. */
export const exclusive =
  (gate: Effect.Semaphore) =>
  <A, E, R>(body: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.flatMap(gate.withPermitsIfAvailable(1)(body), (got) => (Option.isSome(got) ? Effect.succeed(got.value) : gate.withPermits(1)(body)))

/** A value whose updates run one at a time (what `SynchronizedRef` is), on an `exclusive` gate. */
export interface SerialRef<A> {
  readonly get: Effect.Effect<A>
  readonly modifyEffect: <B, E, R>(f: (a: A) => Effect.Effect<readonly [B, A], E, R>) => Effect.Effect<B, E, R>
  readonly updateEffect: <E, R>(f: (a: A) => Effect.Effect<A, E, R>) => Effect.Effect<void, E, R>
}

export const makeSerialRef = <A>(initial: A): Effect.Effect<SerialRef<A>> =>
  Effect.map(Effect.makeSemaphore(1), (gate) => {
    let current = initial
    const one = exclusive(gate)
    return {
      get: Effect.sync(() => current),
      modifyEffect: (f) =>
        one(
          Effect.flatMap(
            Effect.suspend(() => f(current)),
            ([b, a]) => Effect.sync(() => ((current = a), b))
          )
        ),
      updateEffect: (f) =>
        one(
          Effect.flatMap(
            Effect.suspend(() => f(current)),
            (a) => Effect.sync(() => void (current = a))
          )
        )
    }
  })
