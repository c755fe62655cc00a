/**
 * The one poll of opencode's session status (core/session/running.ts): a read at once, then one every
 * `everyMs` while the session is still listed running, the last at `forMs`. Used after an abort (the
 * confirmation) and before a "continue" prompt (the wait for idle).
 */
import { Duration, Effect, Schedule } from "effect"
import { pollReads, type StatusPoll } from "../../core/session/running.js"

/** Spaced reads while the input says "running", at most `pollReads(poll)` in all; the output is the last input. */
export const untilIdle = (poll: StatusPoll): Schedule.Schedule<boolean, boolean> =>
  Schedule.spaced(Duration.millis(poll.everyMs)).pipe(
    Schedule.intersect(Schedule.recurs(pollReads(poll) - 1)),
    Schedule.whileInput((running: boolean) => running),
    Schedule.passthrough
  )

/** Repeats `running` (one status read: is the session still running?) on the poll; true when it still ran at the last read. */
export const stillRunningAfter = <E, R>(running: Effect.Effect<boolean, E, R>, poll: StatusPoll): Effect.Effect<boolean, E, R> =>
  Effect.repeat(running, untilIdle(poll))
