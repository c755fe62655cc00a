/** The shared-state contract over the file backend: processes on one temporary, trusted state directory; and how it judges a holder. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { chmodSync, mkdtempSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { AppLogMemory } from "../../../src/layers/opencode/AppLogMemory.js"
import { startTimeOf } from "../../../src/layers/state/proc.js"
import { sharedStateLayer } from "../../../src/layers/state/sharedStateLayer.js"
import { SharedState } from "../../../src/services/state/SharedState.js"
import { StateDir, type StateDirService } from "../../../src/services/state/StateDir.js"
import { sharedStateContract } from "./sharedState.contract.js"

/** Pids that run (this test's processes), and one that does not: the highest Linux allows is 4194304. */
const LIVE_PIDS = [process.pid, process.ppid, 1]
const DEAD_PID = 4_194_303

const stateDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "ocpool-shared-"))
  chmodSync(dir, 0o700)
  return dir
}

/** The port of the process `as` names, on `dir`. */
const portAs = (dir: string, as: Omit<StateDirService, "dir" | "trusted">) =>
  sharedStateLayer({ backend: "file", lockWaitMs: 5_000 }).pipe(Layer.provide(Layer.merge(Layer.succeed(StateDir, { dir, trusted: true, ...as }), AppLogMemory([]))))

sharedStateContract({
  name: "file",
  make: () => {
    const dir = stateDir()
    const port = (pid: number) => portAs(dir, { pid, host: hostname(), startTime: null })
    return { process: (n) => port(LIVE_PIDS[n - 1]!), dead: () => port(DEAD_PID) }
  }
})

describe("the file backend judges a holder by host, pid and start token (SPEC §5.2)", () => {
  const claim = (now: number) => ({ key: "k", base: "explore", slot: 1, model: "a/x", acquiredAt: now, heartbeatAt: now, ownerSession: "s", targetSession: null, abortAttempts: 0, abortPending: false, abortOrigin: null, abortInFlight: false, endedInFlight: false })
  const publishAs = (dir: string, as: Omit<StateDirService, "dir" | "trusted">, now: number) =>
    Effect.scoped(Effect.flatMap(SharedState, (p) => p.commit(now, { claims: { claims: [claim(now)], reaped: 0 }, cool: [], uncool: [] })).pipe(Effect.provide(portAs(dir, as))))
  const peersSeen = (dir: string, now: number) =>
    Effect.scoped(Effect.flatMap(SharedState, (p) => p.read(now, { claims: true })).pipe(Effect.provide(portAs(dir, { pid: process.pid, host: hostname(), startTime: null })))).pipe(
      Effect.map((snap) => snap.peers.map((x) => x.pid))
    )

  it.live.skipIf(startTimeOf(process.ppid) === null)("US-41 a holder on this host whose pid now runs under another start token (a reused pid) is gone; under its own token it holds", () => {
    const now = Date.now()
    const reused = stateDir()
    const same = stateDir()
    return Effect.gen(function* () {
      yield* publishAs(reused, { pid: process.ppid, host: hostname(), startTime: "1" }, now)
      yield* publishAs(same, { pid: process.ppid, host: hostname(), startTime: startTimeOf(process.ppid) }, now)
      expect(yield* peersSeen(reused, now)).toEqual([])
      expect(yield* peersSeen(same, now)).toEqual([process.ppid])
    })
  })

  it.live("US-41 a holder on another host is judged by its lease alone: a pid that is dead here does not end it", () => {
    const now = Date.now()
    const dir = stateDir()
    return Effect.gen(function* () {
      yield* publishAs(dir, { pid: DEAD_PID, host: "elsewhere", startTime: null }, now)
      expect(yield* peersSeen(dir, now)).toEqual([DEAD_PID])
    })
  })
})
