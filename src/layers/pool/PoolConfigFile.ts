/** The pool source chain (SPEC §3.1) as the `PoolConfig` service, over the files `PoolSourceFiles.ts` reads. */
import { Effect, Layer } from "effect"
import { PoolConfig } from "../../services/pool/PoolConfig.js"
import { gatherSources, loadPool, type PoolSourceOptions } from "./PoolSourceFiles.js"
import { spanned } from "../hotPath.js"

export { bundledFile, bundledPreset, configDir, gatherSources, loadPool, type PoolSourceOptions } from "./PoolSourceFiles.js"

export const PoolConfigFile = (o: PoolSourceOptions) =>
  Layer.sync(PoolConfig, () => ({
    load: spanned(Effect.sync(() => loadPool(o)), "PoolConfig.load"),
    watched: gatherSources(o).watched
  }))
