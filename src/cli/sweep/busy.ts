/** The busy back-off around one write transaction (SPEC §11.1): retry after 250, 500, 1000, 2000, 4000 ms. */
import { Effect } from "effect"
import { busyBackoff } from "../../core/retention/chunks.js"
import type { DbBusy } from "../../services/RetentionStore.js"

export const withBusyRetry = <A, E>(attempt: Effect.Effect<A, DbBusy | E>): Effect.Effect<A, DbBusy | E> => {
  const go = (retry: number): Effect.Effect<A, DbBusy | E> =>
    attempt.pipe(
      Effect.catchIf(
        (e): e is DbBusy => typeof e === "object" && e !== null && (e as { _tag?: unknown })._tag === "DbBusy",
        (e) => {
          const wait = busyBackoff(retry)
          return wait === undefined ? Effect.fail(e) : Effect.zipRight(Effect.sleep(wait), go(retry + 1))
        }
      )
    )
  return go(1)
}
