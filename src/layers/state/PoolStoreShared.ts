/**
 * `PoolStore` over the claim store, the cooldown store and the pool lock (file layers in opencode,
 * memory layers in tests): the same read–decide–write sequence whatever they run on.
 */
import { Effect, Layer } from "effect"
import type { CooldownTable } from "../../core/cooldown.js"
import { AppLog } from "../../services/opencode/AppLog.js"
import { ClaimStore } from "../../services/state/ClaimStore.js"
import { CooldownStore } from "../../services/state/CooldownStore.js"
import { PoolLock } from "../../services/state/PoolLock.js"
import { PoolStore, type Commit } from "../../services/state/PoolStore.js"

export const PoolStoreShared = Layer.effect(
  PoolStore,
  Effect.gen(function* () {
    const log = yield* AppLog
    const claims = yield* ClaimStore
    const cooldowns = yield* CooldownStore
    const lock = yield* PoolLock

    const read = (now: number, withPeers = true) =>
      Effect.all({
        peers: !withPeers ? Effect.succeed([]) : claims.readPeers(now).pipe(Effect.catchAll((e) => Effect.as(log.log("warn", `reading peer claims failed: ${e.reason}`), []))),
        cooldowns: cooldowns
          .readAll(now)
          .pipe(Effect.catchAll((e) => Effect.as(log.log("warn", `reading cooldowns failed: ${e.reason}`), new Map() as CooldownTable)))
      })

    const commit = (now: number, c: Commit) =>
      Effect.gen(function* () {
        if (c.cool.length > 0) yield* cooldowns.write(c.cool).pipe(Effect.catchAll((e) => log.log("warn", `writing cooldowns failed: ${e.reason}`)))
        for (const model of c.uncool) yield* cooldowns.remove(model).pipe(Effect.catchAll(() => Effect.void))
        if (c.claims !== undefined) yield* claims.publish(c.claims, now).pipe(Effect.catchAll((e) => log.log("warn", `publishing claims failed: ${e.reason}`)))
      })

    return {
      read,
      commit,
      transact: (now, peers, decide) =>
        lock.withLock(
          Effect.gen(function* () {
            const decided = decide(yield* read(now, peers))
            yield* commit(now, decided.commit)
            return decided.value
          })
        ),
      removeOwn: claims.removeOwn
    }
  })
)
