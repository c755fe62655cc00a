/** Reads the shared state directory for `ocpool status` and `ocpool doctor`, through the same file layers the plugin uses. */
import { Effect, Layer } from "effect"
import { accessSync, constants, statSync } from "node:fs"
import { hostname } from "node:os"
import type { CooldownTable } from "../core/cooldown.js"
import type { ResolvedPool } from "../core/source.js"
import type { ProcessSnapshot } from "../core/status.js"
import { resolvePool } from "../core/source.js"
import { ClaimStoreFile } from "../layers/ClaimStoreFile.js"
import { CooldownStoreFile } from "../layers/CooldownStoreFile.js"
import { gatherSources } from "../layers/PoolConfigFile.js"
import { resolveStateDir } from "../layers/StateDirLive.js"
import { ClaimStore } from "../services/ClaimStore.js"
import { CooldownStore } from "../services/CooldownStore.js"
import { StateDir } from "../services/StateDir.js"
import { StateUnreadable } from "./errors.js"

export interface StateSnapshot {
  readonly dir: string
  readonly exists: boolean
  readonly processes: ReadonlyArray<ProcessSnapshot>
  readonly cooldowns: CooldownTable
  readonly now: number
}

/** `--state-dir`, then OCPOOL_STATE_DIR, then the default. */
export const stateDirFor = (flag: string | undefined): string => (flag !== undefined ? resolveStateDir(undefined, { ...process.env, OCPOOL_STATE_DIR: flag }) : resolveStateDir(undefined))

export const readState = (flag: string | undefined) =>
  Effect.gen(function* () {
    const dir = stateDirFor(flag)
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
    const layer = Layer.mergeAll(ClaimStoreFile, CooldownStoreFile).pipe(
      Layer.provide(Layer.succeed(StateDir, { dir: exists ? dir : undefined, pid: process.pid, host: hostname(), startTime: null }))
    )
    return yield* Effect.gen(function* () {
      const now = Date.now()
      const processes = yield* (yield* ClaimStore).readPeers(now)
      const cooldowns = yield* (yield* CooldownStore).readAll(now)
      return { dir, exists, processes, cooldowns, now } satisfies StateSnapshot
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
