/**
 * The built-in fallback pool (SPEC §3.1 source 5): the bundled preset compiled in, so routing always
 * works even when no file can be read. `test/core/preset.test.ts` keeps it equal to presets/free-tier.json.
 */
import type { PoolEntry } from "./pool/pool.js"

export const BUILT_IN_SLOTS: ReadonlyArray<PoolEntry> = [
  { model: "opencode/big-pickle", weight: 2 },
  { model: "opencode/grok-code", weight: 1 },
  { model: "openrouter/qwen/qwen3.8-27b:free", weight: 1 },
  { model: "openrouter/poolside/laguna-s-2.1:free", weight: 1 }
]
