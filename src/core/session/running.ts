/**
 * Whether opencode still runs a session, from its answer to `GET /session/status` (a map from session id
 * to `{type: "idle" | "busy" | "retry", …}`; opencode lists only the sessions it knows, idle ones
 * possibly), and how a shell polls that answer: after an abort (SPEC §8.3: `200 true` comes even for
 * unknown sessions, so only the status proves it) and before a "continue" prompt (US-50: opencode drops
 * a prompt sent while it still runs or retries the session). Pure: the shell reads and sleeps.
 */
import { isRecord } from "../json.js"

/** Whether `id` is listed as running in a status answer's data: listed and not idle. Absent (or no map) is not running. */
export const isRunning = (status: unknown, id: string): boolean => {
  if (!isRecord(status) || !Object.hasOwn(status, id)) return false
  const entry = status[id]
  return entry !== undefined && !(isRecord(entry) && entry.type === "idle")
}

/** A poll of the status: a read at once, then one every `everyMs` while the session runs, the last at `forMs`. */
export interface StatusPoll {
  readonly everyMs: number
  readonly forMs: number
}

/** After an abort: two reads, 1 s apart. */
export const ABORT_CONFIRM_POLL: StatusPoll = { everyMs: 1_000, forMs: 1_000 }

/** Before a "continue" prompt: every 250 ms for up to 60 s. */
export const IDLE_WAIT_POLL: StatusPoll = { everyMs: 250, forMs: 60_000 }

/** The number of reads a poll makes at most. */
export const pollReads = (p: StatusPoll): number => Math.floor(p.forMs / p.everyMs) + 1
