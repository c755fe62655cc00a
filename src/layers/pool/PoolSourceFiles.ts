/**
 * The pool source chain read from files (SPEC §3.1): option `models`, option `modelsFile`, the user
 * config directory (`pool.txt`, else `pool.json`), the bundled `presets/free-tier.json`, the built-in
 * fallback. Without Effect: the plugin's boot entry resolves the pool with it for the first config hook,
 * before the engine (and Effect with it) is loaded (docs/PERFORMANCE.md, "opencode start").
 */
import { existsSync } from "node:fs"
import { isAbsolute, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { POOL_FILE_MAX_BYTES } from "../../core/readLimits.js"
import { resolvePool, type PoolSource, type ResolvedPool } from "../../core/source.js"
import { occupied, readTextFile } from "../fs/safeRead.js"
import { expandHome, xdgDir } from "../fs/xdg.js"

/** The user config directory, or `undefined` when there is no home directory to find it under. */
export const configDir = (env: NodeJS.ProcessEnv = process.env): string | undefined => {
  const base = xdgDir("XDG_CONFIG_HOME", env)
  return base === undefined ? undefined : join(base, "opencode-pool")
}

/** A file of the package's `presets/`, next to `dist/` in the package (or three levels above this file when running from sources). */
export const bundledFile = (name: string): string | undefined => {
  for (const rel of [`../presets/${name}`, `../../../presets/${name}`]) {
    try {
      const p = fileURLToPath(new URL(rel, import.meta.url))
      if (existsSync(p)) return p
    } catch {
      // not a file URL (bundled into something else)
    }
  }
  return undefined
}

/** The bundled preset pool. */
export const bundledPreset = (): string | undefined => bundledFile("free-tier.json")

/** A pool file through safeRead: a regular file of at most POOL_FILE_MAX_BYTES, or a one-line reason. */
const readSource = (origin: string, path: string): PoolSource => {
  const read = readTextFile(path, POOL_FILE_MAX_BYTES)
  if (read._tag === "Text") return { kind: "file", origin, text: read.text }
  return read._tag === "Missing" ? { kind: "unreadable", origin, reason: "no such file or directory", missing: true } : { kind: "unreadable", origin, reason: read.reason, missing: false }
}

/** `~` expanded, a relative path taken from `directory`; `undefined` for a `~` path when there is no home directory. */
const expand = (path: string, directory: string): string | undefined => {
  const home = expandHome(path)
  return home === undefined ? undefined : isAbsolute(home) ? home : resolve(directory, home)
}

/** A named pool file: read, or unreadable for a named reason (never "missing": it was asked for). */
const namedSource = (path: string, directory: string): { readonly source: PoolSource; readonly path: string | undefined } => {
  const p = expand(path, directory)
  if (p === undefined) return { source: { kind: "unreadable", origin: path, reason: "no home directory to expand ~ against", missing: false }, path: undefined }
  const s = readSource(p, p)
  return { source: s.kind === "unreadable" ? { ...s, missing: false } : s, path: p }
}

export interface PoolSourceOptions {
  readonly models: unknown
  readonly modelsFile: string | undefined
  readonly maxSlots: number
  /** The project directory (relative `modelsFile` paths). */
  readonly directory: string
  /** The CLI's `--pool FILE`, tried first. */
  readonly poolFile?: string | undefined
}

/** The sources in chain order, as read now. */
export const gatherSources = (o: PoolSourceOptions, env: NodeJS.ProcessEnv = process.env): { readonly sources: ReadonlyArray<PoolSource>; readonly notes: ReadonlyArray<string>; readonly watched: ReadonlyArray<string> } => {
  const sources: Array<PoolSource> = []
  const notes: Array<string> = []
  const watched: Array<string> = []
  if (o.poolFile !== undefined) {
    const named = namedSource(o.poolFile, process.cwd())
    sources.push(named.source)
    if (named.path !== undefined) watched.push(named.path)
  }
  if (o.models !== undefined) sources.push({ kind: "object", origin: "plugin options", value: o.models })
  if (o.modelsFile !== undefined) {
    const named = namedSource(o.modelsFile, o.directory)
    sources.push(named.source)
    if (named.path !== undefined) watched.push(named.path)
  }
  const dir = configDir(env)
  // no home directory: there is no user config directory to read
  if (dir !== undefined) {
    watched.push(dir)
    const txt = join(dir, "pool.txt")
    const json = join(dir, "pool.json")
    const hasTxt = occupied(txt)
    if (hasTxt) {
      sources.push(readSource(txt, txt))
      if (occupied(json)) notes.push(`both ${txt} and ${json} exist; ${json} is ignored`)
    } else if (occupied(json)) {
      sources.push(readSource(json, json))
    }
  }
  const preset = bundledPreset()
  if (preset !== undefined) {
    const s = readSource("presets/free-tier.json", preset)
    if (s.kind === "file") sources.push(s)
  }
  return { sources, notes, watched }
}

/** The chain resolved from the files as they are now, the notes about them first among the warnings. */
export const loadPool = (o: PoolSourceOptions, env: NodeJS.ProcessEnv = process.env): ResolvedPool => {
  const g = gatherSources(o, env)
  const resolved = resolvePool(g.sources, o.maxSlots)
  return { ...resolved, warnings: [...g.notes, ...resolved.warnings] }
}
