/**
 * Resolves and prepares the state directory (SPEC §2.1): `OCPOOL_STATE_DIR` > option `stateDir` >
 * `$XDG_STATE_HOME/opencode-pool`. Created 0700; a wider mode is used as it is, with one warning; a
 * directory that cannot be created or written leaves the plugin working in memory, with one warning.
 */
import { Effect, Layer } from "effect"
import { accessSync, constants, mkdirSync, statSync } from "node:fs"
import { hostname, homedir } from "node:os"
import { join, resolve } from "node:path"
import { AppLog } from "../services/AppLog.js"
import { StateDir } from "../services/StateDir.js"
import { startTimeOf } from "./proc.js"
import { xdgDir } from "./xdg.js"

export const defaultStateDir = (env: NodeJS.ProcessEnv = process.env): string =>
  join(xdgDir("XDG_STATE_HOME", env), "opencode-pool")

export const resolveStateDir = (option: string | undefined, env: NodeJS.ProcessEnv = process.env): string => {
  const fromEnv = env.OCPOOL_STATE_DIR
  if (fromEnv !== undefined && fromEnv !== "") return resolve(fromEnv)
  if (option !== undefined && option !== "") return resolve(option.startsWith("~/") ? join(homedir(), option.slice(2)) : option)
  return defaultStateDir(env)
}

/** Prepares `dir`; returns why it is unusable, if it is. Logs a wider mode as a warning. */
export const prepareDir = (dir: string): { readonly unusable?: string; readonly wideMode?: number } => {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    const st = statSync(dir)
    if (!st.isDirectory()) return { unusable: "not a directory" }
    accessSync(dir, constants.W_OK | constants.X_OK)
    const mode = st.mode & 0o777
    return (mode & 0o077) !== 0 ? { wideMode: mode } : {}
  } catch (e) {
    return { unusable: (e as NodeJS.ErrnoException).code ?? String(e) }
  }
}

export const StateDirLive = (option: string | undefined) =>
  Layer.effect(
    StateDir,
    Effect.gen(function* () {
      const log = yield* AppLog
      const dir = resolveStateDir(option)
      const prepared = prepareDir(dir)
      if (prepared.unusable !== undefined) {
        yield* log.log("warn", `state dir ${dir} unusable (${prepared.unusable}); routing on this process's claims only, state kept in memory`)
      } else if (prepared.wideMode !== undefined) {
        yield* log.log("warn", `state dir ${dir} has mode ${prepared.wideMode.toString(8)}; expected 700 (used as it is)`)
      }
      return { dir: prepared.unusable === undefined ? dir : undefined, pid: process.pid, host: hostname(), startTime: startTimeOf(process.pid) }
    })
  )
