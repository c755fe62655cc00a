/** Writing a state file whole: a `.tmp` sibling, then a rename (SPEC §5.2). */
import { renameSync, unlinkSync, writeFileSync } from "node:fs"

/**
 * Writes `body` to `path` through `<path>.tmp` (mode 0600). Whatever sits at the `.tmp` name is removed
 * first (a link is removed, not followed) and the file is created exclusively, so a link planted there
 * in a directory others can write never redirects the write to its target.
 */
export const writeFileAtomic = (path: string, body: string): void => {
  const tmp = `${path}.tmp`
  try {
    unlinkSync(tmp)
  } catch {
    // nothing there (the usual case)
  }
  writeFileSync(tmp, body, { mode: 0o600, flag: "wx" })
  renameSync(tmp, path)
}
