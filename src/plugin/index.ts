/**
 * The opencode plugin entry (bundled to dist/opencode-plugin.js). `export default` only: opencode calls
 * every export of a plugin module. It never throws while booting, whatever `ctx` and `options` hold
 * (they are read as untrusted data: a bounded plain copy of the options, guarded reads of the context);
 * `enabled: false` or OCPOOL_DISABLE returns hooks that do nothing (no directory, no file, no timer, no log).
 */
import type { Plugin } from "@opencode-ai/plugin"
import { isDisabled, parseSettings } from "../core/options.js"
import { configDir } from "../layers/PoolConfigFile.js"
import { describe, field, pluginOptions, text, TEXT_MAX } from "./extract.js"
import { makeHooks } from "./hooks.js"
import { liveLayer } from "./live.js"

const opencodePool: Plugin = async (ctx, raw) => {
  try {
    const options = pluginOptions(raw)
    if (isDisabled(options, process.env)) return {}
    const { settings, warnings } = parseSettings(options, process.env)
    const directory = text(field(ctx, "directory"), TEXT_MAX) ?? process.cwd()
    const { engine: _engine, ...hooks } = await makeHooks(liveLayer({ client: field(ctx, "client"), directory }, settings), {
      settings,
      warnings,
      configDir: configDir()
    })
    return hooks
  } catch (e) {
    try {
      process.stderr.write(`opencode-pool: could not start, continuing without it: ${describe(e)}\n`)
    } catch {
      // nowhere to say it
    }
    return {}
  }
}

export default opencodePool
