/**
 * What a plugin entry does when it cannot start: one line on stderr, and no hooks (opencode goes on
 * without the plugin). Without Effect: the boot entry imports it (entry.ts).
 */
import type { Hooks } from "@opencode-ai/plugin"
import { describe } from "../core/extract.js"

export const startFailed = (e: unknown): Hooks => {
  try {
    process.stderr.write(`opencode-pool: could not start, continuing without it: ${describe(e)}\n`)
  } catch {
    // nowhere to say it
  }
  return {}
}
