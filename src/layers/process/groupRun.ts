/**
 * `ocpool run`'s runner (issue 21): runs argv in a process group of its own and resolves only once the
 * whole group has exited, background children included (`sh -c '(sleep 2 &) ; exit 0'` holds it 2 s).
 * SIGINT/SIGTERM/SIGHUP sent to this process are forwarded to the group; a timeout sends the group
 * SIGTERM, then SIGKILL after KILL_AFTER_MS; an interruption does the same. The command's code is the
 * leader's (128+n when a signal ended it). A command that cannot be started is a typed failure with its
 * shell-style code (127 not found, 126 cannot run). Once the leader exited, the group is looked for with
 * `groupAlive` (layers/state/proc.ts), the rule permit holders are judged by.
 */
import { spawn, type ChildProcess } from "node:child_process"
import { accessSync, constants as fsConstants, statSync } from "node:fs"
import { constants } from "node:os"
import { join } from "node:path"
import type { Writable } from "node:stream"
import { Data, Deferred, Effect, Exit } from "effect"
import { groupAlive, startTimeOf } from "../state/proc.js"

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

/** The command could not be started: 127 not found, 126 found but not runnable; `message` is the line to print (without `ocpool: `). */
export class GroupSpawnFailed extends Data.TaggedError("GroupSpawnFailed")<{ readonly code: 126 | 127; readonly message: string }> {}

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

/** Signals the whole group; a group already gone is not an error. */
const signalGroup = (pgid: number, signal: NodeJS.Signals): void => {
  try {
    process.kill(-pgid, signal)
  } catch {
    // the group is gone (ESRCH) or not ours to signal
  }
}

const spawnFailure = (cmd: string, e: unknown): GroupSpawnFailed => {
  const code = (e as NodeJS.ErrnoException | undefined)?.code
  if (code === "ENOENT") return new GroupSpawnFailed({ code: 127, message: `${cmd}: command not found` })
  const reason =
    code === "EACCES" || code === "EPERM"
      ? "permission denied"
      : code === "ENOEXEC"
        ? "exec format error"
        : code === "EISDIR"
          ? "is a directory"
          : ((e instanceof Error ? e.message : String(e)).split("\n")[0] ?? "unknown error").slice(0, 200)
  return new GroupSpawnFailed({ code: 126, message: `${cmd}: cannot run: ${reason}` })
}

const exitCodeOf = (code: number | null, signal: NodeJS.Signals | null): number =>
  code !== null ? code : signal !== null ? 128 + (constants.signals[signal] ?? 0) : 1

interface Started {
  readonly child: ChildProcess
  readonly exited: Deferred.Deferred<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
}

/**
 * Whether `cmd` can be started as `spawn` would find it (PATH for a bare name): the failure `spawn`
 * would give, found before the command is held back behind the gate (whose shell would say it otherwise).
 */
export const unrunnable = (cmd: string, env: NodeJS.ProcessEnv): GroupSpawnFailed | undefined => {
  if (cmd.includes("\0")) return undefined // spawn itself refuses it, with its own reason
  const usable = (path: string): "ok" | "missing" | GroupSpawnFailed => {
    try {
      if (statSync(path).isDirectory()) return spawnFailure(cmd, Object.assign(new Error("is a directory"), { code: "EISDIR" }))
      accessSync(path, fsConstants.X_OK)
      return "ok"
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code
      return code === "ENOENT" || code === "ENOTDIR" ? "missing" : spawnFailure(cmd, e)
    }
  }
  if (cmd.includes("/")) {
    const r = usable(cmd)
    return r === "ok" ? undefined : r === "missing" ? spawnFailure(cmd, Object.assign(new Error("missing"), { code: "ENOENT" })) : r
  }
  let first: GroupSpawnFailed | undefined
  for (const dir of (env.PATH ?? "").split(":")) {
    const r = usable(join(dir === "" ? "." : dir, cmd))
    if (r === "ok") return undefined
    if (r !== "missing") first ??= r
  }
  return first ?? spawnFailure(cmd, Object.assign(new Error("missing"), { code: "ENOENT" }))
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
      const forward = (signal: NodeJS.Signals) => (target.pgid === undefined ? void target.pending.push(signal) : signalGroup(target.pgid, signal))
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
