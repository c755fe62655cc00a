/**
 * Who reads the pipe this process writes to (issue 33: `ocpool top --json | head -1` while the pool is
 * idle). A writer learns that its reader went away only when it writes, and a view of an idle pool
 * writes nothing; nor does Node offer a poll of the descriptor. On Linux, `/proc` says which processes
 * hold the pipe's read end: the view finds them once and checks them every half second, and ends
 * quietly when none is left. Where `/proc` cannot tell (another OS, a reader of another user), nothing
 * is watched and the view ends at its next write, as before.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs"
import { Effect } from "effect"

export interface PipeReader {
  readonly pid: number
  readonly fd: string
}

/** How often the readers are looked at. */
export const READER_CHECK_MS = 500
/** How many looks for a first reader before the watch gives up (a reader /proc does not show). */
const FIRST_LOOKS = 20

const linkOf = (path: string): string | undefined => {
  try {
    return readlinkSync(path)
  } catch {
    return undefined
  }
}

/** `pipe:[inode]` of this process's `fd` when it is a pipe; `undefined` otherwise (a file, a terminal, no /proc). */
export const pipeOf = (fd: number): string | undefined => {
  const link = linkOf(`/proc/self/fd/${fd}`)
  return link !== undefined && /^pipe:\[\d+\]$/.test(link) ? link : undefined
}

/** Whether `/proc/<pid>/fdinfo/<fd>` says the descriptor is open for reading only (the read end of a pipe). */
const readOnly = (pid: string, fd: string): boolean => {
  try {
    const flags = /^flags:\s*([0-7]+)/m.exec(readFileSync(`/proc/${pid}/fdinfo/${fd}`, "utf8"))
    return flags !== null && (parseInt(flags[1]!, 8) & 3) === 0
  } catch {
    return false
  }
}

/** The processes (other than this one) holding `pipe`'s read end, as far as `/proc` shows them. */
export const readersOf = (pipe: string): ReadonlyArray<PipeReader> => {
  const out: Array<PipeReader> = []
  let pids: Array<string>
  try {
    pids = readdirSync("/proc").filter((p) => /^\d+$/.test(p) && Number(p) !== process.pid)
  } catch {
    return out
  }
  for (const pid of pids) {
    let fds: Array<string>
    try {
      fds = readdirSync(`/proc/${pid}/fd`)
    } catch {
      continue
    }
    for (const fd of fds) if (linkOf(`/proc/${pid}/fd/${fd}`) === pipe && readOnly(pid, fd)) out.push({ pid: Number(pid), fd })
  }
  return out
}

/** Whether `reader` still holds `pipe` open. */
const holds = (reader: PipeReader, pipe: string): boolean => linkOf(`/proc/${reader.pid}/fd/${reader.fd}`) === pipe

/**
 * An effect that resolves once nobody reads this process's stdout pipe any more (checked every
 * READER_CHECK_MS on the real clock); never, when stdout is no pipe or no reader shows within
 * FIRST_LOOKS looks. The first look is taken now, when this is called: before the first line is
 * written, while a reader that takes one line and leaves is still there.
 */
export const stdoutReaderGone = (): Effect.Effect<void> => {
  const pipe = pipeOf(1)
  if (pipe === undefined) return Effect.never
  let readers = readersOf(pipe)
  // a pipeline's processes start together: its reader may not be there yet at the first look
  let looks = 1
  return Effect.async<void>((resume) => {
    const timer = setInterval(() => {
      if (readers.length === 0) {
        readers = readersOf(pipe)
        if (readers.length === 0 && ++looks >= FIRST_LOOKS) clearInterval(timer)
        return
      }
      if (readers.some((r) => holds(r, pipe))) return
      // the one we knew left: another may hold it (a reader that forked, a tee)
      readers = readersOf(pipe)
      if (readers.length > 0) return
      clearInterval(timer)
      resume(Effect.void)
    }, READER_CHECK_MS)
    timer.unref?.()
    return Effect.sync(() => clearInterval(timer))
  })
}
