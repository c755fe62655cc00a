/**
 * Programs found on PATH and run by argv (SPEC §10.5) through the one process runner (`runner.ts`):
 * `which`, `runTool`, and the one-line account of a run that did not deliver.
 */
import { accessSync, constants, statSync } from "node:fs"
import { delimiter, isAbsolute, join } from "node:path"
import { Effect } from "effect"
import { cleanText } from "../../core/notify/text.js"
import { notStarted, runArgv, type Env, type RunOptions, type RunResult } from "./runner.js"

export type { Env, RunOptions, RunResult } from "./runner.js"

/** PATH when the variable is unset, as execvp would search. */
const DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"

const executableFile = (path: string): boolean => {
  try {
    if (!statSync(path).isFile()) return false
    accessSync(path, constants.X_OK)
    return true
  } catch {
    return false
  }
}

/**
 * The absolute path of the executable `name` on `env.PATH`, or `undefined`. Empty and relative PATH
 * entries are skipped (never the current directory); a name with a slash must be an absolute path.
 */
export const which = (name: string, env: Env = process.env): string | undefined => {
  if (name === "" || name.includes("\0")) return undefined
  if (name.includes("/")) return isAbsolute(name) && executableFile(name) ? name : undefined
  for (const dir of (env.PATH ?? DEFAULT_PATH).split(delimiter)) {
    if (dir === "" || !isAbsolute(dir)) continue
    const path = join(dir, name)
    if (executableFile(path)) return path
  }
  return undefined
}

/** The first (or last) line of a text that is not blank, cleaned and capped; empty when none. */
export const lineOf = (text: string, which: "first" | "last"): string => {
  const lines = text.split(/\r?\n/).map((l) => cleanText(l, 200)).filter((l) => l !== "")
  return (which === "first" ? lines[0] : lines[lines.length - 1]) ?? ""
}

/**
 * Why a run of `name` did not deliver, or `undefined` when it exited 0: `<name> not found`,
 * `<name> timed out after <ms> ms`, `<name> exited <code>: <stderr line>`, `<name> killed by <signal>`.
 */
export const failureOf = (name: string, r: RunResult, timeoutMs: number, line: "first" | "last"): string | undefined => {
  if (r.spawnError !== undefined) return r.spawnError
  if (r.timedOut) return `${name} timed out after ${timeoutMs} ms`
  if (r.code === 0) return undefined
  const said = lineOf(r.stderr, line)
  const how = r.code === null ? `${name} killed by ${r.signal ?? "a signal"}` : `${name} exited ${r.code}`
  return said === "" ? how : `${how}: ${said}`
}

/** Looks `name` up on the env's PATH and runs it; `<name> not found` when it is not there. */
export const runTool = (name: string, args: ReadonlyArray<string>, options: RunOptions): Effect.Effect<RunResult> =>
  Effect.suspend(() => {
    const path = which(name, options.env ?? process.env)
    return path === undefined
    ? Effect.succeed(notStarted(`${name} not found`))
    : runArgv(path, args, options).pipe(
        // a start failure names the program, not the path it was found at
        Effect.map((r) => (r.spawnError?.startsWith(path) === true ? { ...r, spawnError: name + r.spawnError.slice(path.length) } : r))
      )
  })
