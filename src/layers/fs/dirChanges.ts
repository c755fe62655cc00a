/**
 * A directory watched (issue 24): the file backend's change feed (the state directory) and the live
 * view's recorded decisions. Watched with `fs.watch` (inotify on
 * Linux), one element per event, whoever wrote. A directory that does not exist yet is waited for
 * through its parent; one that goes away is watched again once it is back. Nothing is polled: a
 * parent that cannot be watched either is tried again after a second.
 */
import { Effect, Stream } from "effect"
import { watch, type FSWatcher } from "node:fs"
import { basename, dirname } from "node:path"

const RETRY_MS = 1_000

/** Events in `dir` (none when there is no directory to watch). */
export const dirChanges = (dir: string | undefined): Stream.Stream<void> =>
  dir === undefined
    ? Stream.never
    : Stream.asyncScoped<void>((emit) =>
        Effect.acquireRelease(
          Effect.sync(() => {
            let watcher: FSWatcher | undefined
            let timer: NodeJS.Timeout | undefined
            let closed = false
            const retry = () => {
              if (!closed && timer === undefined) timer = setTimeout(() => ((timer = undefined), attach()), RETRY_MS)
            }
            const attach = (): void => {
              if (closed) return
              watcher?.close()
              watcher = undefined
              try {
                watcher = watch(dir, { persistent: true }, () => void emit.single(undefined))
                // the directory went away (removed, unmounted): say so, then watch for it again
                watcher.on("error", () => (void emit.single(undefined), retry()))
              } catch {
                try {
                  const name = basename(dir)
                  watcher = watch(dirname(dir), { persistent: true }, (_event, file) => {
                    if (file === name) {
                      void emit.single(undefined)
                      attach()
                    }
                  })
                  watcher.on("error", retry)
                } catch {
                  retry()
                }
              }
            }
            attach()
            return () => {
              closed = true
              if (timer !== undefined) clearTimeout(timer)
              watcher?.close()
            }
          }),
          (stop) => Effect.sync(stop)
        )
      )
