/**
 * Resolves and prepares the state directory (SPEC §2.1): `OCPOOL_STATE_DIR` > option `stateDir` >
 * `$XDG_STATE_HOME/opencode-pool`. Created 0700; a directory that cannot be created or written leaves
 * the plugin working in memory, with one warning. A directory that is usable but not trusted (a
 * symbolic link, another owner, a wider mode, foreign files) is used as it is but never cleaned, with
 * one warning.
 */
import { Effect, Layer } from "effect"
import { accessSync, constants, lstatSync, opendirSync, statSync } from "node:fs"
import { resolve } from "node:path"
import { judgeStateDir, STATE_ENTRY, type StateDirTrust } from "../../core/stateTrust.js"
import { needsLog } from "../../services/opencode/AppLog.js"
import { StateDir } from "../../services/state/StateDir.js"
import { dirReason, makeDir } from "../fs/dirs.js"
import { ownHostId, startTimeOf } from "./proc.js"
import { expandHome, noHomeReason, xdgDir } from "../fs/xdg.js"

/** The state directory that was asked for, or why there is none. */
export type StateDirChoice = { readonly _tag: "Dir"; readonly dir: string } | { readonly _tag: "NoHome"; readonly reason: string }

export const defaultStateDir = (env: NodeJS.ProcessEnv = process.env): StateDirChoice => {
  const base = xdgDir("XDG_STATE_HOME", env)
  return base === undefined ? { _tag: "NoHome", reason: noHomeReason("XDG_STATE_HOME") } : { _tag: "Dir", dir: resolve(base, "opencode-pool") }
}

export const resolveStateDir = (option: string | undefined, env: NodeJS.ProcessEnv = process.env): StateDirChoice => {
  const fromEnv = env.OCPOOL_STATE_DIR
  if (fromEnv !== undefined && fromEnv !== "") return { _tag: "Dir", dir: resolve(fromEnv) }
  if (option !== undefined && option !== "") {
    const expanded = expandHome(option, env)
    return expanded === undefined ? { _tag: "NoHome", reason: `stateDir ${option}: ${noHomeReason("XDG_STATE_HOME")}` } : { _tag: "Dir", dir: resolve(expanded) }
  }
  return defaultStateDir(env)
}

/** The first name in `dir` that is not a state file (one pass, stops at the first). */
const strangerIn = (dir: string): string | undefined => {
  const handle = opendirSync(dir)
  try {
    for (let entry = handle.readSync(); entry !== null; entry = handle.readSync()) {
      if (!STATE_ENTRY.test(entry.name)) return entry.name
    }
    return undefined
  } finally {
    handle.closeSync()
  }
}

/** Whether `dir` may be cleaned (core/stateTrust.ts); never throws. */
export const inspectStateDir = (dir: string): StateDirTrust => {
  try {
    const st = lstatSync(dir)
    const isDirectory = st.isDirectory()
    return judgeStateDir({
      isSymlink: st.isSymbolicLink(),
      isDirectory,
      uid: st.uid,
      ownUid: typeof process.getuid === "function" ? process.getuid() : undefined,
      mode: st.mode & 0o777,
      stranger: isDirectory && !st.isSymbolicLink() ? strangerIn(dir) : undefined
    })
  } catch (e) {
    return { trusted: false, reason: dirReason((e as NodeJS.ErrnoException).code ?? String(e)) }
  }
}

/** Prepares `dir`; returns why it is unusable, if it is. Never throws, never blocks. */
export const prepareDir = (dir: string): { readonly unusable?: string } => {
  const problem = makeDir(dir, 0o700)
  if (problem !== undefined) return { unusable: problem.path === dir ? dirReason(problem.code) : `${problem.path}: ${dirReason(problem.code)}` }
  try {
    if (!statSync(dir).isDirectory()) return { unusable: "not a directory" }
    accessSync(dir, constants.W_OK | constants.X_OK)
    return {}
  } catch (e) {
    return { unusable: dirReason((e as NodeJS.ErrnoException).code ?? String(e)) }
  }
}

/** The state directory for this process: usable or not, trusted or not, with at most one warning. */
export const openStateDir = (choice: StateDirChoice): { readonly dir: string | undefined; readonly trusted: boolean; readonly warning?: string } => {
  if (choice._tag === "NoHome") return { dir: undefined, trusted: false, warning: `state dir unusable (${choice.reason}); routing on this process's claims only, state kept in memory` }
  const dir = choice.dir
  const prepared = prepareDir(dir)
  if (prepared.unusable !== undefined) return { dir: undefined, trusted: false, warning: `state dir ${dir} unusable (${prepared.unusable}); routing on this process's claims only, state kept in memory` }
  const trust = inspectStateDir(dir)
  if (trust.trusted) return { dir, trusted: true }
  return { dir, trusted: false, warning: `state dir ${dir} is not trusted (${trust.reason}): used as it is, other processes' dead files are left in place` }
}

export const StateDirFile = (option: string | undefined, env: NodeJS.ProcessEnv = process.env) =>
  Layer.effect(
    StateDir,
    Effect.gen(function* () {
      yield* needsLog
      const opened = openStateDir(resolveStateDir(option, env))
      if (opened.warning !== undefined) yield* Effect.logWarning(opened.warning)
      return { dir: opened.dir, trusted: opened.trusted, pid: process.pid, host: ownHostId(), startTime: startTimeOf(process.pid) }
    })
  )

/** This host's id among the hosts sharing a state (issue 22): `OCPOOL_HOST_ID`, else the hostname. */
export { ownHostId } from "./proc.js"
