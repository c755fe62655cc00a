/**
 * What the boot entry hands the engine when it loads it (src/plugin/boot.ts → engine.ts → hooks.ts):
 * the config object its first config hook injected, and what that hook has still to say; and the few
 * words both say the same way. No Effect: the boot entry loads it.
 */
import type { JsonRecord } from "../core/json.js"
import type { LogLevel } from "../core/options.js"
import type { FailureReport, ResponseReport } from "./quotaFetch.js"

export interface BootLine {
  readonly level: LogLevel
  readonly message: string
}

export interface Handoff {
  /** opencode's config object, injected and with the quota wrappers on: the engine binds it (and keeps it for reloads). */
  readonly config: JsonRecord
  /** Injection warnings the engine's binding will not repeat, logged right before it. */
  readonly once: ReadonlyArray<string>
  /** Lines of the hook's quota sensing, logged after the binding. */
  readonly lines: ReadonlyArray<BootLine>
  /** Providers already told to keep their own fetch (told once per process). */
  readonly ownFetch: ReadonlyArray<string>
  /** The wrappers the boot installed: a later config hook replaces them instead of taking them for a provider's own. */
  readonly wrappers: WeakSet<object>
}

/** Where the boot's quota wrappers send what they sense, once the engine runs. */
export interface Sensing {
  readonly report: (r: ResponseReport) => void
  readonly fail: (f: FailureReport) => void
}

/** The line for a provider whose own `fetch` (a sign-in plugin's or a config's) keeps the quota wrapper off. */
export const ownFetchLine = (provider: string): string =>
  `provider ${provider} has a fetch of its own (a sign-in plugin's or a config's); its rate-limit headers are not read`

export const POOL_STATUS_DESCRIPTION = "Show opencode-pool's live state: slots with load and cooldowns, the next pick, claims per process, the reaper."
