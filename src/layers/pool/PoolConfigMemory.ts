/** A fixed pool (tests). */
import { Effect, Layer } from "effect"
import type { ResolvedPool } from "../../core/source.js"
import { PoolConfig } from "../../services/pool/PoolConfig.js"
import { spanned } from "../hotPath.js"

export const PoolConfigMemory = (pool: ResolvedPool) => Layer.succeed(PoolConfig, { load: spanned(Effect.succeed(pool), "PoolConfig.load"), watched: [] })
