/**
 * The context map's fixed facts (SPEC §13, epic G): where it lives, its five files, the user's
 * `manager.md`, the paths an automatic refresh ignores, its spacing and its prompt cap. Pure data and
 * total path functions; no I/O.
 */

/** The map's directory, relative to the project root. */
export const MAP_DIR = ".opencode/context"

/** The five files the `context` agent maintains, in the order prompts and views list them. */
export const MAP_FILES = ["architecture.md", "contexts.md", "conventions.md", "workflows.md", "decisions.md"] as const

/** The user's own file in the map directory: read by every agent, written by none. */
export const MANAGER_FILE = "manager.md"

/** Path segments whose files never queue a refresh (build output, dependencies, caches, VCS). */
export const SKIP_SEGMENTS: ReadonlySet<string> = new Set([
  "node_modules",
  "dist",
  "out",
  "build",
  "coverage",
  "target",
  "vendor",
  "venv",
  ".venv",
  "__pycache__",
  ".next",
  ".turbo",
  ".cache",
  ".git"
])

/** A refresh starts only when the last one began at least this long ago. */
export const REFRESH_SPACING_MS = 600_000

/** At most this many pending paths are listed in a refresh prompt; the rest are summed up as `…and K more`. */
export const PROMPT_PATHS_MAX = 25

/** The default budget of the five map files together (option `contextMap.maxBytes`). */
export const MAP_MAX_BYTES_DEFAULT = 24 * 1024

/** The bound on remembered pending paths (the oldest are kept; later ones are counted as dropped). */
export const PENDING_MAX = 10_000

/** Session titles of the automatic refresh. */
export const REFRESH_TITLE = { update: "context (auto update)", bootstrap: "context (auto bootstrap)" } as const
export type RefreshKind = keyof typeof REFRESH_TITLE

/** Whether a session title is one of the refresh's own. */
export const isRefreshTitle = (title: string | undefined): boolean =>
  title === REFRESH_TITLE.update || title === REFRESH_TITLE.bootstrap

const trimSlashes = (p: string): string => p.replace(/\/+$/, "")

/**
 * An edited path as the refresh queue keeps it: relative to `root` with `/` separators, or undefined
 * when it is outside the root, the root itself, inside the map, or under a skipped segment. `path` may
 * be absolute or relative to the root (opencode's tools take either).
 */
export const queuedPath = (root: string, path: string): string | undefined => {
  if (path.length === 0 || root.length === 0) return undefined
  const base = trimSlashes(root.replace(/\\/g, "/")) || "/"
  const given = path.replace(/\\/g, "/")
  let rel: string
  if (given.startsWith("/")) {
    const prefix = base === "/" ? "/" : `${base}/`
    if (!given.startsWith(prefix)) return undefined
    rel = given.slice(prefix.length)
  } else rel = given
  const parts: Array<string> = []
  for (const seg of rel.split("/")) {
    if (seg === "" || seg === ".") continue
    if (seg === "..") {
      if (parts.length === 0) return undefined
      parts.pop()
      continue
    }
    parts.push(seg)
  }
  if (parts.length === 0) return undefined
  if (parts.some((seg) => SKIP_SEGMENTS.has(seg))) return undefined
  const joined = parts.join("/")
  if (joined === MAP_DIR || joined.startsWith(`${MAP_DIR}/`)) return undefined
  return joined
}
