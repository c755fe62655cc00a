/**
 * The failure reads of quota sensing (issue 19) as fibers of the layer's scope: each read runs in a
 * FiberSet (interrupted when the runtime is disposed), the latest read of each session is a Deferred
 * completed when it ends, and the wait is a timeout on the Clock.
 */
import { Deferred, Duration, Effect, FiberSet, Layer, Ref } from "effect"
import { FAILURE_WAIT_MS, FailureReads } from "../../services/quota/FailureReads.js"
import { traced } from "../hotPath.js"

type Reads = ReadonlyMap<string, Deferred.Deferred<void>>

export const FailureReadsShell = (waitMs: number = FAILURE_WAIT_MS): Layer.Layer<FailureReads> =>
  Layer.scoped(
    FailureReads,
    Effect.gen(function* () {
      const fibers = yield* FiberSet.make<void>()
      const reads = yield* Ref.make<Reads>(new Map())
      const wait = Duration.millis(waitMs)

      /** The session's entry goes when this read was its latest. */
      const forget = (session: string, done: Deferred.Deferred<void>) =>
        Ref.update(reads, (m): Reads => {
          if (m.get(session) !== done) return m
          const next = new Map(m)
          next.delete(session)
          return next
        })

      const started = traced("FailureReads.started")((session: string, read: Effect.Effect<void>) =>
        Effect.flatMap(Deferred.make<void>(), (done) =>
          Ref.update(reads, (m): Reads => new Map(m).set(session, done)).pipe(
            Effect.zipRight(FiberSet.run(fibers, Effect.ensuring(read, Effect.zipRight(Deferred.succeed(done, undefined), forget(session, done))))),
            Effect.asVoid
          )
        )
      )

      const awaited = traced("FailureReads.awaited")((session: string) =>
        Effect.flatMap(Ref.get(reads), (m) => {
          const done = m.get(session)
          return done === undefined ? Effect.void : Effect.asVoid(Effect.timeoutOption(Deferred.await(done), wait))
        })
      )

      return { started, awaited }
    })
  )
