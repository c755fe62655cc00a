/**
 * `ocpool doctor`'s checks of what opencode loads: the pool source (`pool`), the slot models
 * (`models`, doctor/models.ts), the plugin's listing in opencode's config files (`plugin`), and whether
 * a running opencode has the plugin loaded (`plugin-loaded`, issue 33: from the engines on record; never
 * a failure nor a warning, no opencode running is a fact, not a fault).
 */
import { closeSync } from "node:fs"
import { isAbsolute, join } from "node:path"
import { describeSlots } from "../../core/pool/pool.js"
import { entryFile, looksLikeOurPath, pluginListing } from "../../core/opencodeConfig.js"
import { enginesLine, type EngineView } from "../../core/state/engines.js"
import { occupied, openRegular, readTextFile } from "../../layers/fs/safeRead.js"
import { noHomeReason } from "../../layers/fs/xdg.js"
import { ocpoolLine } from "../../layers/install/installation.js"
import { isOurEntryName } from "../../layers/install/pluginEntry.js"
import { configDir } from "../../layers/pool/PoolConfigFile.js"
import { opencodeGlobalDir } from "../install.js"
import { cliPool } from "../stateView.js"
import type { Check } from "./check.js"
import { modelsCheck } from "./models.js"

/**
 * Why a pool file in the config directory is there but cannot be opened (a symbolic link loop, a
 * dangling link, a FIFO, a directory, no permission), or `undefined` when it is absent or openable. Opens
 * without blocking and reads nothing.
 */
export const poolFileProblem = (path: string): string | undefined => {
  const opened = openRegular(path)
  if (opened._tag === "Missing") return undefined // nothing there: the chain goes on
  if (opened._tag === "Refused") return opened.reason
  closeSync(opened.fd)
  return undefined
}

/** `pool`: where the pool comes from, its slots, and what is wrong with its files. */
export const poolCheck = (): Check => {
  const pool = cliPool(undefined)
  const dir = configDir()
  const problems = dir === undefined ? [] : ["pool.txt", "pool.json"].flatMap((n) => {
    const why = poolFileProblem(join(dir, n))
    return why === undefined ? [] : [`${join(dir, n)}: ${why}`]
  })
  const notes = [...problems, ...pool.warnings, ...(dir === undefined ? [`user config directory not read: ${noHomeReason("XDG_CONFIG_HOME")}`] : [])]
  const broken = problems.length > 0 || pool.warnings.some((w) => w.includes("unusable") || w.includes("unreadable"))
  return { id: "pool", status: broken ? "fail" : notes.length > 0 ? "warn" : "ok", detail: `${pool.origin}: ${describeSlots(pool.slots)}${notes.length > 0 ? `; ${notes.join("; ")}` : ""}` }
}


/** `models`: the pool's slots against opencode's model catalog and the configs' providers. */
export const slotModelsCheck = (): ReadonlyArray<Check> => modelsCheck(cliPool(undefined).slots, opencodeConfigs())

/** Where opencode's config files are (global, project, `OPENCODE_CONFIG`); the global ones are skipped without a home. */
export const opencodeConfigs = (env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): ReadonlyArray<string> => {
  const global = opencodeGlobalDir(env)
  const explicit = env.OPENCODE_CONFIG !== undefined && env.OPENCODE_CONFIG !== "" ? [isAbsolute(env.OPENCODE_CONFIG) ? env.OPENCODE_CONFIG : join(cwd, env.OPENCODE_CONFIG)] : []
  return [
    ...(global === undefined ? [] : [join(global, "opencode.json"), join(global, "opencode.jsonc")]),
    join(cwd, "opencode.json"),
    join(cwd, "opencode.jsonc"),
    ...explicit
  ]
}

/** Largest opencode config file the plugin check reads. */
const CONFIG_MAX_BYTES = 1 << 20

/**
 * Which opencode config files exist (opencode reads them all), whether one lists this plugin, and
 * whether each listed entry that names a file (a `file://` URL or a path) points to one that can be
 * read: a moved checkout or a removed global install is a failure, not a silent non-load.
 */
export const pluginCheck = (env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): Check => {
  const invalid: Array<string> = []
  const read: Array<string> = []
  const listed: Array<string> = []
  const broken: Array<string> = []
  const stale: Array<string> = []
  const ocpool = (args: string) => ocpoolLine(args, env, cwd)
  for (const path of opencodeConfigs(env, cwd)) {
    // non-blocking, capped, regular files only: a FIFO swapped in after any check cannot block the doctor
    const file = readTextFile(path, CONFIG_MAX_BYTES)
    if (file._tag === "Missing") continue
    if (file._tag === "Refused") {
      invalid.push(file.tooLarge === true ? `${path}: larger than 1 MiB, not read` : `${path}: ${file.reason}`)
      continue
    }
    read.push(path)
    const listing = pluginListing(file.text, isOurEntryName)
    if (listing._tag === "Invalid") invalid.push(`${path}: not valid JSONC (${listing.reason})`)
    // an entry whose file is gone from a path named opencode-pool (a moved checkout): not ours to edit, but named
    const gone = pluginListing(file.text, (name) => {
      const target = entryFile(name)
      return target !== undefined && looksLikeOurPath(target) && !occupied(target)
    })
    if (gone._tag === "Listed") for (const entry of gone.entries) stale.push(`${entry} in ${path}: no such file (delete that entry by hand)`)
    if (listing._tag !== "Listed") continue
    for (const entry of listing.entries) {
      const target = entryFile(entry)
      const opened = target === undefined ? undefined : readTextFile(target, 64 << 20)
      if (opened !== undefined && opened._tag !== "Text") broken.push(`${entry} in ${path}: ${opened._tag === "Missing" ? "no such file" : opened.reason}`)
      else listed.push(`${path} (${entry})`)
    }
  }
  const reads = read.length === 0 ? "opencode reads no config file here" : `opencode reads ${read.join(", ")}`
  const problems = [...broken, ...stale, ...invalid]
  const more = [...stale, ...invalid]
  if (broken.length > 0 || (stale.length > 0 && listed.length === 0)) return { id: "plugin", status: "fail", detail: `${reads}; the plugin entry does not load: ${problems.join("; ")}; run ${ocpool("init --global")} again` }
  if (listed.length > 0) return { id: "plugin", status: stale.length > 0 ? "warn" : "ok", detail: `listed in ${listed.join(", ")}; ${reads}${more.length > 0 ? `; ${more.join("; ")}` : ""}` }
  return { id: "plugin", status: "warn", detail: `no opencode config lists opencode-pool (run ${ocpool("init --global")}); ${reads}${invalid.length > 0 ? `; ${invalid.join("; ")}` : ""}` }
}

/** The check's line: the status view's (`plugin loaded in 1 opencode process: pid 1234 (v0.1.0, sqlite, since 3m)`), with a hint when none runs. */
export const pluginLoadedCheck = (engines: ReadonlyArray<EngineView>, now: number): Check => {
  const line = enginesLine(engines, now)
  const none = !engines.some((e) => e.live)
  return { id: "plugin-loaded", status: "ok", detail: none ? `${line} (an opencode that lists the plugin registers it a few seconds after it starts)` : line }
}
