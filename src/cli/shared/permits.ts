/**
 * The permits port as `ocpool run`, `ocpool permits` and `ocpool mcp` use it (issue 21): the backend
 * OCPOOL_STATE_URL chooses (PostgreSQL: fleet-wide permits, issue 22; shared/backend.ts), else the file
 * backend in the state directory (`--state-dir`, then OCPOOL_STATE_DIR, then the default), created when
 * missing (mode 700), with this process as the holder (its start token read from /proc). Budgets come
 * from the environment: `heavy` (capacity `auto`, or OCPOOL_PERMITS). A directory that cannot be used
 * is a typed failure (exit 1): permits kept in one process's memory would not make anyone take turns.
 * With OCPOOL_TRACE set, the permit lines are recorded like the plugin's (`%p` → this process's pid).
 */
import { Effect, Layer, Option } from "effect"
import { stderrLine } from "../../layers/process/LoggerStderr.js"
import { AppLog } from "../../services/opencode/AppLog.js"
import { DEFAULTS } from "../../core/options.js"
import { parsePermitSettings } from "../../core/permits/settings.js"
import { permitsLayer } from "../../layers/permits/permitsLayer.js"
import { TraceRecorderFile } from "../../layers/pool/TraceRecorderFile.js"
import { backendOptions, sharedStateLayer } from "../../layers/state/sharedStateLayer.js"
import { openStateDir } from "../../layers/state/StateDirFile.js"
import { ownStartToken } from "../../layers/process/groupRun.js"
import { ownHostId } from "../../layers/state/StateDirFile.js"
import type { MachineFacts } from "../../services/permits/MachineFacts.js"
import type { Permits } from "../../services/permits/Permits.js"
import { StateDir } from "../../services/state/StateDir.js"
import { StateUnreadable } from "../errors.js"
import { stateDirFor } from "../stateView.js"
import { cliBackend } from "./backend.js"

/**
 * The CLI's AppLog for the layers that log through one (the trace recorder): a line on stderr in the
 * CLI's format. Not through `Effect.log*`: those layers install a logger that hands every `Effect.log*`
 * line to this AppLog, so it must end the chain.
 */
const onStderr = (level: "debug" | "info" | "warn" | "error", message: string) =>
  Effect.sync(() => {
    try {
      process.stderr.write(stderrLine(level, message))
    } catch {
      // stderr is gone: nowhere to say it
    }
  })
const warnOnStderr = (message: string) => onStderr("warn", message)
const AppLogStderr = Layer.succeed(AppLog, { log: onStderr })

export const permitsCliLayer = (stateDir: Option.Option<string>): Layer.Layer<Permits | MachineFacts, StateUnreadable> =>
  Layer.unwrapEffect(
    Effect.gen(function* () {
      const choice = stateDirFor(Option.getOrUndefined(stateDir))
      const opened = openStateDir(choice)
      if (opened.dir === undefined) {
        return yield* new StateUnreadable({ dir: choice._tag === "Dir" ? choice.dir : "$XDG_STATE_HOME/opencode-pool", reason: (opened.warning ?? "unusable").replace(/; routing on this process's claims only, state kept in memory$/, "") })
      }
      const dir = Layer.succeed(StateDir, { dir: opened.dir, trusted: opened.trusted, pid: process.pid, host: ownHostId(), startTime: ownStartToken() })
      const { permits } = parsePermitSettings(undefined, process.env)
      const backend = cliBackend()
      // an OCPOOL_STATE_URL that cannot be used: said once on stderr, the state directory used
      for (const w of backend.warnings) yield* warnOnStderr(w)
      // OCPOOL_TRACE (`%p` → pid): the permit lines and decisions of this process, as the plugin records them
      const trace = process.env.OCPOOL_TRACE
      const recorder = TraceRecorderFile(trace === undefined || trace === "" ? undefined : trace).pipe(Layer.provide(AppLogStderr))
      return permitsLayer(permits).pipe(
        // OCPOOL_STATE_URL: the fleet's permits (issue 22), the state directory being the fallback's
        Layer.provide(sharedStateLayer(backendOptions(backend.state, DEFAULTS.lockWaitMs)).pipe(Layer.provide(AppLogStderr))),
        Layer.provide(dir),
        Layer.provide(recorder)
      )
    })
  )
