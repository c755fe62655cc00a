/**
 * The plugin's engine: settings, the live layers and the managed runtime with every layer (the reaper,
 * the pool-file watcher, the claim file, the notifier), and the hooks over it (hooks.ts). Bundled apart
 * (dist/opencode-plugin-engine.js): the boot entry (boot.ts) loads it after opencode's first config hook
 * or at the first hook that needs it, so that Effect is not loaded while opencode starts.
 */
import { parseSettings } from "../core/options.js"
import { field, text, TEXT_MAX } from "../core/extract.js"
import { makeHooks, type EngineHooks } from "./hooks.js"
import type { Handoff } from "./handoff.js"
import { liveLayer } from "./live.js"
import { withReadableFiles } from "../layers/state/sharedStateLayer.js"

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

/**
 * Starts the engine for the plugin options `options` (a bounded plain copy, already checked not to turn
 * the plugin off). Throws what booting throws: the caller reports it and goes on without the plugin.
 */
export const startEngine = async (ctx: unknown, options: Record<string, unknown> | undefined, handoff?: Handoff, configDir?: string): Promise<EngineHooks> => {
  const parsed = parseSettings(options, process.env)
  // a fleet URL naming a file that cannot be read (sslrootcert=…) turns fleet mode off with a warning
  const usable = withReadableFiles({ state: parsed.settings.state, warnings: parsed.warnings })
  const settings = { ...parsed.settings, state: usable.state }
  const warnings = usable.warnings
  const directory = text(field(ctx, "directory"), TEXT_MAX) ?? process.cwd()
  return makeHooks(liveLayer({ client: guardedClient(field(ctx, "client")), directory }, settings), { settings, warnings, configDir, handoff, directory })
}
