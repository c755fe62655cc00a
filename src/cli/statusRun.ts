/** What `ocpool status` does once its flags are parsed (SPEC §9, §12.2); the fast path (statusMain.ts) runs it without @effect/cli. */
import { Console, Effect } from "effect"
import { renderStatus, statusView } from "../core/status.js"
import { POOL_FILE_MAX_BYTES } from "../core/limits.js"
import { printableJson } from "../core/printable.js"
import { readTextFile } from "../layers/fs/safeRead.js"
import { FileUnreadable } from "./errors.js"
import { cliPool, readState } from "./stateView.js"
import { budgetsJson } from "../core/permits/view.js"
import { cliBudgets } from "./shared/budgets.js"

export interface StatusFlags {
  readonly pool: string | undefined
  readonly json: boolean
  readonly stateDir: string | undefined
}

export const statusRun = (args: StatusFlags) =>
  Effect.gen(function* () {
    const poolFile = args.pool
    if (poolFile !== undefined) {
      // checked through safeRead first: a named pool file that cannot be read is exit 2, not a fall-through
      const read = readTextFile(poolFile, POOL_FILE_MAX_BYTES)
      if (read._tag !== "Text") return yield* new FileUnreadable({ path: poolFile, reason: read._tag === "Missing" ? "no such file or directory" : read.reason })
    }
    const state = yield* readState(args.stateDir)
    const pool = cliPool(poolFile)
    const permits = budgetsJson(cliBudgets(), state.permits)
    const view = statusView({
      origin: pool.origin,
      slots: pool.slots,
      processes: state.processes,
      cooldowns: state.cooldowns,
      quota: state.quota,
      fallbacks: state.fallbacks,
      permits,
      now: state.now,
      warnings: [...pool.warnings, ...state.warnings],
      // fleet mode (issue 22): the hosts sharing the PostgreSQL state, or the line saying it did not answer
      ...(state.fleet === undefined ? {} : { fleet: state.fleet })
    })
    yield* Console.log(args.json ? printableJson(JSON.stringify(view)) : renderStatus(view, { now: state.now, processes: state.processes }))
  })
