/**
 * The one process runner (issue 34): the only module of src that starts a child process
 * (`node:child_process`; test/imports.test.ts). Never a shell of ours, argv only. Two modes:
 *
 * - `runArgv`, captured output with a deadline (SPEC §10.5, the notifiers, `tunnel`, `lsof`, `git`):
 *   the child gets its own process group, so a timeout or an interruption kills it and everything it
 *   started with one SIGKILL; stdout and stderr are read up to a cap (the rest read and dropped); the
 *   result is a value, nothing fails or throws.
 * - `groupRun`, inherited stdio with the group's signals (`ocpool run`, issue 21): the leader of a new
 *   process group, SIGINT/SIGTERM/SIGHUP of this process forwarded to the group, done only once the
 *   whole group has exited (background children included); a timeout or an interruption sends the
 *   group SIGTERM, then SIGKILL after KILL_AFTER_MS. The command's code is the leader's (128+n when
 *   signal n ended it); a command that cannot be started is a typed failure with its shell-style code
 *   (127 not found, 126 cannot run). Once the leader exited, the group is looked for with `groupAlive`
 *   (layers/state/proc.ts), the rule permit holders are judged by.
 *
 * Not on @effect/platform's `Command`: docs/DECISIONS.md 254 says what it lacks.
 */
import { spawn, type ChildProcess } from "node:child_process"
import { constants } from "node:os"
import type { Writable } from "node:stream"
import { Deferred, Effect, Exit, FiberId } from "effect"
import { groupAlive, startTimeOf } from "../state/proc.js"
import { type GroupSpawnFailed, spawnFailure, unrunnable } from "./startFailure.js"

export type Env = Readonly<Record<string, string | undefined>>

/** Signals the whole group; a group already gone (or not ours, or a runtime without group signals) is not an error. */
const signalGroup = (pgid: number, signal: NodeJS.Signals): boolean => {
  try {
    process.kill(-pgid, signal)
    return true
  } catch {
    return false
  }
}

// ─── captured output with a deadline ───────────────────────────────────────────────────────────────

export interface RunOptions {
  readonly timeoutMs: number
  /** The child's whole environment (default: this process's). */
  readonly env?: Env | undefined
  /** Written to the child's stdin, which is then closed; without it stdin is /dev/null. */
  readonly input?: string | undefined
  /** The cap on each of stdout and stderr (default OUTPUT_MAX_BYTES). */
  readonly maxBytes?: number | undefined
  /** `ignore`: the child's stderr goes to /dev/null (`stderr` is then empty); default `pipe`, captured. */
  readonly stderr?: "pipe" | "ignore" | undefined
}

export interface RunResult {
  /** The exit code; `null` when the child was killed by a signal, timed out or never started. */
  readonly code: number | null
  /** The signal that ended the child, when one did. */
  readonly signal?: string | undefined
  /** Each capped at the run's `maxBytes`, OUTPUT_MAX_BYTES by default (the rest is read and dropped). */
  readonly stdout: string
  readonly stderr: string
  /** Present when stdout said more than the cap. */
  readonly truncated?: true | undefined
  readonly timedOut: boolean
  /** Why the program could not be started (`<file> not found`, …). */
  readonly spawnError?: string | undefined
}

export const OUTPUT_MAX_BYTES = 64 << 10
/** After the deadline's SIGKILL (or after the exit), how long to wait for the pipes to close. */
export const SETTLE_MS = 100

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

/** Collects a stream's bytes up to `max`; the rest is drained and dropped. */
const collector = (max: number) => {
  const chunks: Array<Buffer> = []
  let size = 0
  let cut = false
  return {
    push: (chunk: Buffer | string) => {
      const b = typeof chunk === "string" ? Buffer.from(chunk) : chunk
      if (size >= max) return void (cut ||= b.length > 0)
      const part = b.length > max - size ? b.subarray(0, max - size) : b
      cut ||= part.length < b.length
      chunks.push(part)
      size += part.length
    },
    text: () => Buffer.concat(chunks, size).toString("utf8"),
    cut: () => cut
  }
}

/** How a child ended: its exit code or the signal that ended it. */
interface Ended {
  readonly code: number | null
  readonly signal: string | null
}

export const notStarted = (spawnError: string): RunResult => ({ code: null, stdout: "", stderr: "", timedOut: false, spawnError })

/** SIGKILL to the child's process group; the child alone when that fails. */
const killChild = (child: ChildProcess): void => {
  const pid = child.pid
  if (pid !== undefined && pid > 0 && signalGroup(pid, "SIGKILL")) return
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
    const max = options.maxBytes ?? OUTPUT_MAX_BYTES
    const out = collector(max)
    const err = collector(max)
    let child: ChildProcess
    try {
      child = spawn(file, [...args], {
        shell: false,
        detached: true,
        stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", options.stderr ?? "pipe"],
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
      ...(out.cut() ? { truncated: true as const } : {}),
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
      killChild(child)
      return Effect.map(Effect.race(Deferred.await(closed), Effect.sleep(SETTLE_MS)), () => result(true))
    })
    return ended.pipe(
      Effect.timeoutTo({ duration: Math.max(0, options.timeoutMs), onSuccess: Effect.succeed, onTimeout: () => deadline }),
      Effect.flatten,
      Effect.onInterrupt(() => Effect.sync(() => exit === undefined && killChild(child))),
      Effect.ensuring(
        Effect.sync(() => {
          child.stdout?.destroy()
          child.stderr?.destroy()
          child.stdin?.destroy()
        })
      )
    )
  })

// ─── inherited stdio with the group's signals ──────────────────────────────────────────────────────

/** After the group's SIGTERM (timeout, interruption), how long it has before SIGKILL. */
export const KILL_AFTER_MS = 2000
/** How often the group is looked for once its leader has exited. */
export const GROUP_POLL_MS = 100

/** The signals forwarded to the group. */
export const FORWARDED: ReadonlyArray<NodeJS.Signals> = ["SIGINT", "SIGTERM", "SIGHUP"]

/** The command's process group as a permit holder sees it: its id and its leader's start token. */
export interface ProcessGroup {
  readonly pgid: number
  readonly startToken: string | null
}

/** How the run ended. `code` is the leader's exit code, or 128+n when signal n ended it. */
export interface GroupExit {
  readonly code: number
  readonly signal: NodeJS.Signals | null
  /** The timeout ran out and the group was killed. */
  readonly timedOut: boolean
}

export interface GroupRunOptions<R> {
  /** Kill the group after this long (none: never). */
  readonly timeoutMs?: number | undefined
  /**
   * Runs right after the spawn (`Permits.rebind`): the command is held behind a gate until it has run,
   * so it never runs before this is done (a runner killed meanwhile: it never runs at all).
   */
  readonly onSpawn?: ((group: ProcessGroup) => Effect.Effect<void, never, R>) | undefined
  /** The child's environment (default: this process's). */
  readonly env?: NodeJS.ProcessEnv | undefined
  readonly pollMs?: number | undefined
  readonly killAfterMs?: number | undefined
}

/** This process's start token (a permit holder's identity; null where there is none). */
export const ownStartToken = (): string | null => startTimeOf(process.pid)

const exitCodeOf = (code: number | null, signal: NodeJS.Signals | null): number =>
  code !== null ? code : signal !== null ? 128 + (constants.signals[signal] ?? 0) : 1

interface Started {
  readonly child: ChildProcess
  readonly exited: Deferred.Deferred<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
}

/**
 * The gate a held command waits behind (issue 32): the group's leader is a shell that reads one line
 * from fd 3 and only then execs the command (same pid, same start token); a runner that dies before it
 * opens the gate closes the pipe, and the command never runs.
 */
const GATE = 'read -r _ <&3 || exit 125; exec 3<&-; exec "$@"'

/** Spawns `argv` as the leader of a new process group, `held` behind the gate; resolves once it runs (or fails to start). */
const start = (argv: readonly [string, ...Array<string>], env: NodeJS.ProcessEnv | undefined, held: boolean): Effect.Effect<Started, GroupSpawnFailed> =>
  Effect.flatMap(Deferred.make<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>(), (exited) =>
    Effect.async<Started, GroupSpawnFailed>((resume) => {
      const [cmd, ...args] = argv
      let child: ChildProcess
      try {
        const bad = held ? unrunnable(cmd, env ?? process.env) : undefined
        if (bad !== undefined) return resume(Effect.fail(bad))
        child = held
          ? spawn("/bin/sh", ["-c", GATE, "ocpool-run", cmd, ...args], { detached: true, stdio: ["inherit", "inherit", "inherit", "pipe"], env: env ?? process.env })
          : spawn(cmd, args, { detached: true, stdio: "inherit", env: env ?? process.env })
      } catch (e) {
        return resume(Effect.fail(spawnFailure(cmd, e)))
      }
      child.once("exit", (code, signal) => Deferred.unsafeDone(exited, Exit.succeed({ code, signal })))
      child.once("spawn", () => resume(Effect.succeed({ child, exited })))
      child.once("error", (e) => resume(Effect.fail(spawnFailure(cmd, e))))
    })
  )

/** Polls until no process of the group is left. */
const groupGone = (group: ProcessGroup, floor: string | null, pollMs: number): Effect.Effect<void> =>
  Effect.suspend(() => (groupAlive(group.pgid, floor) ? Effect.zipRight(Effect.sleep(pollMs), groupGone(group, floor, pollMs)) : Effect.void))

/** SIGTERM to the group, SIGKILL after `graceMs` if any of it is left, then waits until it is gone. */
const killGroup = (group: ProcessGroup, floor: string | null, pollMs: number, graceMs: number): Effect.Effect<void> =>
  Effect.gen(function* () {
    signalGroup(group.pgid, "SIGTERM")
    const gone = yield* Effect.timeoutTo(groupGone(group, floor, pollMs), { duration: graceMs, onSuccess: () => true, onTimeout: () => false })
    if (!gone) {
      signalGroup(group.pgid, "SIGKILL")
      yield* Effect.timeout(groupGone(group, floor, pollMs), 10_000).pipe(Effect.ignore)
    }
  })

/**
 * Runs `argv` in its own process group until every process of the group has exited, forwarding
 * SIGINT/SIGTERM/SIGHUP to it meanwhile (the handlers are removed when it ends).
 */
export const groupRun = <R = never>(argv: readonly [string, ...Array<string>], options: GroupRunOptions<R> = {}): Effect.Effect<GroupExit, GroupSpawnFailed, R> =>
  Effect.scoped(
    Effect.gen(function* () {
      const pollMs = options.pollMs ?? GROUP_POLL_MS
      const graceMs = options.killAfterMs ?? KILL_AFTER_MS
      // installed before the spawn so no signal between the spawn and the handlers kills this process alone
      const target: { pgid: number | undefined; pending: Array<NodeJS.Signals> } = { pgid: undefined, pending: [] }
      const forward = (signal: NodeJS.Signals) => (target.pgid === undefined ? void target.pending.push(signal) : void signalGroup(target.pgid, signal))
      yield* Effect.acquireRelease(
        Effect.sync(() => FORWARDED.forEach((s) => process.on(s, forward))),
        () => Effect.sync(() => FORWARDED.forEach((s) => process.off(s, forward)))
      )
      const held = options.onSpawn !== undefined
      const { child, exited } = yield* start(argv, options.env, held)
      const pgid = child.pid!
      // the leader's token; read too late (it already exited) this process's own is the floor: the group started after it
      const group: ProcessGroup = { pgid, startToken: startTimeOf(pgid) }
      const floor = group.startToken ?? startTimeOf(process.pid)
      target.pgid = pgid
      for (const s of target.pending.splice(0)) signalGroup(pgid, s)
      const whole = Effect.zipLeft(Deferred.await(exited), groupGone(group, floor, pollMs))
      const run = Effect.gen(function* () {
        if (options.onSpawn !== undefined) {
          // bound first (the permit to the group), then the gate opens: no instant where the command runs unbound
          yield* options.onSpawn(group)
          yield* Effect.sync(() => {
            const gate = child.stdio[3] as Writable | null
            gate?.on("error", () => undefined)
            gate?.end("\n")
          })
        }
        const timedOut = yield* options.timeoutMs === undefined
          ? Effect.as(whole, false)
          : Effect.timeoutTo(whole, { duration: options.timeoutMs, onSuccess: () => false, onTimeout: () => true })
        if (timedOut) yield* killGroup(group, floor, pollMs, graceMs)
        const leader = yield* Deferred.await(exited)
        return { code: exitCodeOf(leader.code, leader.signal), signal: leader.signal, timedOut } satisfies GroupExit
      })
      return yield* Effect.onInterrupt(run, () => killGroup(group, floor, pollMs, graceMs))
    })
  )
