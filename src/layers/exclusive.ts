/**
 * One at a time, without suspending when nobody else is inside (issue 32). Effect's semaphore takes
 * its permit through an asynchronous step even when the permit is free, and a fiber that suspends
 * leaves what it holds to be copied by the garbage collector's next scavenge: with one suspension per
 * spawn that was most of the routing's p99 (bench:route). A free gate is taken synchronously here; a
 * busy one waits as before.
 */
import { Effect, Option } from "effect"

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
