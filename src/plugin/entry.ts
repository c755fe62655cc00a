/**
 * The plugin bundle's entry (dist/opencode-plugin.js, the file users list): small and without Effect,
 * so that what opencode imports and awaits at every start stays small (boot.ts). The engine is the
 * second bundle beside it, dist/opencode-plugin-engine.js, loaded when first needed (the build maps
 * `./engine.js` to it). `export default` only: opencode calls every export of a plugin module.
 */
import type { Plugin } from "@opencode-ai/plugin"
import { startFailed } from "./startFailed.js"
import { bootHooks } from "./boot.js"

const opencodePool: Plugin = async (ctx, raw) => {
  try {
    return bootHooks(ctx, raw, () => import("./engine.js"))
  } catch (e) {
    return startFailed(e)
  }
}

export default opencodePool
