/**
 * The engine's timers: the reaper's sweeps (SPEC §8.1) and the pool file's hot reload (SPEC §3.4).
 */
import { Duration, Effect, Queue, Stream } from "effect"
import { statSync, watch, type FSWatcher } from "node:fs"
import { basename, dirname } from "node:path"
import { causeLine } from "../../core/causeLine.js"
import type { Settings } from "../../core/options.js"
import { AppLog } from "../../services/opencode/AppLog.js"
import type { PoolEngineService } from "../../services/pool/PoolEngine.js"

export const RELOAD_DEBOUNCE_MS = 250

/** The reaper (SPEC §8.1): one sweep at start, then one every `reapMs`, until the scope closes. */
export const reaperLoop = (engine: Pick<PoolEngineService, "sweep">, reapMs: number): Effect.Effect<never> =>
  Effect.zipRight(engine.sweep, Effect.forever(Effect.zipRight(Effect.sleep(Duration.millis(reapMs)), engine.sweep)))

/**
 * Pool-file watching for hot reload (SPEC §3.4): each path's directory is watched (a file an editor
 * replaces keeps being seen); changes to the named file are debounced into one reload. The watchers are
 * registered before this returns — node's `fs.watch` directly, as a `Stream`: `@effect/platform`'s
 * `FileSystem.watch` registers only after another asynchronous `stat`, so an edit made just after boot
 * could be missed. A directory that cannot be watched is skipped: the next boot sees it.
 */
export const watchPool = (paths: ReadonlyArray<string>, reload: Effect.Effect<void>) =>
  Effect.gen(function* () {
    const streams: Array<Stream.Stream<void>> = []
    for (const p of paths) {
      const isDir = (() => {
        try {
          return statSync(p).isDirectory()
        } catch {
          return false
        }
      })()
      const dir = isDir ? p : dirname(p)
      const name = isDir ? undefined : basename(p)
      let watcher: FSWatcher
      const changes = yield* Queue.sliding<void>(1)
      try {
        watcher = watch(dir, { persistent: false }, (_event, file) => {
          if (name === undefined || file === null || file === name) Queue.unsafeOffer(changes, undefined)
        })
      } catch {
        continue
      }
      watcher.on("error", () => watcher.close())
      yield* Effect.addFinalizer(() => Effect.sync(() => watcher.close()))
      streams.push(Stream.fromQueue(changes))
    }
    return Stream.mergeAll(streams, { concurrency: "unbounded" }).pipe(Stream.debounce(Duration.millis(RELOAD_DEBOUNCE_MS)), Stream.runForEach(() => reload))
  })

const minutes = (ms: number): string => (ms % 60_000 === 0 ? `${ms / 60_000}m` : `${Math.round(ms / 1000)}s`)

/** The engine's timers forked into the layer's scope (a plain fork would end with the fiber that builds the layer). */
export const startTimers = (engine: Pick<PoolEngineService, "sweep" | "reload">, settings: Pick<Settings, "reapMs" | "hangMinAgeMs" | "hangSilenceMs">, watched: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const log = yield* AppLog
    yield* log.log("info", `reaper armed: every ${Math.round(settings.reapMs / 1000)}s; hung = older than ${minutes(settings.hangMinAgeMs)} and silent ${minutes(settings.hangSilenceMs)}`)
    yield* Effect.forkScoped(reaperLoop(engine, settings.reapMs))
    yield* Effect.forkScoped(yield* watchPool(watched, engine.reload.pipe(Effect.catchAllCause((c) => log.log("error", `pool reload failed: ${causeLine(c)}`)))))
  })
