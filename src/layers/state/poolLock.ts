/**
 * `pool.lock` (SPEC §5.3): made whole in one step, never empty (a temporary `pool.lock.<pid>-<random>.tmp`
 * in the same directory, written with the full content, then hard-linked into place: the link fails
 * with EEXIST while the lock is held, as O_CREAT|O_EXCL does; mode 0600); a stale lock (dead holder,
 * reused pid, older than 5 s, or unreadable and old — an empty one left by an older version included)
 * is taken over at once; otherwise it is polled every 10 ms up to `lockWaitMs`, then the work goes
 * ahead without it (counted, and warned at most once a minute: core/lock/failOpen.ts). The temporary
 * is removed on every path; one a SIGKILL leaves between write and link is an orphan `*.tmp`, removed
 * after a minute by the claim reader (claimFiles.ts), and a trusted state dir stays trusted
 * (core/stateTrust.ts). The holder it names is judged as a claims table's is (core/claims.ts
 * `isLockStale`: core/state/holder.ts, the `at` it wrote + LOCK_STALE_MS its lease). The file backend's
 * lock part (sharedStateOver.ts), private to it: nothing above the port sees a lock.
 */
import { Clock, Effect, Option, Ref, Schedule } from "effect"
import { randomBytes } from "node:crypto"
import { closeSync, linkSync, openSync, statSync, unlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { isLockStale } from "../../core/claims.js"
import { failOpen, NO_FAIL_OPENS } from "../../core/lock/failOpen.js"
import { STATE_FILE_MAX_BYTES } from "../../core/limits.js"
import { decodeLockFile } from "../../core/lockFile.js"
import { AppLog } from "../../services/opencode/AppLog.js"
import type { StateDirService } from "../../services/state/StateDir.js"
import { quietUnlink } from "../fs/fileCache.js"
import { readTextFile } from "../fs/safeRead.js"
import { pidState, startTimeOf } from "./proc.js"
import type { StateLock } from "./sharedStateOver.js"

const LOCK_POLL_MS = 10

type Created = "held" | "exists" | "failed"

/** What `link` says on a file system without hard links (vfat, some FUSE and network mounts). */
const NO_HARD_LINKS: ReadonlySet<string> = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS"])

const errno = (e: unknown): string | undefined => {
  const code = (e as NodeJS.ErrnoException | undefined)?.code
  return typeof code === "string" ? code : undefined
}

/**
 * Makes `path` (exclusively, mode 0600: a file or link already at the name is never written through)
 * holding all of `body`; a failed write removes the file just made. `exists` when the name is taken.
 */
const createWhole = (path: string, body: string): Created => {
  let fd: number
  try {
    fd = openSync(path, "wx", 0o600)
  } catch (e) {
    return errno(e) === "EEXIST" ? "exists" : "failed"
  }
  let written = false
  try {
    writeFileSync(fd, body)
    written = true
  } catch {
    // no room, or the file system failed: nothing half-written stays
  }
  try {
    closeSync(fd)
  } catch {
    // the content is written (or the file goes)
  }
  if (!written) quietUnlink(path)
  return written ? "held" : "failed"
}

interface Attempt {
  readonly now: number
  readonly got: { readonly held: boolean; readonly body?: string }
}

/** The lock of the state directory in `state`, held as its process; `lockWaitMs`: how long an attempt waits before going ahead. */
export const poolLockOn = (state: StateDirService, lockWaitMs: number): Effect.Effect<StateLock> =>
  Effect.gen(function* () {
    // optional: a reader without a log (the CLI) never fails open, as it never takes the lock
    const log = yield* Effect.serviceOption(AppLog)
    const failOpens = yield* Ref.make(NO_FAIL_OPENS)
    const path = state.dir === undefined ? undefined : join(state.dir, "pool.lock")

    /** Set once a link failed because the file system has no hard links: the lock is then made in place. */
    let linkless = false

    /**
     * Makes `lockPath` holding `body`, never empty: a temporary with the whole content, linked into
     * place (EEXIST while the lock is held), then removed. `held`, `exists` (someone holds it) or
     * `failed`. Where hard links are missing the lock is made in place, empty for the moment between
     * its creation and the write.
     */
    const create = (lockPath: string, body: string): Created => {
      if (linkless) return createWhole(lockPath, body)
      const temp = `${lockPath}.${state.pid}-${randomBytes(8).toString("hex")}.tmp`
      if (createWhole(temp, body) !== "held") return "failed"
      try {
        linkSync(temp, lockPath)
        return "held"
      } catch (e) {
        const code = errno(e)
        if (code === "EEXIST") return "exists"
        if (code === undefined || !NO_HARD_LINKS.has(code)) return "failed"
        linkless = true
        return createWhole(lockPath, body)
      } finally {
        quietUnlink(temp)
      }
    }

    /** One attempt: `true` when this process now holds the lock. */
    const tryAcquire = (lockPath: string, now: number): { held: boolean; body?: string } => {
      const body = JSON.stringify({ pid: state.pid, startTime: state.startTime, host: state.host, at: now })
      for (let round = 0; round < 2; round++) {
        const created = create(lockPath, body)
        if (created === "held") return { held: true, body }
        if (created === "failed") return { held: false }
        let stale: boolean
        try {
          const st = statSync(lockPath)
          let content
          // not a regular file, too large or unreadable: only its mtime counts
          const read = readTextFile(lockPath, STATE_FILE_MAX_BYTES)
          content = read._tag === "Text" ? decodeLockFile(read.text) : undefined
          const local = content !== undefined && content.host === state.host ? content : undefined
          stale = isLockStale(
            {
              content,
              mtimeMs: st.mtimeMs,
              pidState: local !== undefined ? pidState(local.pid) : undefined,
              liveStartTime: local !== undefined && local.startTime !== null ? startTimeOf(local.pid) : undefined
            },
            state.host,
            now
          )
        } catch {
          stale = false // vanished between open and stat: just retry
          continue
        }
        if (!stale) return { held: false }
        try {
          unlinkSync(lockPath)
        } catch {
          // someone else took it over first
        }
      }
      return { held: false }
    }

    const release = (lockPath: string, body: string) =>
      Effect.sync(() => {
        try {
          const read = readTextFile(lockPath, STATE_FILE_MAX_BYTES)
          if (read._tag === "Text" && read.text === body) unlinkSync(lockPath)
        } catch {
          // gone already
        }
      })

    /** Polls every LOCK_POLL_MS until held or `waitMs` has passed; the count bound only backs up the clock. */
    const pollsFor = (waitMs: number) => Schedule.spaced(LOCK_POLL_MS).pipe(Schedule.intersect(Schedule.recurs(Math.ceil(waitMs / LOCK_POLL_MS))))
    const acquire = (lockPath: string, waitMs: number): Effect.Effect<string | undefined> =>
      Effect.gen(function* () {
        const start = yield* Clock.currentTimeMillis
        const attempt = Effect.map(Clock.currentTimeMillis, (now): Attempt => ({ now, got: tryAcquire(lockPath, now) }))
        const last = yield* Effect.repeat(attempt, { schedule: Schedule.identity<Attempt>().pipe(Schedule.zipLeft(pollsFor(waitMs))), until: ({ now, got }) => got.held || now - start >= waitMs })
        return last.got.held ? last.got.body : undefined
      })

    const withLock = <A, E, R>(body: Effect.Effect<A, E, R>, waitMs: number = lockWaitMs): Effect.Effect<A, E, R> => {
      if (path === undefined) return body
      return Effect.acquireUseRelease(
        acquire(path, waitMs).pipe(
          Effect.tap((held) =>
            held !== undefined
              ? Effect.void
              : Effect.gen(function* () {
                  const now = yield* Clock.currentTimeMillis
                  const warning = yield* Ref.modify(failOpens, (m) => {
                    const next = failOpen(m, now)
                    return [next.warning, next.memory]
                  })
                  if (warning !== undefined && Option.isSome(log)) yield* log.value.log("warn", warning)
                })
          )
        ),
        () => body,
        (held) => (held === undefined ? Effect.void : release(path, held))
      )
    }

    return { withLock, failOpens: Effect.map(Ref.get(failOpens), (m) => m.count) }
  })
