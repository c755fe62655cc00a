/**
 * `ocpool run [--budget NAME] [--weight N] [--wait DUR] [--timeout DUR] [--reason TEXT] -- CMD [ARGS…]`
 * (issue 21, US-51): waits first-in first-out for a permit of the budget (on a terminal, one status line
 * on stderr: position and holders), runs the command in a process group of its own, hands the permit to
 * that group, and releases it once every process of the group has exited. Exit: the command's code;
 * 124 on `--timeout` (the group killed), 75 when `--wait` ran out, 127/126 when the command cannot be
 * found or run, 130/143 on SIGINT/SIGTERM while queued, 2 for a bad flag or a missing command.
 */
import { ownSignals } from "./shared/ownSignals.js"
import { Args, Command } from "@effect/cli"
import { Clock, Deferred, Effect, Option } from "effect"
import { parseDuration } from "../core/duration.js"
import { parsePositiveInteger } from "../core/retention/flags.js"
import { printable, truncate } from "../core/printable.js"
import { HEAVY, type PermitAnswer, type PermitHolder } from "../core/permits/types.js"
import { groupRun, ownStartToken } from "../layers/process/runner.js"
import { ownHostId } from "../layers/state/StateDirFile.js"
import { Permits, type PermitTicket, type WaitProgress } from "../services/permits/Permits.js"
import { BadInput } from "./errors.js"
import { ExitWith } from "./notify.js"
import { CurrentIo, writeOut } from "./output.js"
import { withPermits } from "./permits.js"
import { orBadInput, text } from "./shared/flags.js"
import { stateDirOption } from "./status.js"
import { commandWords } from "./shared/preParse.js"

/** A reason is one printable line of at most this many characters (the ellipsis included). */
export const REASON_MAX = 200
/** The terminal status line is cut to fit an 80-column terminal. */
const STATUS_MAX = 79

export const EXIT_TIMEOUT = 124
export const EXIT_NO_PERMIT = 75

export interface RunFlags {
  readonly budget: string | undefined
  readonly weight: string | undefined
  readonly wait: string | undefined
  readonly timeout: string | undefined
  readonly reason: string | undefined
  readonly stateDir: Option.Option<string>
  readonly argv: ReadonlyArray<string>
}

/** A duration flag's value in ms, or BadInput naming the flag. */
const durationFlag = (flag: string, value: string | undefined): Effect.Effect<number | undefined, BadInput> => {
  if (value === undefined) return Effect.succeed(undefined)
  const d = parseDuration(value)
  return typeof d === "number" ? Effect.succeed(d) : Effect.fail(new BadInput({ message: `--${flag} ${truncate(printable(value), 40)}: ${d.error}`, option: `--${flag}`, value }))
}

/** The command line as a reason: words with spaces or quotes single-quoted, one printable line of at most REASON_MAX. */
export const commandLine = (argv: ReadonlyArray<string>): string =>
  truncate(printable(argv.map((w) => (w === "" || /[\s'"\\$`]/.test(w) ? `'${w.replace(/'/g, `'\\''`)}'` : w)).join(" ")), REASON_MAX - 1)

/** `ocpool: waiting for a heavy permit: position 2; held by p-1 (pid 123: npm test)`, cut to an 80-column terminal. */
export const statusLine = (budget: string, p: WaitProgress): string => {
  const holders = p.holders.map((h) => `${h.id} (pid ${h.holder.pid}: ${printable(h.reason)})`).join(", ")
  const line = `ocpool: waiting for a ${printable(budget)} permit: position ${p.position}${p.paused ? " (paused)" : ""}${holders === "" ? "" : `; held by ${holders}`}`
  return truncate(line, STATUS_MAX - 1)
}

/** What the machine answered a request, as the user's problem (exit 2), or undefined when it was not refused. */
const refusal = (answer: PermitAnswer, flags: { readonly budget: string; readonly weight: number }, known: ReadonlyArray<{ readonly name: string; readonly capacity: number }>): string | undefined => {
  if (answer.state !== "refused") return undefined
  const budget = known.find((b) => b.name === flags.budget)
  switch (answer.reason) {
    case "unknown budget":
      return `--budget ${truncate(printable(flags.budget), 40)}: no such budget (known: ${known.filter((b) => b.capacity > 0).map((b) => printable(b.name)).join(", ") || "none"})`
    case "weight outside 1..capacity":
      return `--weight ${flags.weight}: outside 1..${budget?.capacity ?? "capacity"} for budget ${printable(flags.budget)}`
    default:
      return `the permit request was refused: ${answer.reason}`
  }
}

/**
 * `ocpool run` owns SIGINT/SIGTERM/SIGHUP while it runs (shared/ownSignals.ts). While queued, a signal
 * completes `got` (the wait stops, the request is cancelled, the exit is 128+n); once the command is
 * spawned the runner forwards signals to its group and these ignore them.
 */
const queuedSignals = (got: Deferred.Deferred<number>, phase: { queued: boolean }) =>
  ownSignals((code) => {
    if (phase.queued) Deferred.unsafeDone(got, Effect.succeed(code))
  })

export const runRun = (flags: RunFlags) =>
  Effect.gen(function* () {
    const weight = (yield* orBadInput(parsePositiveInteger("weight", flags.weight))) ?? 1
    const waitMs = yield* durationFlag("wait", flags.wait)
    const timeoutMs = yield* durationFlag("timeout", flags.timeout)
    const budget = flags.budget ?? HEAVY
    if (flags.argv.length === 0) return yield* new BadInput({ message: "run needs a command: ocpool run [flags] -- CMD [ARGS…]" })
    // @effect/cli hands an unknown flag (or a flag missing its value) before `--` over as a word: no command starts with `-`
    const first = flags.argv[0]!
    if (first.startsWith("-")) return yield* new BadInput({ message: `run: unknown flag or missing value: ${truncate(printable(first), 40)} (the command goes after --)`, option: first })
    const argv = flags.argv as readonly [string, ...Array<string>]
    const reason = flags.reason !== undefined ? truncate(printable(flags.reason), REASON_MAX - 1) : commandLine(argv)
    const code = yield* withPermits(flags.stateDir, held({ budget, weight, waitMs, waitText: flags.wait, timeoutMs, timeoutText: flags.timeout, reason, argv }))
    if (code !== 0) return yield* new ExitWith({ code })
  })

interface Held {
  readonly budget: string
  readonly weight: number
  readonly waitMs: number | undefined
  readonly waitText: string | undefined
  readonly timeoutMs: number | undefined
  readonly timeoutText: string | undefined
  readonly reason: string
  readonly argv: readonly [string, ...Array<string>]
}

/** Request, wait, run, release: the exit code. The permit is released (or the request cancelled) on every path. */
const held = (h: Held) =>
  Effect.scoped(
    Effect.gen(function* () {
      const permits = yield* Permits
      const io = yield* CurrentIo
      const got = yield* Deferred.make<number>()
      const phase = { queued: true }
      yield* queuedSignals(got, phase)
      const holder: PermitHolder = { host: ownHostId(), pid: process.pid, startToken: ownStartToken(), via: "run" }
      const { ticket, answer } = yield* Effect.acquireRelease(permits.request({ budget: h.budget, weight: h.weight, reason: h.reason, holder }), (r) =>
        r.answer.state === "refused" ? Effect.void : Effect.ignore(Effect.catchAllDefect(permits.release(r.ticket), () => Effect.void))
      )
      if (answer.state === "refused") {
        const known = yield* permits.status
        return yield* new BadInput({ message: refusal(answer, h, known) ?? "the permit request was refused" })
      }
      if (answer.state !== "granted") {
        const outcome = yield* waitFor(permits, ticket, h, io.stderr.isTTY === true, got)
        if (typeof outcome === "number") return outcome
      }
      phase.queued = false
      // a signal that came between the grant and the spawn: do not start the command
      const early = yield* Deferred.poll(got)
      if (Option.isSome(early)) return yield* early.value
      const exit = yield* groupRun(h.argv, {
        timeoutMs: h.timeoutMs,
        onSpawn: (group) => Effect.asVoid(permits.rebind(ticket, group))
      }).pipe(Effect.catchTag("GroupSpawnFailed", (e) => Effect.as(writeOut(io, "stderr", `ocpool: ${printable(e.message)}\n`), { code: e.code, signal: null, timedOut: false })))
      if (exit.timedOut) {
        yield* writeOut(io, "stderr", `ocpool: timed out after ${printable(h.timeoutText ?? "")}: the command's process group was killed\n`)
        return EXIT_TIMEOUT
      }
      return exit.code
    })
  )

/** Waits for the grant: undefined once granted, else the exit code (the request cancelled). */
const waitFor = (permits: Permits["Type"], ticket: PermitTicket, h: Held, tty: boolean, signalled: Deferred.Deferred<number>) =>
  Effect.gen(function* () {
    const io = yield* CurrentIo
    let shown = 0
    const onProgress = (p: WaitProgress) => {
      if (!tty) return Effect.void
      const line = statusLine(h.budget, p)
      const pad = " ".repeat(Math.max(0, shown - line.length))
      shown = line.length
      return writeOut(io, "stderr", `\r${line}${pad}`)
    }
    const clear = Effect.suspend(() => (shown === 0 ? Effect.void : writeOut(io, "stderr", `\r${" ".repeat(shown)}\r`)))
    const now = yield* Clock.currentTimeMillis
    const deadline = h.waitMs === undefined ? undefined : now + h.waitMs
    const outcome = yield* Effect.raceFirst(
      permits.wait(ticket, { deadline, onProgress }),
      Effect.map(Deferred.await(signalled), (code) => ({ state: "signal" as const, code }))
    ).pipe(Effect.ensuring(clear))
    switch (outcome.state) {
      case "granted":
        return undefined
      case "signal":
        yield* permits.cancel(ticket, "aborted")
        return outcome.code
      case "timeout":
        yield* permits.cancel(ticket, "wait")
        yield* writeOut(io, "stderr", `ocpool: no permit within ${printable(h.waitText ?? "")}\n`)
        return EXIT_NO_PERMIT
      case "gone":
        yield* writeOut(io, "stderr", `ocpool: the permit request was dropped (${printable(outcome.cause)})\n`)
        return 1
    }
  })

export const runCommand = Command.make(
  "run",
  {
    budget: text("budget", "NAME", `The budget to take the permit from (default: ${HEAVY})`),
    weight: text("weight", "N", "Units of the budget the command takes, 1..capacity (default: 1)"),
    wait: text("wait", "DUR", "Give up after waiting this long for the permit: exit 75 (500ms, 30s, 10m, 1h; default: no limit)"),
    timeout: text("timeout", "DUR", "Kill the command's process group after this long: exit 124 (default: no limit)"),
    reason: text("reason", "TEXT", `What the permit is for, as \`ocpool permits\` shows it (default: the command line; at most ${REASON_MAX} characters)`),
    stateDir: stateDirOption,
    argv: Args.text({ name: "CMD" }).pipe(Args.withDescription("The command and its arguments, after --"), Args.repeated)
  },
  (a) =>
    runRun({
      budget: Option.getOrUndefined(a.budget),
      weight: Option.getOrUndefined(a.weight),
      wait: Option.getOrUndefined(a.wait),
      timeout: Option.getOrUndefined(a.timeout),
      reason: Option.getOrUndefined(a.reason),
      stateDir: a.stateDir,
      argv: commandWords(a.argv)
    })
).pipe(
  Command.withDescription(
    "Run a heavy command when a permit is free: waits first-in first-out (on a terminal, one status line with the position and the holders), runs the command in a process group of its own, forwards SIGINT/SIGTERM/SIGHUP to it, and keeps the permit until every process of the group has exited. Exit: the command's code; 124 --timeout ran out (the group killed); 75 --wait ran out; 127 command not found; 126 command cannot run; 130/143 interrupted while queued; 2 bad flag or no command."
  )
)
