/** What `ocpool status` does once its flags are parsed (SPEC §9, §12.2); the fast path (statusMain.ts) runs it without @effect/cli. */
import { Console, Effect } from "effect"
import { renderStatus, statusView, type StatusView } from "../core/status.js"
import type { ResolvedPool } from "../core/source.js"
import { POOL_FILE_MAX_BYTES } from "../core/readLimits.js"
import { printableJson } from "../core/printable.js"
import { readTextFile } from "../layers/fs/safeRead.js"
import { FileUnreadable } from "./errors.js"
import { cliPool, readState, type StateSnapshot } from "./stateView.js"
import { budgetsJson, type BudgetInfo } from "../core/permits/view.js"
import { MachineFactsProc } from "../layers/permits/MachineFactsProc.js"
import { cliBudgets } from "./shared/budgets.js"

export interface StatusFlags {
  readonly pool: string | undefined
  readonly json: boolean
  readonly stateDir: string | undefined
}

/** A named pool file that cannot be read is exit 2, not a fall-through to the default pool (checked through safeRead first). */
export const checkPoolFile = (poolFile: string | undefined) =>
  Effect.suspend(() => {
    if (poolFile === undefined) return Effect.void
    const read = readTextFile(poolFile, POOL_FILE_MAX_BYTES)
    return read._tag === "Text" ? Effect.void : Effect.fail(new FileUnreadable({ path: poolFile, reason: read._tag === "Missing" ? "no such file or directory" : read.reason }))
  })

/** The budgets a CLI view shows, `auto` resolved from this machine's facts (one read of them). */
export const viewBudgets: Effect.Effect<ReadonlyArray<BudgetInfo>> = Effect.provide(Effect.suspend(() => cliBudgets()), MachineFactsProc())

/** The §9 view of one read of the state, over `pool`, with the budgets this process knows. */
export const viewOfState = (state: StateSnapshot, pool: ResolvedPool, budgets: ReadonlyArray<BudgetInfo>): StatusView =>
  statusView({
    origin: pool.origin,
    slots: pool.slots,
    processes: state.processes,
    cooldowns: state.cooldowns,
    quota: state.quota,
    learned: state.learned,
    fallbacks: state.fallbacks,
    permits: budgetsJson(budgets, state.permits),
    now: state.now,
    warnings: [...pool.warnings, ...state.warnings],
    // fleet mode (issue 22): the hosts sharing the PostgreSQL state, or the line saying it did not answer
    ...(state.fleet === undefined ? {} : { fleet: state.fleet }),
    // the plugin engines on record (issue 33), when the read asked for them (`status`, not the live view)
    ...(state.engines === undefined ? {} : { engines: state.engines })
  })

export const statusRun = (args: StatusFlags) =>
  Effect.gen(function* () {
    yield* checkPoolFile(args.pool)
    const state = yield* readState(args.stateDir)
    const view = viewOfState(state, cliPool(args.pool), yield* viewBudgets)
    yield* Console.log(args.json ? printableJson(JSON.stringify(view)) : renderStatus(view, { now: state.now, processes: state.processes }))
  })
