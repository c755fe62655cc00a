/**
 * Which files an opencode tool call wrote (issue 23): `edit`, `write` and `multiedit` name one
 * `filePath`; `patch` and `apply_patch` carry a patch whose `*** Add File:`, `*** Update File:`,
 * `*** Delete File:` and `*** Move to:` headers name them. Pure and total over untrusted arguments:
 * a guarded read, at most EDIT_PATHS_MAX paths of at most EDIT_PATH_MAX characters, and only the first
 * PATCH_SCAN_MAX characters of a patch are scanned.
 */
import { field } from "../extract.js"

export const EDIT_TOOLS: ReadonlySet<string> = new Set(["edit", "write", "multiedit", "patch", "apply_patch"])
export const EDIT_PATHS_MAX = 1_000
export const EDIT_PATH_MAX = 4_096
export const PATCH_SCAN_MAX = 1_048_576

const HEADER = /^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+)$/gm

const usable = (p: unknown): p is string => typeof p === "string" && p.trim().length > 0 && p.length <= EDIT_PATH_MAX

/**
 * `path` made relative to `dir` when it lies under it: opencode names files under the directory it was
 * started in, which may be a symbolic link to the project root the map is kept for (its real path).
 */
export const underDirectory = (dir: string, path: string): string => {
  const base = dir.replace(/\/+$/, "")
  return base.length > 0 && path.startsWith(`${base}/`) ? path.slice(base.length + 1) : path
}

/** The paths `tool` wrote with `args`, as the tool named them (absolute or relative to the project), in order, each once. */
export const editedPaths = (tool: unknown, args: unknown): ReadonlyArray<string> => {
  if (typeof tool !== "string" || !EDIT_TOOLS.has(tool)) return []
  const out: Array<string> = []
  const add = (p: unknown) => {
    if (!usable(p) || out.length >= EDIT_PATHS_MAX) return
    const t = p.trim()
    if (!out.includes(t)) out.push(t)
  }
  add(field(args, "filePath"))
  add(field(args, "file_path"))
  const patch = field(args, "patchText") ?? field(args, "patch_text") ?? field(args, "patch")
  if (typeof patch === "string") {
    for (const m of patch.slice(0, PATCH_SCAN_MAX).matchAll(HEADER)) add(m[1])
  }
  return out
}
