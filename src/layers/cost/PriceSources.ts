/**
 * The price sources of `ocpool cost` (US-3), first that prices a model wins: the catalog file
 * `OPENCODE_MODELS_PATH` names, opencode's cached catalog `$XDG_CACHE_HOME/opencode/models.json`, and
 * the shipped snapshot `presets/prices.json`. A source that is named or present but cannot be used is
 * one warning and is skipped; an absent cache is silent.
 */
import { join } from "node:path"
import { parseCatalog, parsePriceSnapshot, type PriceTable } from "../../core/prices.js"
import { printable } from "../../core/printable.js"
import { bundledFile } from "../pool/PoolConfigFile.js"
import { readTextFile } from "../fs/safeRead.js"
import { xdgDir } from "../fs/xdg.js"

/** models.dev's whole catalog is a few MB; a file far bigger is not a catalog. */
export const CATALOG_MAX_BYTES = 64 << 20

export interface PriceSource {
  /** `OPENCODE_MODELS_PATH`, `opencode cache` or `presets/prices.json`. */
  readonly name: string
  readonly path: string
  readonly table: PriceTable
}

export interface PriceSources {
  readonly sources: ReadonlyArray<PriceSource>
  readonly warnings: ReadonlyArray<string>
}

type Read = { readonly _tag: "Table"; readonly table: PriceTable } | { readonly _tag: "Missing" } | { readonly _tag: "Unusable"; readonly reason: string }

/** A price file parsed by `parse`: a table, missing, or unusable for a one-line reason. */
export const readPriceFile = (path: string, parse: (json: unknown) => PriceTable | undefined): Read => {
  const read = readTextFile(path, CATALOG_MAX_BYTES)
  if (read._tag === "Missing") return read
  if (read._tag === "Refused") return { _tag: "Unusable", reason: read.reason }
  let json: unknown
  try {
    json = JSON.parse(read.text)
  } catch (e) {
    return { _tag: "Unusable", reason: `not JSON (${(e as Error).message.split("\n")[0]})` }
  }
  const table = parse(json)
  return table === undefined ? { _tag: "Unusable", reason: "not a price catalog" } : { _tag: "Table", table }
}

export interface PriceSourcePaths {
  /** `OPENCODE_MODELS_PATH`: a missing file is a warning, it was asked for. */
  readonly named?: string | undefined
  /** opencode's cached catalog: a missing file is silent. */
  readonly cache?: string | undefined
  /** The shipped snapshot. */
  readonly shipped?: string | undefined
}

/** The paths from the environment and the installation. */
export const priceSourcePaths = (env: NodeJS.ProcessEnv = process.env): PriceSourcePaths => {
  const cacheHome = xdgDir("XDG_CACHE_HOME", env)
  return {
    named: env.OPENCODE_MODELS_PATH === "" ? undefined : env.OPENCODE_MODELS_PATH,
    cache: cacheHome === undefined ? undefined : join(cacheHome, "opencode", "models.json"),
    shipped: bundledFile("prices.json")
  }
}

export const loadPriceSources = (paths: PriceSourcePaths): PriceSources => {
  const sources: Array<PriceSource> = []
  const warnings: Array<string> = []
  const add = (label: string, path: string | undefined, parse: (json: unknown) => PriceTable | undefined, missingIsSilent: boolean) => {
    if (path === undefined) return
    const read = readPriceFile(path, parse)
    if (read._tag === "Table") sources.push({ name: label, path, table: read.table })
    else if (read._tag === "Unusable") warnings.push(`price source ${label} ${printable(path)} skipped: ${printable(read.reason)}`)
    else if (!missingIsSilent) warnings.push(`price source ${label} ${printable(path)} skipped: no such file`)
  }
  add("OPENCODE_MODELS_PATH", paths.named, parseCatalog, false)
  add("opencode cache", paths.cache, parseCatalog, true)
  add("presets/prices.json", paths.shipped, parsePriceSnapshot, false)
  return { sources, warnings }
}
