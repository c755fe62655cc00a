/**
 * Running a program by argv (SPEC §10.5): never a shell, always bounded in time. The child gets its
 * own process group, so a timeout or an interruption kills it and everything it started with one
 * SIGKILL. The result is a value: nothing here fails or throws.
 */
import { spawn, type ChildProcess } from "node:child_process"
import { accessSync, constants, statSync } from "node:fs"
import { delimiter, isAbsolute, join } from "node:path"
import { Deferred, Effect, Exit, FiberId } from "effect"
import { cleanText } from "../../core/notify/text.js"

export type Env = Readonly<Record<string, string | undefined>>

export interface RunOptions {
  readonly timeoutMs: number
  /** The child's whole environment (default: this process's). */
  readonly env?: Env | undefined
  /** Written to the child's stdin, which is then closed; without it stdin is /dev/null. */
  readonly input?: string | undefined
}

export interface RunResult {
  /** The exit code; `null` when the child was killed by a signal, timed out or never started. */
  readonly code: number | null
  /** The signal that ended the child, when one did. */
  readonly signal?: string | undefined
  /** Each capped at OUTPUT_MAX_BYTES (the rest is read and dropped). */
  readonly stdout: string
  readonly stderr: string
  readonly timedOut: boolean
  /** Why the program could not be started (`<file> not found`, …). */
  readonly spawnError?: string | undefined
}

export const OUTPUT_MAX_BYTES = 64 << 10
/** After the deadline's SIGKILL (or after the exit), how long to wait for the pipes to close. */
export const SETTLE_MS = 100

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

const spawnReason = (file: string, e: unknown): string => {
  const code = (e as NodeJS.ErrnoException | undefined)?.code
  switch (code) {
    case "ENOENT":
      return `${file} not found`
    case "EACCES":
    case "EPERM":
      return `${file} is not executable (permission denied)`
    default:
      return `${file} could not start: ${code ?? String(e)}`
  }
}

const cleanEnv = (env: Env): NodeJS.ProcessEnv => {
  const out: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v
  return out
}

/** Collects a stream's bytes up to the cap; the rest is drained and dropped. */
const collector = () => {
  const chunks: Array<Buffer> = []
  let size = 0
  return {
    push: (chunk: Buffer | string) => {
      const b = typeof chunk === "string" ? Buffer.from(chunk) : chunk
      if (size >= OUTPUT_MAX_BYTES) return
      const part = b.length > OUTPUT_MAX_BYTES - size ? b.subarray(0, OUTPUT_MAX_BYTES - size) : b
      chunks.push(part)
      size += part.length
    },
    text: () => Buffer.concat(chunks, size).toString("utf8")
  }
}

/** How a child ended: its exit code or the signal that ended it. */
interface Ended {
  readonly code: number | null
  readonly signal: string | null
}

const notStarted = (spawnError: string): RunResult => ({ code: null, stdout: "", stderr: "", timedOut: false, spawnError })

/** SIGKILL to the child's process group; the child alone when that fails. */
const killGroup = (child: ChildProcess): void => {
  const pid = child.pid
  if (pid !== undefined && pid > 0) {
    try {
      process.kill(-pid, "SIGKILL")
      return
    } catch {
      // no such group (already gone), or a runtime without group signals
    }
  }
  try {
    child.kill("SIGKILL")
  } catch {
    // already gone
  }
}

/**
 * Runs `file` with `args` (argv only, `shell: false`) in its own process group. At `timeoutMs` the
 * group is killed and the result comes back at most SETTLE_MS later, even when something ignores the
 * signal or holds the pipes open. Interruption kills the group too. Both waits are on the fiber's
 * `Clock`, so tests drive them with the TestClock.
 */
export const runArgv = (file: string, args: ReadonlyArray<string>, options: RunOptions): Effect.Effect<RunResult> =>
  Effect.suspend(() => {
    const out = collector()
    const err = collector()
    let child: ChildProcess
    try {
      child = spawn(file, [...args], {
        shell: false,
        detached: true,
        stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
        env: cleanEnv(options.env ?? process.env),
        windowsHide: true
      })
    } catch (e) {
      return Effect.succeed(notStarted(spawnReason(file, e)))
    }
    // the child's events, as values the fiber waits on
    const exited = Deferred.unsafeMake<Ended>(FiberId.none)
    const closed = Deferred.unsafeMake<void>(FiberId.none)
    const failed = Deferred.unsafeMake<string>(FiberId.none)
    let exit: Ended | undefined
    let startFailure: string | undefined

    child.stdout?.on("data", out.push)
    child.stderr?.on("data", err.push)
    child.stdout?.on("error", () => {})
    child.stderr?.on("error", () => {})
    child.on("error", (e) => {
      // a failed start has no pid; errors of a running child (a failed kill) change nothing
      if (child.pid === undefined) Deferred.unsafeDone(failed, Exit.succeed((startFailure ??= spawnReason(file, e))))
    })
    child.on("exit", (code, signal) => {
      exit ??= { code, signal }
      Deferred.unsafeDone(exited, Exit.succeed(exit))
    })
    child.on("close", (code, signal) => {
      exit ??= { code, signal }
      Deferred.unsafeDone(closed, Exit.void)
    })
    if (options.input !== undefined && child.stdin !== null) {
      child.stdin.on("error", () => {})
      child.stdin.end(options.input)
    }

    const result = (timedOut: boolean, spawnError?: string): RunResult => ({
      code: timedOut || spawnError !== undefined ? null : (exit?.code ?? null),
      ...(exit?.signal != null && !timedOut ? { signal: exit.signal } : {}),
      stdout: out.text(),
      stderr: err.text(),
      timedOut,
      ...(spawnError === undefined ? {} : { spawnError })
    })
    // the pipes closed, or the child exited and SETTLE_MS passed (something it started may hold them open)
    const settled = Effect.race(Deferred.await(closed), Effect.zipRight(Deferred.await(exited), Effect.sleep(SETTLE_MS)))
    // a failed start may close the pipes in the same turn: its reason is the answer either way
    const ended = Effect.race(Effect.map(settled, () => result(false, startFailure)), Effect.map(Deferred.await(failed), (reason) => result(false, reason)))
    const deadline = Effect.suspend(() => {
      // exited in time, only the pipes are still open: answer with the exit code now
      if (exit !== undefined) return Effect.succeed(result(false))
      killGroup(child)
      return Effect.map(Effect.race(Deferred.await(closed), Effect.sleep(SETTLE_MS)), () => result(true))
    })
    return ended.pipe(
      Effect.timeoutTo({ duration: Math.max(0, options.timeoutMs), onSuccess: Effect.succeed, onTimeout: () => deadline }),
      Effect.flatten,
      Effect.onInterrupt(() => Effect.sync(() => exit === undefined && killGroup(child))),
      Effect.ensuring(
        Effect.sync(() => {
          child.stdout?.destroy()
          child.stderr?.destroy()
          child.stdin?.destroy()
        })
      )
    )
  })

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
