/**
 * `ocpool init --global | --project [--dry-run] [--remove]`: adds this installation's plugin entry to
 * opencode's config (or takes it out), splicing the entry into the file's bytes (core/opencodeConfig.ts:
 * every byte outside the edit kept, a BOM, each line's ending and bytes that are not UTF-8 included;
 * linear in the file's size), and creates the pool file from the bundled preset when there is none. A
 * second run changes no byte; an entry of ours that loads another installation (a checkout moved on
 * from) is replaced by this one's; `--dry-run` prints the unified diff and writes nothing; a config that is
 * not valid JSONC, nests too deep or has two `plugin` keys is refused with its file, line and column
 * (exit 2). A symbolic link is edited at its target; a read-only file is refused (exit 1).
 */
import { createTwoFilesPatch } from "diff"
import { Effect } from "effect"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { utf8Of } from "../core/byteText.js"
import { addPluginEntry, removePluginEntry, type ConfigEdit } from "../core/opencodeConfig.js"
import { printable } from "../core/printable.js"
import { installationRoot } from "../layers/install/installation.js"
import { isOtherInstallationEntry, isOurEntryName } from "../layers/install/pluginEntry.js"
import { configDir } from "../layers/pool/PoolConfigFile.js"
import { occupied, readBytesFile } from "../layers/fs/safeRead.js"
import { noHomeReason, xdgDir } from "../layers/fs/xdg.js"
import { BadInput, InitRefused, PathUnusable } from "./errors.js"
import { writeBack } from "./shared/writeBack.js"

export type InstallTarget = "global" | "project"

/** Largest opencode config edited. */
const CONFIG_MAX_BYTES = 1 << 20

export { installationRoot }

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
  /**
   * `replaced`: the entry of another installation that this one's took the place of; `dropped`: further
   * entries of other installations taken out (adding only; `null` and `[]` otherwise).
   */
  readonly config: {
    readonly path: string
    readonly entry: string
    readonly changed: boolean
    readonly created: boolean
    readonly replaced: string | null
    readonly dropped: ReadonlyArray<string>
    readonly diff: string
  }
  /** The pool file: created from the preset, already there, or (removing) left alone. */
  readonly pool: { readonly path: string | undefined; readonly written: boolean }
}

/** The user's pool file when there is one (`pool.txt`, then `pool.json`). */
export const existingPool = (env: NodeJS.ProcessEnv = process.env): string | undefined => {
  const dir = configDir(env)
  if (dir === undefined) return undefined
  return ["pool.txt", "pool.json"].map((f) => join(dir, f)).find((p) => occupied(p))
}

const editOf = (text: string, remove: boolean, entry: string, root: string): ConfigEdit =>
  remove ? removePluginEntry(text, isOurEntryName) : addPluginEntry(text, entry, isOurEntryName, (name) => isOtherInstallationEntry(name, root))

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
    const read = readBytesFile(path, CONFIG_MAX_BYTES)
    if (read._tag === "Refused") return yield* new PathUnusable({ path, reason: read.tooLarge === true ? `${read.reason}; not changed` : read.reason })
    // one character per byte: the edit keeps every byte it does not touch
    const before = read._tag === "Bytes" ? read.bytes.toString("latin1") : ""
    const created = read._tag === "Missing"
    if (created && o.remove) return { config: { path, entry, changed: false, created: false, replaced: null, dropped: [], diff: "" }, pool: { path: undefined, written: false } }
    // a pause before the work that takes time: a signal that arrived while reading ends the run here
    yield* Effect.yieldNow()
    const edit = editOf(before, o.remove, entry, root)
    if (edit._tag === "Invalid") return yield* new BadInput({ message: `${printable(path)}:${edit.line}:${edit.column}: ${edit.reason}; ${edit.syntax ? "not valid JSONC, " : ""}nothing changed` })
    const after = edit._tag === "Changed" ? edit.text : before
    const changed = after !== before
    const diff = changed ? createTwoFilesPatch(created ? "/dev/null" : path, path, utf8Of(before), utf8Of(after), "", "", { context: 3 }) : ""
    yield* Effect.yieldNow()
    if (!o.dryRun && changed) {
      if (after.length > CONFIG_MAX_BYTES) return yield* new PathUnusable({ path, reason: "would grow past 1 MiB; not changed" })
      // the file's own mode, 0644 for a new one
      yield* writeBack(path, read._tag === "Bytes" ? read.stat : undefined, Buffer.from(after, "latin1"), { dirMode: 0o777, newFileMode: 0o644, targetDir: false })
    }
    if (o.remove) return { config: { path, entry, changed, created: false, replaced: null, dropped: [], diff }, pool: { path: undefined, written: false } }
    const replaced = edit._tag === "Changed" ? (edit.replaced ?? null) : null
    const dropped = edit._tag === "Changed" ? (edit.dropped ?? []) : []
    const config = { path, entry, changed, created: created && changed, replaced, dropped, diff }
    const existing = existingPool(env)
    if (existing !== undefined) return { config, pool: { path: existing, written: false } }
    return { config, pool: { path: o.dryRun ? poolTarget(env) : yield* writePool(), written: true } }
  })
