/**
 * Whether an opencode `plugin` entry is this plugin's (the part of the test that reads the file
 * system): the package name `opencode-pool` (core/opencodeConfig.ts `isOurName`), or a `file://` URL
 * whose target, symbolic links resolved, belongs to an opencode-pool installation: the nearest
 * `package.json` with a name above it is named `opencode-pool`. Another package's `dist/opencode-plugin.js`, or a
 * path that merely has an `opencode-pool` segment, is not ours. An entry of ours names this
 * installation, or another one (a checkout the user moved on from): `init` replaces the other's.
 */
import { readFileSync, realpathSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { isOurName } from "../../core/opencodeConfig.js"

/** How many directories above the file the nearest package.json is looked for. */
const LEVELS = 8
const PACKAGE_JSON_MAX_BYTES = 1 << 20

/** The nearest package.json above `file` that has a name: that name and its directory; `undefined` when none is found or one is unreadable. */
export const nearestPackage = (file: string): { readonly name: string; readonly dir: string } | undefined => {
  let dir = dirname(file)
  for (let i = 0; i < LEVELS; i++) {
    let text: string | undefined
    try {
      text = readFileSync(join(dir, "package.json"), "utf8")
    } catch {
      text = undefined
    }
    if (text !== undefined) {
      if (text.length > PACKAGE_JSON_MAX_BYTES) return undefined
      let name: unknown
      try {
        name = (JSON.parse(text) as { name?: unknown } | null)?.name
      } catch {
        return undefined
      }
      // a nameless package.json (`{"type": "commonjs"}` beside a bundle) marks a module type, not a package
      if (typeof name === "string") return { name, dir }
    }
    const up = dirname(dir)
    if (up === dir) return undefined
    dir = up
  }
  return undefined
}

/** The root (a real path) of the opencode-pool installation `file` (symbolic links resolved) is part of, or `undefined`. */
export const installationOfFile = (file: string): string | undefined => {
  let real: string
  try {
    real = realpathSync(file)
  } catch {
    return undefined
  }
  const found = nearestPackage(real)
  return found?.name === "opencode-pool" ? found.dir : undefined
}

/** Whether `file` (symbolic links resolved) is part of an opencode-pool installation. */
export const isOurBundleFile = (file: string): boolean => installationOfFile(file) !== undefined

/** The file a `file://` entry names, or `undefined` when it is not such a URL. */
const fileOfUrl = (entry: string): string | undefined => {
  if (!entry.startsWith("file:")) return undefined
  try {
    return fileURLToPath(entry)
  } catch {
    return undefined
  }
}

/** Whether a `plugin` entry name is this plugin's. */
export const isOurEntryName = (name: string): boolean => {
  if (isOurName(name)) return true
  const file = fileOfUrl(name.trim())
  return file !== undefined && isOurBundleFile(file)
}

/**
 * Whether a `plugin` entry of ours loads another installation than the one whose root is `root`: a
 * `file://` URL into an opencode-pool installation elsewhere. The package name is never another
 * installation: it names the package, and opencode installs it where it chooses.
 */
export const isOtherInstallationEntry = (name: string, root: string): boolean => {
  if (isOurName(name)) return false
  const file = fileOfUrl(name.trim())
  if (file === undefined) return false
  const theirs = installationOfFile(file)
  if (theirs === undefined) return false
  let ours: string
  try {
    ours = realpathSync(root)
  } catch {
    ours = root
  }
  return theirs !== ours
}
