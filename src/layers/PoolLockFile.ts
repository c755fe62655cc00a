/**
 * `pool.lock` (SPEC §5.3): created with O_CREAT|O_EXCL (mode 0600); a stale lock (dead holder, reused
 * pid, older than 5 s, or unreadable and old) is taken over at once; otherwise it is polled every
 * 10 ms up to `lockWaitMs`, then the work goes ahead without it (warned at most once a minute, counted).
 */
import { Clock, Effect, Layer, Ref, Schedule } from "effect"
import { closeSync, openSync, statSync, unlinkSync, writeSync } from "node:fs"
import { join } from "node:path"
import { isLockStale } from "../core/claims.js"
import { STATE_FILE_MAX_BYTES } from "../core/limits.js"
import { decodeLockFile } from "../core/lockFile.js"
import { AppLog } from "../services/AppLog.js"
import { PoolLock } from "../services/PoolLock.js"
import { StateDir } from "../services/StateDir.js"
import { readTextFile } from "./safeRead.js"
import { pidState, startTimeOf } from "./proc.js"

const LOCK_POLL_MS = 10

interface Attempt {
  readonly now: number
  readonly got: { readonly held: boolean; readonly body?: string }
}
const WARN_EVERY_MS = 60_000

export const PoolLockFile = (lockWaitMs: number) =>
  Layer.effect(
    PoolLock,
    Effect.gen(function* () {
      const state = yield* StateDir
      const log = yield* AppLog
      const failOpens = yield* Ref.make(0)
      const lastWarn = yield* Ref.make(Number.NEGATIVE_INFINITY)
      const path = state.dir === undefined ? undefined : join(state.dir, "pool.lock")

      /** One attempt: `true` when this process now holds the lock. */
      const tryAcquire = (lockPath: string, now: number): { held: boolean; body?: string } => {
        const body = JSON.stringify({ pid: state.pid, startTime: state.startTime, host: state.host, at: now })
        for (let round = 0; round < 2; round++) {
          try {
            const fd = openSync(lockPath, "wx", 0o600)
            writeSync(fd, body)
            closeSync(fd)
            return { held: true, body }
          } catch (e) {
            if ((e as NodeJS.ErrnoException).code !== "EEXIST") return { held: false }
          }
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

      /** Polls every LOCK_POLL_MS until held or `lockWaitMs` has passed; the count bound only backs up the clock. */
      const polls = Schedule.spaced(LOCK_POLL_MS).pipe(Schedule.intersect(Schedule.recurs(Math.ceil(lockWaitMs / LOCK_POLL_MS))))
      const acquire = (lockPath: string): Effect.Effect<string | undefined> =>
        Effect.gen(function* () {
          const start = yield* Clock.currentTimeMillis
          const attempt = Effect.map(Clock.currentTimeMillis, (now): Attempt => ({ now, got: tryAcquire(lockPath, now) }))
          const last = yield* Effect.repeat(attempt, { schedule: Schedule.identity<Attempt>().pipe(Schedule.zipLeft(polls)), until: ({ now, got }) => got.held || now - start >= lockWaitMs })
          return last.got.held ? last.got.body : undefined
        })

      const withLock = <A, E, R>(body: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
        if (path === undefined) return body
        return Effect.acquireUseRelease(
          acquire(path).pipe(
            Effect.tap((held) =>
              held !== undefined
                ? Effect.void
                : Effect.gen(function* () {
                    yield* Ref.update(failOpens, (n) => n + 1)
                    const now = yield* Clock.currentTimeMillis
                    if (now - (yield* Ref.get(lastWarn)) >= WARN_EVERY_MS) {
                      yield* Ref.set(lastWarn, now)
                      yield* log.log("warn", "pool lock busy; routing without it")
                    }
                  })
            )
          ),
          () => body,
          (held) => (held === undefined ? Effect.void : release(path, held))
        )
      }

      return { withLock, failOpens: Ref.get(failOpens) }
    })
  )
