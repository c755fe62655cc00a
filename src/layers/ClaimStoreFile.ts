/**
 * Claim files in the state directory (SPEC §5.1–5.2). Synchronous file calls wrapped in `Effect.try`:
 * this runs inside the pool lock on every spawn, where asynchronous file APIs measured 4× slower
 * (SPEC §5.3). A peer file whose size and mtime are unchanged since the last read is not re-read.
 */
import { Effect, Layer } from "effect"
import { readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { CLAIM_FILE, claimFileName, decodeClaimFile, encodeClaimFile, type ClaimFile } from "../core/claimFile.js"
import { judgeClaimFile } from "../core/claims.js"
import type { ProcessSnapshot } from "../core/status.js"
import { ClaimStore, ClaimStoreError, type OwnClaims } from "../services/ClaimStore.js"
import { StateDir } from "../services/StateDir.js"
import { pidState, startTimeOf } from "./proc.js"

const quietUnlink = (path: string): void => {
  try {
    unlinkSync(path)
  } catch {
    // already gone
  }
}

export const ClaimStoreFile = Layer.effect(
  ClaimStore,
  Effect.gen(function* () {
    const state = yield* StateDir
    const dir = state.dir
    const own = claimFileName(state.pid)
    const cache = new Map<string, { size: number; mtimeMs: number; file: ClaimFile | undefined }>()
    if (dir !== undefined) quietUnlink(join(dir, own))

    const readPeers = (now: number) =>
      Effect.try({
        try: (): ReadonlyArray<ProcessSnapshot> => {
          if (dir === undefined) return []
          const out: Array<ProcessSnapshot> = []
          for (const name of readdirSync(dir)) {
            const isTmp = name.endsWith(".tmp")
            if (!isTmp && (name === own || !CLAIM_FILE.test(name))) continue
            const path = join(dir, name)
            let st
            try {
              st = statSync(path)
            } catch {
              continue
            }
            if (isTmp) {
              if (judgeClaimFile({ name, isTmp, mtimeMs: st.mtimeMs }, state.host, now) === "delete") quietUnlink(path)
              continue
            }
            let cached = cache.get(name)
            if (cached === undefined || cached.size !== st.size || cached.mtimeMs !== st.mtimeMs) {
              let text: string
              try {
                text = readFileSync(path, "utf8")
              } catch {
                continue
              }
              cached = { size: st.size, mtimeMs: st.mtimeMs, file: decodeClaimFile(text) }
              cache.set(name, cached)
            }
            const file = cached.file
            const local = file !== undefined && file.host === state.host
            const verdict = judgeClaimFile(
              {
                name,
                isTmp,
                mtimeMs: st.mtimeMs,
                content: file === undefined ? undefined : { pid: file.pid, host: file.host, startTime: file.startTime },
                pidState: local ? pidState(file.pid) : undefined,
                liveStartTime: local && file.startTime !== null ? startTimeOf(file.pid) : undefined
              },
              state.host,
              now
            )
            if (verdict === "delete") {
              quietUnlink(path)
              cache.delete(name)
            } else if (verdict === "read" && file !== undefined) {
              out.push({ pid: file.pid, host: file.host, reaped: file.reaped, claims: file.claims })
            }
          }
          return out
        },
        catch: (e) => new ClaimStoreError({ reason: `reading claims: ${String(e)}` })
      })

    const publish = (ownClaims: OwnClaims, now: number) =>
      Effect.try({
        try: () => {
          if (dir === undefined) return
          const path = join(dir, own)
          const body = encodeClaimFile({ pid: state.pid, startTime: state.startTime, host: state.host, writtenAt: now, reaped: ownClaims.reaped, claims: ownClaims.claims })
          writeFileSync(`${path}.tmp`, body, { mode: 0o600 })
          renameSync(`${path}.tmp`, path)
        },
        catch: (e) => new ClaimStoreError({ reason: `writing ${own}: ${String(e)}` })
      })

    const removeOwn = Effect.sync(() => {
      if (dir !== undefined) quietUnlink(join(dir, own))
    })

    return { readPeers, publish, removeOwn }
  })
)
