/**
 * The engine's timers: the reaper's sweeps (SPEC §8.1) and the pool file's hot reload (SPEC §3.4).
 */
import { Deferred, Duration, Effect, Stream, type Scope } from "effect"
import { existsSync, statSync } from "node:fs"
import { basename, dirname } from "node:path"
import { causeLine } from "../../core/causeLine.js"
import type { Settings } from "../../core/options.js"
import { minutesOrSeconds as minutes, wholeSeconds } from "../../core/time.js"
import type { PoolEngineService } from "../../services/pool/PoolEngine.js"
import { dirChanges } from "../fs/dirChanges.js"
import { pause } from "../state/sqliteDriver.js"

export const RELOAD_DEBOUNCE_MS = 250

/** The reaper (SPEC §8.1): one sweep at start, then one every `reapMs`, until the scope closes. */
export const reaperLoop = (engine: Pick<PoolEngineService, "sweep">, reapMs: number): Effect.Effect<never> =>
  Effect.zipRight(engine.sweep, Effect.forever(Effect.zipRight(Effect.sleep(Duration.millis(reapMs)), engine.sweep)))

/**
 * Pool-file watching for hot reload (SPEC §3.4): each path's directory is watched (a file an editor
 * replaces keeps being seen) through the one directory watcher (layers/fs/dirChanges.ts); changes to
 * the named file are debounced into one reload. Forked into the scope; it returns once every watch of
 * an existing directory is in place (its first element), so an edit made just after boot is seen; a
 * directory that cannot be watched is not waited for longer than READY_WAIT_MS.
 */
export const watchPool = (paths: ReadonlyArray<string>, reload: Effect.Effect<void>): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function* () {
    const waits: Array<Effect.Effect<void>> = []
    const streams = yield* Effect.forEach(paths, (p) =>
      Effect.map(Deferred.make<void>(), (ready) => {
        const isDir = isDirectory(p)
        const dir = isDir ? p : dirname(p)
        const name = isDir ? undefined : basename(p)
        if (existsSync(dir)) waits.push(Effect.race(Deferred.await(ready), pause(READY_WAIT_MS, false)))
        return dirChanges(dir, { persistent: false }).pipe(
          Stream.tap(() => Deferred.succeed(ready, undefined)),
          // the first element says the watch is in place; the others are changes
          Stream.drop(1),
          Stream.filter((file) => name === undefined || file === undefined || file === name)
        )
      })
    )
    yield* Effect.forkScoped(Stream.mergeAll(streams, { concurrency: "unbounded" }).pipe(Stream.debounce(Duration.millis(RELOAD_DEBOUNCE_MS)), Stream.runForEach(() => reload)))
    yield* Effect.all(waits, { discard: true })
  })

/** How long boot waits for a pool file's watch to be in place. */
const READY_WAIT_MS = 1_000

const isDirectory = (p: string): boolean => {
  try {
    return statSync(p).isDirectory()
  } catch {
    return false
  }
}

/** The engine's timers forked into the layer's scope (a plain fork would end with the fiber that builds the layer). */
export const startTimers = (engine: Pick<PoolEngineService, "sweep" | "reload">, settings: Pick<Settings, "reapMs" | "hangMinAgeMs" | "hangSilenceMs" | "firstTokenMs">, watched: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    yield* Effect.logInfo(`reaper armed: every ${wholeSeconds(settings.reapMs)}; hung = older than ${minutes(settings.hangMinAgeMs)} and silent ${minutes(settings.hangSilenceMs)}; no first token = ${minutes(settings.firstTokenMs)} after the spawn`)
    yield* Effect.forkScoped(reaperLoop(engine, settings.reapMs))
    yield* watchPool(watched, engine.reload.pipe(Effect.catchAllCause((c) => Effect.logError(`pool reload failed: ${causeLine(c)}`))))
  })
