/**
 * The permits port as `ocpool run`, `ocpool permits` and `ocpool mcp` use it (issue 21): the shared
 * state a CLI command writes through (stateWriter.ts), with the budgets from the environment: `heavy`
 * (capacity `auto`, or OCPOOL_PERMITS). With OCPOOL_TRACE set, the permit lines are recorded like the
 * plugin's (`%p` → this process's pid).
 */
import { Effect, Layer, Option } from "effect"
import { DEFAULTS } from "../../core/options.js"
import { parsePermitSettings } from "../../core/permits/settings.js"
import { permitsLayer } from "../../layers/permits/permitsLayer.js"
import { TraceRecorderFile } from "../../layers/pool/TraceRecorderFile.js"
import type { MachineFacts } from "../../services/permits/MachineFacts.js"
import type { Permits } from "../../services/permits/Permits.js"
import type { StateUnreadable } from "../errors.js"
import { AppLogStderr, cliWriterState, warnOnStderr } from "./stateWriter.js"

export const permitsCliLayer = (stateDir: Option.Option<string>): Layer.Layer<Permits | MachineFacts, StateUnreadable> => {
  const { permits, warnings } = parsePermitSettings(undefined, process.env)
  // OCPOOL_TRACE (`%p` → pid): the permit lines and decisions of this process, as the plugin records them
  const trace = process.env.OCPOOL_TRACE
  const recorder = TraceRecorderFile(trace === undefined || trace === "" ? undefined : trace).pipe(Layer.provide(AppLogStderr))
  // an invalid OCPOOL_PERMITS is ignored, with one line on stderr naming it (never on stdout: `mcp` speaks there)
  const warned = Layer.effectDiscard(Effect.forEach(warnings, warnOnStderr, { discard: true }))
  return permitsLayer(permits).pipe(Layer.provide(cliWriterState(Option.getOrUndefined(stateDir), DEFAULTS.lockWaitMs)), Layer.provide(recorder), Layer.provideMerge(warned))
}
