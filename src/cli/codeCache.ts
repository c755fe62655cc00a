/**
 * Loading a CommonJS bundle with a V8 code cache (docs/PERFORMANCE.md, "Cold start"): most of a cold
 * start is compiling the bundle, and the cache skips that. The build makes the cache (`writeCache`) and
 * names it by a fingerprint of the source it was made from; the entry is built with that name, so a
 * stale cache is never offered and nothing is hashed at start. A cache V8 refuses (another Node
 * version) is ignored and the bundle compiles as usual.
 */
import { readFileSync, writeFileSync } from "node:fs"
import Module, { createRequire } from "node:module"
import { dirname } from "node:path"
import { Script } from "node:vm"

/** FNV-1a over the source's UTF-16 units, 8 hex digits twice (two seeds): cheap, and no crypto to load at start. */
export const fingerprint = (source: string): string => {
  let a = 0x811c9dc5
  let b = 0x01000193 ^ source.length
  for (let i = 0; i < source.length; i++) {
    const c = source.charCodeAt(i)
    a = Math.imul(a ^ c, 0x01000193)
    b = Math.imul(b ^ c, 0x5bd1e995)
  }
  return (a >>> 0).toString(16).padStart(8, "0") + (b >>> 0).toString(16).padStart(8, "0")
}

/** The cache file of `file` whose source is `source`. */
export const cacheFile = (file: string, source: string): string => `${file}.${fingerprint(source)}.cache`

/** Evaluates the bundle `file` and returns its exports, with the code cache `cache` (a path) when given and present. */
export const loadCached = (file: string, cache: string | undefined): unknown => evaluate(file, cache).exports

/**
 * Build step: evaluates the bundle, lets `exercise` run what a start runs (so the functions it compiles
 * lazily are in the cache too), then writes the cache.
 */
export const writeCache = async (file: string, exercise: (exports: unknown) => Promise<void>): Promise<string> => {
  const { exports, script, source } = evaluate(file, undefined)
  await exercise(exports)
  const cache = cacheFile(file, source)
  writeFileSync(cache, script.createCachedData())
  return cache
}

const evaluate = (file: string, cache: string | undefined): { readonly exports: unknown; readonly script: Script; readonly source: string } => {
  const source = readFileSync(file, "utf8")
  let cachedData: Buffer | undefined
  if (cache !== undefined) {
    try {
      cachedData = readFileSync(cache)
    } catch {
      cachedData = undefined
    }
  }
  const script = new Script(Module.wrap(source), { filename: file, ...(cachedData === undefined ? {} : { cachedData }) })
  const module = { exports: {} as unknown }
  ;(script.runInThisContext() as (...a: ReadonlyArray<unknown>) => void)(module.exports, createRequire(file), module, file, dirname(file))
  return { exports: module.exports, script, source }
}
