/**
 * `ocpool init --global | --project [--dry-run] [--remove]`: adds this installation's plugin entry to
 * opencode's config (or takes it out), editing the JSONC text in place (core/opencodeConfig.ts keeps
 * comments, trailing commas, indentation and key order), and creates the pool file from the bundled
 * preset when there is none. A second run changes no byte; `--dry-run` prints the unified diff and
 * writes nothing; a config that is not valid JSONC is refused with its file, line and column (exit 2).
 */
import { createTwoFilesPatch } from "diff"
import { Effect } from "effect"
import { readFileSync, statSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { addPluginEntry, removePluginEntry, type ConfigEdit } from "../core/opencodeConfig.js"
import { printable } from "../core/printable.js"
import { writeFileAtomic } from "../layers/atomicWrite.js"
import { dirReason, makeDir } from "../layers/dirs.js"
import { configDir } from "../layers/PoolConfigFile.js"
import { occupied, readTextFile } from "../layers/safeRead.js"
import { noHomeReason, xdgDir } from "../layers/xdg.js"
import { BadInput, InitRefused, PathUnusable } from "./errors.js"

export type InstallTarget = "global" | "project"

/** Largest opencode config edited. */
const CONFIG_MAX_BYTES = 1 << 20

/** The root of this installation: the nearest directory above this module with opencode-pool's package.json. */
export const installationRoot = (from: string = fileURLToPath(import.meta.url)): string | undefined => {
  let dir = dirname(from)
  for (let i = 0; i < 6; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: unknown }
      if (pkg.name === "opencode-pool") return dir
    } catch {
      // not here
    }
    const up = dirname(dir)
    if (up === dir) break
    dir = up
  }
  return undefined
}

/**
 * The plugin entry that loads this installation: the bare name when this installation is the package
 * opencode itself installed (its cache's `node_modules/opencode-pool`), else the `file://` URL of this
 * installation's plugin bundle (a checkout, `npm i -g ./opencode-pool-<v>.tgz`, `npx`).
 */
export const pluginEntryFor = (root: string, env: NodeJS.ProcessEnv = process.env): string => {
  const cache = xdgDir("XDG_CACHE_HOME", env)
  if (cache !== undefined && root === join(cache, "opencode", "node_modules", "opencode-pool")) return "opencode-pool"
  return pathToFileURL(join(root, "dist", "opencode-plugin.js")).href
}

/** opencode's global config directory (`$XDG_CONFIG_HOME/opencode`), or `undefined` without a home. */
export const opencodeGlobalDir = (env: NodeJS.ProcessEnv = process.env): string | undefined => {
  const base = xdgDir("XDG_CONFIG_HOME", env)
  return base === undefined ? undefined : join(base, "opencode")
}

/** The config file `init` edits: the `.jsonc` when there is one, else `opencode.json` (created when absent). */
export const configFileFor = (target: InstallTarget, env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): string | undefined => {
  const dir = target === "global" ? opencodeGlobalDir(env) : cwd
  if (dir === undefined) return undefined
  return occupied(join(dir, "opencode.jsonc")) ? join(dir, "opencode.jsonc") : join(dir, "opencode.json")
}

export interface InstallOutcome {
  readonly config: { readonly path: string; readonly entry: string; readonly changed: boolean; readonly created: boolean; readonly diff: string }
  /** The pool file: created from the preset, already there, or (removing) left alone. */
  readonly pool: { readonly path: string | undefined; readonly written: boolean }
}

/** The user's pool file when there is one (`pool.txt`, then `pool.json`). */
export const existingPool = (env: NodeJS.ProcessEnv = process.env): string | undefined => {
  const dir = configDir(env)
  if (dir === undefined) return undefined
  return ["pool.txt", "pool.json"].map((f) => join(dir, f)).find((p) => occupied(p))
}

const editOf = (text: string, remove: boolean, entry: string): ConfigEdit => (remove ? removePluginEntry(text) : addPluginEntry(text, entry))

/** Edits (or, with `dryRun`, only plans) the config of `target`; `writePool` creates the pool file when none exists. */
export const install = (
  target: InstallTarget,
  o: { readonly dryRun: boolean; readonly remove: boolean },
  writePool: () => Effect.Effect<string, PathUnusable | InitRefused>,
  poolTarget: (env: NodeJS.ProcessEnv) => string | undefined,
  env: NodeJS.ProcessEnv = process.env
): Effect.Effect<InstallOutcome, BadInput | PathUnusable | InitRefused> =>
  Effect.gen(function* () {
    const path = configFileFor(target, env)
    if (path === undefined) return yield* new PathUnusable({ path: "$XDG_CONFIG_HOME/opencode", reason: noHomeReason("XDG_CONFIG_HOME") })
    const root = installationRoot()
    if (root === undefined) return yield* new PathUnusable({ path: fileURLToPath(import.meta.url), reason: "cannot find this installation's package.json" })
    const entry = pluginEntryFor(root, env)
    const read = readTextFile(path, CONFIG_MAX_BYTES)
    if (read._tag === "Refused") return yield* new PathUnusable({ path, reason: read.reason })
    const before = read._tag === "Text" ? read.text : ""
    const created = read._tag === "Missing"
    if (created && o.remove) return { config: { path, entry, changed: false, created: false, diff: "" }, pool: { path: undefined, written: false } }
    const edit = editOf(before, o.remove, entry)
    if (edit._tag === "Invalid") return yield* new BadInput({ message: `${printable(path)}:${edit.line}:${edit.column}: ${edit.reason}; not valid JSONC, nothing changed` })
    const after = edit._tag === "Changed" ? edit.text : before
    const diff = after === before ? "" : createTwoFilesPatch(created ? "/dev/null" : path, path, before, after, "", "", { context: 3 })
    if (!o.dryRun && after !== before) {
      const problem = makeDir(dirname(path), 0o777)
      if (problem !== undefined) return yield* new PathUnusable({ path: problem.path, reason: dirReason(problem.code) })
      const mode = created ? 0o644 : statSync(path).mode & 0o777
      yield* Effect.try({
        try: () => writeFileAtomic(path, after, mode),
        catch: (e) => new PathUnusable({ path, reason: dirReason((e as NodeJS.ErrnoException).code ?? String(e)) })
      })
    }
    if (o.remove) return { config: { path, entry, changed: after !== before, created: false, diff }, pool: { path: undefined, written: false } }
    const config = { path, entry, changed: after !== before, created: created && after !== before, diff }
    const existing = existingPool(env)
    if (existing !== undefined) return { config, pool: { path: existing, written: false } }
    return { config, pool: { path: o.dryRun ? poolTarget(env) : yield* writePool(), written: true } }
  })
