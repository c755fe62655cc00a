/**
 * The opencode plugin entry (bundled to dist/opencode-plugin.js). `export default` only: opencode calls
 * every export of a plugin module. It never throws while booting; `enabled: false` or OCPOOL_DISABLE
 * returns hooks that do nothing (no directory, no file, no timer, no log).
 */
import type { Plugin } from "@opencode-ai/plugin"
import { isDisabled, parseSettings } from "../core/options.js"
import { configDir } from "../layers/PoolConfigFile.js"
import { makeHooks } from "./hooks.js"
import { liveLayer } from "./live.js"

const opencodePool: Plugin = async (ctx, options) => {
  if (isDisabled(options, process.env)) return {}
  try {
    const { settings, warnings } = parseSettings(options, process.env)
    const { engine: _engine, ...hooks } = await makeHooks(liveLayer({ client: ctx.client, directory: ctx.directory }, settings), {
      settings,
      warnings,
      configDir: configDir()
    })
    return hooks
  } catch (e) {
    process.stderr.write(`opencode-pool: could not start, continuing without it: ${String(e)}\n`)
    return {}
  }
}

export default opencodePool
