/** Reads the shared state directory for `ocpool status` and `ocpool doctor`, through the same file layers the plugin uses. */
import { Effect, Layer } from "effect"
import { accessSync, constants, statSync } from "node:fs"
import { hostname } from "node:os"
import type { CooldownTable } from "../core/cooldown.js"
import type { QuotaRecord } from "../core/quota/record.js"
import type { ResolvedPool } from "../core/source.js"
import type { ProcessSnapshot } from "../core/status.js"
import { resolvePool } from "../core/source.js"
import { ClaimStoreFile } from "../layers/state/ClaimStoreFile.js"
import { CooldownStoreFile } from "../layers/state/CooldownStoreFile.js"
import { gatherSources } from "../layers/pool/PoolConfigFile.js"
import { QuotaStoreFile } from "../layers/state/QuotaStoreFile.js"
import { FallbackStoreFile } from "../layers/state/FallbackStoreFile.js"
import { FallbackStore } from "../services/state/FallbackStore.js"
import type { FallbackRecord } from "../core/quota/fallbackRecord.js"
import { inspectStateDir, resolveStateDir, type StateDirChoice } from "../layers/state/StateDirFile.js"
import { ClaimStore } from "../services/state/ClaimStore.js"
import { CooldownStore } from "../services/state/CooldownStore.js"
import { QuotaStore } from "../services/state/QuotaStore.js"
import { StateDir } from "../services/state/StateDir.js"
import { StateUnreadable } from "./errors.js"

export interface StateSnapshot {
  readonly dir: string
  readonly exists: boolean
  readonly processes: ReadonlyArray<ProcessSnapshot>
  readonly cooldowns: CooldownTable
  /** The quota records that are not stale, sorted by model (issue 12). */
  readonly quota: ReadonlyArray<QuotaRecord>
  /** Root sessions running on a fallback model whose original still cools, sorted by session (US-50). */
  readonly fallbacks: ReadonlyArray<FallbackRecord>
  readonly now: number
  /** At most one: why the directory was read but not cleaned (core/stateTrust.ts). */
  readonly warnings: ReadonlyArray<string>
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

/** The state directory a CLI command reads: its path, whether it exists, the StateDir service over it, the trust warning. */
export interface OpenedState {
  readonly dir: string
  readonly exists: boolean
  readonly stateDir: Layer.Layer<StateDir>
  readonly warnings: ReadonlyArray<string>
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
    const stateDir = Layer.succeed(StateDir, { dir: exists ? dir : undefined, trusted: trust?.trusted === true, pid: process.pid, host: hostname(), startTime: null })
    return { dir, exists, stateDir, warnings } satisfies OpenedState
  })

/** Reads every claim, cooldown and quota file (openState says which may be deleted). */
export const readState = (flag: string | undefined) =>
  Effect.gen(function* () {
    const { dir, exists, stateDir, warnings } = yield* openState(flag)
    const layer = Layer.mergeAll(ClaimStoreFile, CooldownStoreFile, QuotaStoreFile, FallbackStoreFile).pipe(Layer.provide(stateDir))
    return yield* Effect.gen(function* () {
      const now = Date.now()
      const processes = yield* (yield* ClaimStore).readPeers(now)
      const cooldowns = yield* (yield* CooldownStore).readAll(now)
      const quota = yield* (yield* QuotaStore).readAll(now)
      const fallbacks = yield* (yield* FallbackStore).readAll(now)
      return { dir, exists, processes, cooldowns, quota, fallbacks, now, warnings } satisfies StateSnapshot
    }).pipe(
      Effect.provide(layer),
      Effect.mapError((e) => new StateUnreadable({ dir, reason: e.reason }))
    )
  })

/** The CLI's pool: `--pool FILE`, the user config directory, the bundled preset, the built-in fallback (SPEC §9). */
export const cliPool = (poolFile: string | undefined): ResolvedPool => {
  const g = gatherSources({ models: undefined, modelsFile: undefined, maxSlots: 4, directory: process.cwd(), poolFile })
  const r = resolvePool(g.sources, 4)
  return { ...r, warnings: [...g.notes, ...r.warnings] }
}
