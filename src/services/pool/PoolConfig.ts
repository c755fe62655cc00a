/** The active slot table and where it came from (SPEC §3.1 source chain). */
import { Context, type Effect } from "effect"
import type { ResolvedPool } from "../../core/source.js"

export interface PoolConfigService {
  /** Resolves the source chain again from the files as they are now. Never fails: the built-in fallback always works. */
  readonly load: Effect.Effect<ResolvedPool>
  /** Files and directories whose changes should trigger a reload. */
  readonly watched: ReadonlyArray<string>
}

export class PoolConfig extends Context.Tag("opencode-pool/PoolConfig")<PoolConfig, PoolConfigService>() {}
