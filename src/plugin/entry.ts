/**
 * The plugin bundle's entry (dist/opencode-plugin.js). Importing it only defines `default`: the plugin
 * itself (Effect, the engine, the layers) is evaluated when opencode first calls it, so the import at
 * every opencode start stays cheap (docs/PERFORMANCE.md). The bundle stays one file: the dynamic import
 * is inlined by the bundler as a deferred module initialisation, not a separate chunk.
 */
import type { Plugin } from "@opencode-ai/plugin"

const opencodePool: Plugin = async (ctx, options) => {
  let plugin: Plugin
  try {
    plugin = (await import("./index.js")).default
  } catch (e) {
    try {
      process.stderr.write(`opencode-pool: could not start, continuing without it: ${e instanceof Error ? e.message : String(e)}\n`)
    } catch {
      // nowhere to say it
    }
    return {}
  }
  return plugin(ctx, options)
}

export default opencodePool
