/**
 * The whole plugin in one call: the engine started at once, without the boot entry's deferral
 * (entry.ts is what opencode loads). `export default` only: opencode calls every export of a plugin
 * module. It never throws while booting, whatever `ctx` and `options` hold (they are read as untrusted
 * data: a bounded plain copy of the options, guarded reads of the context); `enabled: false` or
 * OCPOOL_DISABLE returns hooks that do nothing (no directory, no file, no timer, no log).
 */
import type { Plugin } from "@opencode-ai/plugin"
import { startFailed } from "./startFailed.js"
import { isDisabled } from "../core/boot/options.js"
import { configDir } from "../layers/pool/PoolConfigFile.js"
import { pluginOptions } from "../core/extract.js"
import { startEngine } from "./engine.js"

const opencodePool: Plugin = async (ctx, raw) => {
  try {
    const options = pluginOptions(raw)
    if (isDisabled(options, process.env)) return {}
    const { engine: _engine, notifications: _notifications, sensing: _sensing, ...hooks } = await startEngine(ctx, options, undefined, configDir())
    return hooks
  } catch (e) {
    return startFailed(e)
  }
}

export default opencodePool
