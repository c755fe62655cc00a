/**
 * `ocpool doctor`'s `plugin-loaded` check (issue 33): whether a running opencode has the plugin loaded,
 * from the plugin engines on record in the shared state. Never a failure nor a warning: no opencode
 * running is a fact, not a fault.
 */
import { enginesLine, type EngineView } from "../core/state/engines.js"
import type { Check } from "./doctor.js"

/** The check's line: the status view's (`plugin loaded in 1 opencode process: pid 1234 (v0.1.0, sqlite, since 3m)`), with a hint when none runs. */
export const pluginLoadedCheck = (engines: ReadonlyArray<EngineView>, now: number): Check => {
  const line = enginesLine(engines, now)
  const none = !engines.some((e) => e.live)
  return { id: "plugin-loaded", status: "ok", detail: none ? `${line} (an opencode that lists the plugin registers it a few seconds after it starts)` : line }
}
