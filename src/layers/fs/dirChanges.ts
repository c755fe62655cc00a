/**
 * A directory watched (issue 24): the file backend's change feed (the state directory) and the live
 * view's recorded decisions. Watched with `fs.watch` (inotify on Linux): one element per event, the
 * name of the file it concerns (undefined when the system does not say), whoever wrote. A directory
 * that does not exist yet is waited for through its parent; one that is removed (inotify then says
 * `rename` and nothing more) is waited for again the same way. Nothing is polled: a parent that cannot
 * be watched either is tried again after a second. The first element comes as soon as the watch is in
 * place, so a consumer that looks on each element misses nothing that happened before it subscribed.
 */
import { Effect, Stream } from "effect"
import { existsSync, watch, type FSWatcher } from "node:fs"
import { basename, dirname } from "node:path"

const RETRY_MS = 1_000

/** Events in `dir` (none when there is no directory to watch); `persistent: false`: the watch never keeps the process alive. */
export const dirChanges = (dir: string | undefined, options: { readonly persistent?: boolean } = {}): Stream.Stream<string | undefined> =>
  dir === undefined
    ? Stream.never
    : Stream.asyncScoped<string | undefined>((emit) =>
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
                watcher = watch(dir, { persistent: options.persistent ?? true }, (event, file) => {
                  void emit.single(file ?? undefined)
                  // the directory itself went away: wait for it through its parent
                  if (event === "rename" && !existsSync(dir)) attach()
                })
                watcher.on("error", () => (void emit.single(undefined), retry()))
              } catch {
                try {
                  const name = basename(dir)
                  watcher = watch(dirname(dir), { persistent: options.persistent ?? true }, (_event, file) => {
                    if (file === name && existsSync(dir)) {
                      void emit.single(undefined)
                      attach()
                    }
                  })
                  watcher.on("error", retry)
                  // made between the failed watch and this one: nothing would say so
                  if (existsSync(dir)) {
                    void emit.single(undefined)
                    attach()
                  }
                } catch {
                  retry()
                }
              }
            }
            attach()
            // once in place, one element: whatever happened before it (a directory made meanwhile) is looked at
            void emit.single(undefined)
            return () => {
              closed = true
              if (timer !== undefined) clearTimeout(timer)
              watcher?.close()
            }
          }),
          (stop) => Effect.sync(stop)
        )
      )
