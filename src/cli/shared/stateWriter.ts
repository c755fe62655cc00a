/**
 * The shared state a CLI command writes through (`ocpool run`, `permits`, `mcp`, `cool`; issues 21, 32):
 * the backend OCPOOL_STATE_URL chooses (PostgreSQL, the state directory's database as its fallback),
 * else `state.db` in the state directory (`--state-dir`, then OCPOOL_STATE_DIR, then the default),
 * created when missing (mode 700), with this process as the holder (its start token read from /proc).
 * A directory that cannot be used is a typed failure (exit 1): records kept in one process's memory
 * would reach nobody. `waitMs`: how long a decision waits for the database (a permit step: always as
 * long as it takes).
 */
import { Effect, Layer } from "effect"
import { stderrLine } from "../../layers/process/LoggerStderr.js"
import { AppLog } from "../../services/opencode/AppLog.js"
import { backendOptions, sharedStateLayer } from "../../layers/state/sharedStateLayer.js"
import { inspectStateDir, ownHostId, prepareDir } from "../../layers/state/StateDirFile.js"
import { ownStartToken } from "../../layers/process/runner.js"
import type { SharedState } from "../../services/state/SharedState.js"
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
export const warnOnStderr = (message: string) => onStderr("warn", message)
export const AppLogStderr = Layer.succeed(AppLog, { log: onStderr })

/** The state directory a writer uses (made when missing), as the `StateDir` service, or why it cannot be used. */
export const writerStateDir = (flag: string | undefined): Effect.Effect<Layer.Layer<StateDir>, StateUnreadable> =>
  Effect.suspend(() => {
    const choice = stateDirFor(flag)
    if (choice._tag === "NoHome") return Effect.fail(new StateUnreadable({ dir: "$XDG_STATE_HOME/opencode-pool", reason: choice.reason }))
    // made when missing (0700); the reason alone when it cannot be (the error names the directory)
    const prepared = prepareDir(choice.dir)
    if (prepared.unusable !== undefined) return Effect.fail(new StateUnreadable({ dir: choice.dir, reason: prepared.unusable }))
    const trusted = inspectStateDir(choice.dir).trusted
    return Effect.succeed(Layer.succeed(StateDir, { dir: choice.dir, trusted, pid: process.pid, host: ownHostId(), startTime: ownStartToken() }))
  })

/** The port a CLI command writes through, over `flag`'s state directory (with it, for layers that need the `StateDir` too). */
export const cliWriterState = (flag: string | undefined, waitMs: number): Layer.Layer<SharedState | StateDir, StateUnreadable> =>
  Layer.unwrapEffect(
    Effect.gen(function* () {
      const dir = yield* writerStateDir(flag)
      const backend = cliBackend()
      // an OCPOOL_STATE_URL that cannot be used: said once on stderr, the state directory used
      for (const w of backend.warnings) yield* warnOnStderr(w)
      return sharedStateLayer(backendOptions(backend.state, waitMs)).pipe(Layer.provide(AppLogStderr), Layer.provideMerge(dir))
    })
  )

/** Runs `f` over the port a change by hand writes through (`ocpool cool clear`, `ocpool quota forget`), at the wall clock's `now`. */
export const changeState = <A, E>(stateDir: string | undefined, waitMs: number, f: (now: number) => Effect.Effect<A, E, SharedState>) =>
  Effect.flatMap(Effect.sync(() => Date.now()), f).pipe(Effect.provide(cliWriterState(stateDir, waitMs)), Effect.scoped)
