/**
 * The opencode plugin entry (bundled to dist/opencode-plugin.js). `export default` only: opencode calls
 * every export of a plugin module. It never throws while booting, whatever `ctx` and `options` hold
 * (they are read as untrusted data: a bounded plain copy of the options, guarded reads of the context);
 * `enabled: false` or OCPOOL_DISABLE returns hooks that do nothing (no directory, no file, no timer, no log).
 */
import type { Plugin } from "@opencode-ai/plugin"
import { isDisabled, parseSettings } from "../core/options.js"
import { configDir } from "../layers/pool/PoolConfigFile.js"
import { describe, field, pluginOptions, text, TEXT_MAX } from "../core/extract.js"
import { makeHooks } from "./hooks.js"
import { liveLayer } from "./live.js"

/**
 * opencode's SDK client behind guarded reads: `app.log` is looked up on each call and its outcome
 * reduced to `{ error }` (a throwing getter or a hostile answer becomes a failed send, which the log
 * turns into a stderr line); `session` is handed through (its calls already run inside `tryPromise`).
 */
const guardedClient = (client: unknown): unknown => {
  if ((typeof client !== "object" && typeof client !== "function") || client === null) return undefined
  return {
    app: {
      log: (options: unknown): Promise<{ readonly error: unknown }> =>
        new Promise<unknown>((resolve, reject) => {
          const app = field(client, "app")
          const log = field(app, "log")
          if (typeof log !== "function") return reject(new Error("client.app.log is missing"))
          resolve(log.call(app, options))
        }).then((r) => {
          try {
            return { error: typeof r === "object" && r !== null ? (r as { error?: unknown }).error : undefined }
          } catch (e) {
            return { error: e ?? "unreadable answer" }
          }
        })
    },
    get session() {
      return field(client, "session")
    }
  }
}

const opencodePool: Plugin = async (ctx, raw) => {
  try {
    const options = pluginOptions(raw)
    if (isDisabled(options, process.env)) return {}
    const { settings, warnings } = parseSettings(options, process.env)
    const directory = text(field(ctx, "directory"), TEXT_MAX) ?? process.cwd()
    const { engine: _engine, notifications: _notifications, ...hooks } = await makeHooks(liveLayer({ client: guardedClient(field(ctx, "client")), directory }, settings), {
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
