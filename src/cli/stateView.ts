/** Reads the shared state directory for `ocpool status`, `ocpool quota` and `ocpool doctor`, through the same shared-state port the plugin uses. */
import { Clock, Effect, Layer } from "effect"
import { accessSync, constants, statSync } from "node:fs"
import type { CooldownTable } from "../core/pool/cooldown.js"
import type { QuotaRecord } from "../core/quota/record.js"
import type { GroupBudget } from "../core/limits/learned.js"
import type { CounterRow } from "../core/metrics/counters.js"
import type { ResolvedPool } from "../core/source.js"
import type { FleetFacts, ProcessSnapshot } from "../core/status.js"
import { resolvePool } from "../core/source.js"
import { gatherSources } from "../layers/pool/PoolConfigFile.js"
import type { FallbackRecord } from "../core/quota/fallbackRecord.js"
import { inspectStateDir, ownHostId, resolveStateDir, type StateDirChoice } from "../layers/state/StateDirFile.js"
import { ALL_RECORDS, problemText, SharedState, type Needs, type ReadProblem, type SharedSnapshot } from "../services/state/SharedState.js"
import type { PermitView } from "../core/permits/types.js"
import type { EngineView } from "../core/state/engines.js"
import { StateDir } from "../services/state/StateDir.js"
import { StateUnreadable } from "./errors.js"
import { cliBackend, cliStateLayer, fleetFacts, fleetOf, rawUrl, type CliBackend } from "./shared/backend.js"
import { cliPermitWarnings } from "./shared/budgets.js"

export interface StateSnapshot {
  readonly dir: string
  readonly exists: boolean
  readonly processes: ReadonlyArray<ProcessSnapshot>
  readonly cooldowns: CooldownTable
  /** The quota records that are not stale, sorted by model (issue 12). */
  readonly quota: ReadonlyArray<QuotaRecord>
  /** Root sessions running on a fallback model whose original still cools, sorted by session (US-50). */
  readonly fallbacks: ReadonlyArray<FallbackRecord>
  /** Permit entries of every budget, holders judged (issue 21). */
  readonly permits: ReadonlyArray<PermitView>
  /** The model groups' learned budgets (issue 35), sorted by group. */
  readonly learned: ReadonlyArray<GroupBudget>
  readonly now: number
  /** Why the directory was read but not cleaned (core/stateTrust.ts), why OCPOOL_STATE_URL was not used. */
  readonly warnings: ReadonlyArray<string>
  /** Fleet mode (issue 22): the fleet as the PostgreSQL backend shows it; absent with the file backend. */
  readonly fleet?: FleetFacts
  /** The plugin engines on record, judged live or gone (issue 33); absent when the read did not ask for them. */
  readonly engines?: ReadonlyArray<EngineView>
  /** Every host's counters (issue 36), sorted by host, name and labels; empty or absent when the read did not ask for them. */
  readonly counters?: ReadonlyArray<CounterRow>
}

/** `--state-dir`, then OCPOOL_STATE_DIR, then the default (which needs a home directory). */
export const stateDirFor = (flag: string | undefined): StateDirChoice =>
  flag !== undefined ? resolveStateDir(undefined, { ...process.env, OCPOOL_STATE_DIR: flag }) : resolveStateDir(undefined)

/** The state directory's path, or a typed failure when there is no home directory to find it under. */
export const stateDirPath = (flag: string | undefined): Effect.Effect<string, StateUnreadable> =>
  Effect.suspend(() => {
    const choice = stateDirFor(flag)
    return choice._tag === "Dir" ? Effect.succeed(choice.dir) : Effect.fail(new StateUnreadable({ dir: "$XDG_STATE_HOME/opencode-pool", reason: choice.reason }))
  })

/** The state directory a CLI command reads: its path, whether it exists, the StateDir service over it, the trust warning; and the backend. */
export interface OpenedState {
  readonly dir: string
  readonly exists: boolean
  readonly stateDir: Layer.Layer<StateDir>
  readonly warnings: ReadonlyArray<string>
  /** OCPOOL_STATE_URL's choice: PostgreSQL (the directory is its fallback's) or the files. */
  readonly backend: CliBackend
}

/**
 * Finds and checks the state directory (a missing one reads as empty; one that is not a readable
 * directory is StateUnreadable). Files in it may be deleted only when it is trusted (a real directory
 * of this user's, mode 700, holding only state files); any other directory is only read, with one
 * warning saying why.
 */
export const openState = (flag: string | undefined) =>
  Effect.gen(function* () {
    const dir = yield* stateDirPath(flag)
    let exists = true
    try {
      const st = statSync(dir)
      if (!st.isDirectory()) return yield* new StateUnreadable({ dir, reason: "not a directory" })
      accessSync(dir, constants.R_OK | constants.X_OK)
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code
      if (code === "ENOENT") exists = false
      else if (!(e instanceof StateUnreadable)) return yield* new StateUnreadable({ dir, reason: code === "EACCES" ? "permission denied" : String(code ?? e) })
    }
    const trust = exists ? inspectStateDir(dir) : undefined
    const warnings = trust !== undefined && !trust.trusted ? [`state dir ${dir} is not trusted (${trust.reason}): read only, nothing in it deleted`] : []
    // the host as the plugin names itself (OCPOOL_HOST_ID, else the hostname): its holders are judged as local
    const stateDir = Layer.succeed(StateDir, { dir: exists ? dir : undefined, trusted: trust?.trusted === true, pid: process.pid, host: ownHostId(), startTime: null })
    const backend = cliBackend()
    return { dir, exists, stateDir, warnings: [...warnings, ...backend.warnings], backend } satisfies OpenedState
  })

/**
 * The records `needs` asks for, as the port reads them without the lock (views never take it), at the
 * clock's `now`. Kinds that could not be read are in `problems`. With PostgreSQL, also what the port
 * says of the fleet (a server that does not answer: `Unreachable`, and the records are the state
 * directory's), every text in it with the URL's password scrubbed.
 */
export const readShared = (state: OpenedState, needs: Needs) =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    return yield* readThrough(state, needs, now).pipe(Effect.provide(portOf(state)), Effect.scoped)
  })

/** The port a CLI view reads `state` through (the live view keeps one open for its whole run). */
export const portOf = (state: OpenedState) => cliStateLayer(state.backend).pipe(Layer.provide(state.stateDir))

/** `readShared` on a port already in context. */
export const readThrough = (state: OpenedState, needs: Needs, now: number) =>
  Effect.gen(function* () {
    const fleetMode = state.backend.state.backend === "postgres"
    // the fleet first: a host whose lease ran out is shown once as expired, with the claims the read then removes
    const fleet = fleetMode ? yield* fleetOf(now) : undefined
    const snapshot: SharedSnapshot = yield* Effect.flatMap(SharedState, (s) => s.read(now, needs))
    const facts = fleet === undefined ? undefined : fleetFacts(fleet.fleet, fleet.stats.fallbacks ?? 0, rawUrl(state.backend))
    return { now, snapshot, ...(facts === undefined ? {} : { fleet: facts }) }
  })

/** Kinds a view shows as a warning when they cannot be read (the next permit step rewrites the permits; the engines are a listing; the counters are `ocpool metrics`'s, which judges them itself). */
const warnOnly = (kind: ReadProblem["kind"]): boolean => kind === "permits" || kind === "engines" || kind === "counters"

/**
 * What a read of every record comes to: the snapshot, or why a kind that matters could not be read
 * (an unreadable permits file or engines table is only a warning). `engines`: the read asked for them.
 */
export const stateOf = (opened: OpenedState, read: Effect.Effect.Success<ReturnType<typeof readShared>>, engines = false): StateSnapshot | StateUnreadable => {
  const { dir, exists, warnings } = opened
  const { fleet, now, snapshot } = read
  const problem = snapshot.problems.find((p) => !warnOnly(p.kind))
  if (problem !== undefined) return new StateUnreadable({ dir, reason: problem.reason })
  const readProblems = snapshot.problems.filter((p) => warnOnly(p.kind)).map(problemText)
  const { peers: processes, cooldowns, quota, fallbacks, permits, learned, counters } = snapshot
  return {
    dir,
    exists,
    processes,
    cooldowns,
    quota,
    fallbacks,
    permits,
    learned,
    counters,
    now,
    warnings: [...warnings, ...cliPermitWarnings(), ...readProblems],
    ...(fleet === undefined ? {} : { fleet }),
    ...(engines ? { engines: snapshot.engines } : {})
  }
}

/** What `status` and `doctor` read: every record kind, and the plugin engines on record (issue 33). */
export const VIEW_RECORDS: Needs = { ...ALL_RECORDS, engines: true }

/** Reads every claim, cooldown, quota, fallback and permit record and the engines on record (openState says which may be deleted); a kind that cannot be read is StateUnreadable. */
export const readState = (flag: string | undefined) =>
  Effect.gen(function* () {
    const opened = yield* openState(flag)
    const state = stateOf(opened, yield* readShared(opened, VIEW_RECORDS), true)
    return state instanceof StateUnreadable ? yield* state : state
  })

/** The CLI's pool and the paths it came from (a file named by `--pool`, the user config directory): what the live view watches. */
export const cliPoolSources = (poolFile: string | undefined): { readonly pool: ResolvedPool; readonly watched: ReadonlyArray<string> } => {
  const g = gatherSources({ models: undefined, modelsFile: undefined, maxSlots: 4, directory: process.cwd(), poolFile })
  const r = resolvePool(g.sources, 4)
  return { pool: { ...r, warnings: [...g.notes, ...r.warnings] }, watched: g.watched }
}

/** The CLI's pool: `--pool FILE`, the user config directory, the bundled preset, the built-in fallback (SPEC §9). */
export const cliPool = (poolFile: string | undefined): ResolvedPool => cliPoolSources(poolFile).pool
