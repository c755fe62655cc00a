/**
 * Claim files in the state directory (SPEC §5.1–5.2), the file backend's claims part: each process
 * writes its own `claims.<pid>.json` and reads the others', dropping those whose holder is gone
 * (core/claims.ts `judgeClaimFile`: the holder rules of core/state/holder.ts, the file's mtime +
 * DEAD_FILE_MS its lease, pid and start token checked on this host). Synchronous file calls wrapped in
 * `Effect.try`: this runs inside the pool lock on every spawn, where asynchronous file APIs measured 4×
 * slower (SPEC §5.3). A peer file whose size and mtime are unchanged since the last read is not re-read.
 */
import { Effect, type Scope } from "effect"
import { readdirSync, statSync } from "node:fs"
import { join } from "node:path"
import { CLAIM_FILE, claimFileName, decodeClaimFile, encodeClaimFile, type ClaimFile } from "../../core/claimFile.js"
import { judgeClaimFile } from "../../core/claims.js"
import type { ProcessSnapshot } from "../../core/status.js"
import type { OwnClaims } from "../../services/state/SharedState.js"
import type { StateDirService } from "../../services/state/StateDir.js"
import { writeFileAtomic } from "../fs/atomicWrite.js"
import { decodedFileCache, quietUnlink } from "../fs/fileCache.js"
import { pidState, startTimeCache } from "./proc.js"
import { RecordsError, type ClaimRecords } from "./sharedStateOver.js"

/** How long a peer's start token is trusted before `/proc` is read again (pid reuse is seen this late). */
const START_TOKEN_TTL_MS = 1_000

/** Instance numbers in use in this process (opencode runs one plugin instance per project directory). */
const instancesInUse = new Set<number>()

export const takeInstance = Effect.sync(() => {
  let n = 0
  while (instancesInUse.has(n)) n++
  instancesInUse.add(n)
  return n
})

/** The claims part over `state` (its directory, trust and identity); the scope holds this instance's file name. */
export const claimFilesOn = (state: StateDirService): Effect.Effect<ClaimRecords, never, Scope.Scope> =>
  Effect.gen(function* () {
    const dir = state.dir
    // Other processes' files are deleted only in a trusted directory (SPEC §2.1); elsewhere they are skipped.
    const clean = state.trusted === true
    const instance = yield* Effect.acquireRelease(takeInstance, (n) => Effect.sync(() => void instancesInUse.delete(n)))
    const own = claimFileName(state.pid, instance)
    const files = decodedFileCache<ClaimFile | undefined>(decodeClaimFile)
    const startTime = startTimeCache(START_TOKEN_TTL_MS)
    // a file left under this process's own name by an earlier run with a reused pid (its name is this
    // process's, so it goes even in an untrusted directory, like the file removed on dispose)
    if (dir !== undefined && instance === 0) quietUnlink(join(dir, own))

    const readPeers = (now: number) =>
      Effect.try({
        try: (): ReadonlyArray<ProcessSnapshot> => {
          if (dir === undefined) return []
          const out: Array<ProcessSnapshot> = []
          for (const name of readdirSync(dir)) {
            const isTmp = name.endsWith(".tmp")
            if (!isTmp && (name === own || !CLAIM_FILE.test(name))) continue
            const path = join(dir, name)
            if (isTmp) {
              let mtimeMs: number
              try {
                mtimeMs = statSync(path).mtimeMs
              } catch {
                continue
              }
              if (clean && judgeClaimFile({ name, isTmp, mtimeMs }, state.host, now) === "delete") quietUnlink(path)
              continue
            }
            const cached = files.read(name, path)
            if (cached === undefined) continue
            const st = cached.stat
            const file = cached.value
            const local = file !== undefined && file.host === state.host
            const verdict = judgeClaimFile(
              {
                name,
                isTmp,
                mtimeMs: st.mtimeMs,
                content: file === undefined ? undefined : { pid: file.pid, host: file.host, startTime: file.startTime },
                pidState: local ? pidState(file.pid) : undefined,
                liveStartTime: local && file.startTime !== null ? startTime(file.pid, now) : undefined
              },
              state.host,
              now
            )
            if (verdict === "delete") {
              if (clean) {
                quietUnlink(path)
                files.forget(name)
              }
            } else if (verdict === "read" && file !== undefined) {
              out.push({ pid: file.pid, host: file.host, reaped: file.reaped, claims: file.claims })
            }
          }
          return out
        },
        catch: (e) => new RecordsError({ reason: `reading claims: ${String(e)}` })
      })

    const publish = (ownClaims: OwnClaims, now: number) =>
      Effect.try({
        try: () => {
          if (dir === undefined) return
          const path = join(dir, own)
          const body = encodeClaimFile({ pid: state.pid, startTime: state.startTime, host: state.host, writtenAt: now, reaped: ownClaims.reaped, claims: ownClaims.claims })
          writeFileAtomic(path, body)
        },
        catch: (e) => new RecordsError({ reason: `writing ${own}: ${String(e)}` })
      })

    const removeOwn = Effect.sync(() => {
      if (dir !== undefined) quietUnlink(join(dir, own))
    })

    return { readPeers, publish, removeOwn }
  })
