/**
 * The context map's files in a project (epic G, US-20): `stat`s of `<root>/.opencode/context/*`, what
 * every context store reports as the map's facts. (The records themselves are on the shared-state
 * port since issue 32: ContextStoreShared.ts.)
 */
import { statSync } from "node:fs"
import { join } from "node:path"
import { MANAGER_FILE, MAP_DIR, MAP_FILES } from "../../core/context/map.js"
import type { MapFacts, MapFileFacts } from "../../core/context/mapFacts.js"

/** A regular file's size and mtime (links followed), or undefined. */
const fileStat = (path: string): { readonly bytes: number; readonly mtimeMs: number } | undefined => {
  try {
    const st = statSync(path)
    return st.isFile() ? { bytes: st.size, mtimeMs: st.mtimeMs } : undefined
  } catch {
    return undefined
  }
}

/** The map's files in `<root>/.opencode/context/` as they are now. Never throws. */
export const readMapFacts = (root: string): MapFacts => {
  const dir = join(root, MAP_DIR)
  let exists = false
  try {
    exists = statSync(dir).isDirectory()
  } catch {
    exists = false
  }
  if (!exists) return { exists, files: [] }
  const files: Array<MapFileFacts> = []
  for (const name of MAP_FILES) {
    const st = fileStat(join(dir, name))
    if (st !== undefined) files.push({ name, ...st })
  }
  const manager = fileStat(join(dir, MANAGER_FILE))
  if (manager !== undefined) files.push({ name: MANAGER_FILE, ...manager, manager: true })
  return { exists, files }
}
