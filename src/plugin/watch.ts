/** Pool-file watching for hot reload (SPEC §3.4). */
import { existsSync, statSync, watch, type FSWatcher } from "node:fs"
import { basename, dirname } from "node:path"

export const RELOAD_DEBOUNCE_MS = 250

/**
 * Watches pool files and the user config directory (SPEC §3.4): each path's directory is watched (a
 * file that is replaced by an editor keeps being seen), and changes are debounced into one reload.
 */
export const watchPaths = (paths: ReadonlyArray<string>, debounceMs: number, onChange: () => void): Array<FSWatcher> => {
  let pending: ReturnType<typeof setTimeout> | undefined
  const fire = () => {
    if (pending !== undefined) clearTimeout(pending)
    pending = setTimeout(() => {
      pending = undefined
      onChange()
    }, debounceMs)
    pending.unref?.()
  }
  const watchers: Array<FSWatcher> = []
  for (const p of paths) {
    const isDir = existsSync(p) && statSync(p).isDirectory()
    const dir = isDir ? p : dirname(p)
    const name = isDir ? undefined : basename(p)
    try {
      const w = watch(dir, { persistent: false }, (_event, file) => {
        if (name === undefined || file === null || file === name) fire()
      })
      w.on("error", () => w.close())
      watchers.push(w)
    } catch {
      // a directory that does not exist yet is not watched; the next boot sees it
    }
  }
  return watchers
}
