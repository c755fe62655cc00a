/**
 * `ocpool doctor`'s `models` check (issue 33, item 12): the facts the pure check
 * (`core/setup/modelCheck.ts`) judges the pool's slots by, read as opencode reads them: its model
 * catalog (`OPENCODE_MODELS_PATH`, else `$XDG_CACHE_HOME/opencode/models.json`), the `provider` blocks
 * of its config files, the provider ids of `$XDG_DATA_HOME/opencode/auth.json`, and the names of the
 * env vars that are set. Only ids and names leave this module; no credential value is kept or shown.
 */
import { join } from "node:path"
import { authProvidersOf, checkSlotModels, configProvidersOf, mergeConfigProviders, parseModelCatalog, type CatalogRead, type ConfigProvider, type ModelCheckFacts } from "../../core/setup/modelCheck.js"
import type { Slot } from "../../core/pool/pool.js"
import { CATALOG_MAX_BYTES } from "../../layers/cost/PriceSources.js"
import { readTextFile } from "../../layers/fs/safeRead.js"
import { noHomeReason, xdgDir } from "../../layers/fs/xdg.js"
import type { Check } from "./check.js"

/** The catalog server opencode caches as `models.json` (another one's cache has a name of its own). */
const DEFAULT_MODELS_URL = "https://models.opencode.ai"

/** Largest opencode config or auth.json read. */
const SMALL_MAX_BYTES = 1 << 20

/** The JSON in a file, `Missing`, or one line saying why it cannot be used. */
const readJson = (path: string, maxBytes: number): { readonly _tag: "Json"; readonly json: unknown } | { readonly _tag: "Missing" } | { readonly _tag: "Unusable"; readonly reason: string } => {
  const file = readTextFile(path, maxBytes)
  if (file._tag === "Missing") return file
  if (file._tag === "Refused") return { _tag: "Unusable", reason: file.reason }
  try {
    return { _tag: "Json", json: JSON.parse(file.text) }
  } catch (e) {
    return { _tag: "Unusable", reason: `not JSON (${(e as Error).message.split("\n")[0]})` }
  }
}

/** opencode's model catalog: the file `OPENCODE_MODELS_PATH` names (opencode then reads no other), else its cache. */
export const readCatalog = (env: NodeJS.ProcessEnv): CatalogRead => {
  const named = env.OPENCODE_MODELS_PATH !== undefined && env.OPENCODE_MODELS_PATH !== "" ? env.OPENCODE_MODELS_PATH : undefined
  const cacheHome = xdgDir("XDG_CACHE_HOME", env)
  if (named === undefined && cacheHome === undefined) return { _tag: "Unavailable", reason: `opencode's model catalog not found: ${noHomeReason("XDG_CACHE_HOME")}` }
  const path = named ?? join(cacheHome!, "opencode", "models.json")
  const read = readJson(path, CATALOG_MAX_BYTES)
  if (read._tag === "Missing") {
    // another OPENCODE_MODELS_URL is cached under a name of its own, which only opencode computes
    const url = env.OPENCODE_MODELS_URL !== undefined && env.OPENCODE_MODELS_URL !== "" && env.OPENCODE_MODELS_URL !== DEFAULT_MODELS_URL && named === undefined
    const why = url ? "OPENCODE_MODELS_URL is set: opencode caches that catalog under another name; point OPENCODE_MODELS_PATH at it" : "opencode writes it when it fetches its model list; run opencode once while online"
    return { _tag: "Unavailable", reason: `no model catalog at ${path} (${why})` }
  }
  if (read._tag === "Unusable") return { _tag: "Unavailable", reason: `model catalog ${path} unreadable: ${read.reason}` }
  const catalog = parseModelCatalog(read.json)
  return catalog === undefined ? { _tag: "Unavailable", reason: `model catalog ${path} unreadable: not a model catalog` } : { _tag: "Catalog", catalog, path }
}

/** What the check judges by, from the files and the environment. */
export const readModelFacts = (configPaths: ReadonlyArray<string>, env: NodeJS.ProcessEnv = process.env): ModelCheckFacts => {
  const configs: Array<ReadonlyMap<string, ConfigProvider>> = []
  for (const path of configPaths) {
    const file = readTextFile(path, SMALL_MAX_BYTES)
    // an unreadable or invalid config is the plugin check's to name
    const providers = file._tag === "Text" ? configProvidersOf(file.text) : undefined
    if (providers !== undefined) configs.push(providers)
  }
  const dataHome = xdgDir("XDG_DATA_HOME", env)
  const auth = dataHome === undefined ? ({ _tag: "Missing" } as const) : readJson(join(dataHome, "opencode", "auth.json"), SMALL_MAX_BYTES)
  return {
    catalog: readCatalog(env),
    configProviders: mergeConfigProviders(configs),
    authProviders: auth._tag === "Json" ? authProvidersOf(auth.json) : new Set(),
    authProblem: auth._tag === "Unusable" ? auth.reason : undefined,
    setEnv: new Set(Object.keys(env).filter((k) => env[k] !== undefined && env[k] !== ""))
  }
}

/** The `models` check: one line per problem of the slots, or one `ok`. */
export const modelsCheck = (slots: ReadonlyArray<Slot>, configPaths: ReadonlyArray<string>, env: NodeJS.ProcessEnv = process.env): ReadonlyArray<Check> =>
  checkSlotModels(slots, readModelFacts(configPaths, env)).map((f) => ({ id: "models", status: f.status, detail: f.detail }))
