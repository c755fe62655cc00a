/** Whether a process group lives (the holder of an `ocpool run` permit): real processes in a group of their own. */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { groupAlive, groupAliveBySignal, groupAliveProc, startTimeCache, startTimeOf } from "../../../src/layers/state/proc.js"

const linux = process.platform === "linux"

/** `sh -c script` as the leader of a group of its own, its start token read before anything can reap it. */
const group = (script: string) => {
  const child = spawn("sh", ["-c", script], { detached: true, stdio: "ignore" })
  const pgid = child.pid!
  // read synchronously: the child cannot be reaped before the event loop turns
  const token = startTimeOf(pgid)
  const exited = Effect.async<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) resume(Effect.void)
    else child.once("exit", () => resume(Effect.void))
  })
  const kill = Effect.sync(() => {
    try {
      process.kill(-pgid, "SIGKILL")
    } catch {
      // already gone
    }
  })
  return { pgid, token, exited, kill }
}

/** Polls `check` every 50 ms until it is false or `ms` passed; the time it took. */
const untilFalse = (check: () => boolean, ms: number) =>
  Effect.gen(function* () {
    const start = Date.now()
    while (check() && Date.now() - start < ms) yield* Effect.sleep("50 millis")
    return Date.now() - start
  })

describe("groupAlive", () => {
  it.live("US-51 a group lives while a background process of it does, after its leader exited, and not once that process exited", () => {
    const g = group("sleep 2 & exit 0")
    return Effect.gen(function* () {
      yield* g.exited
      expect(groupAlive(g.pgid, g.token)).toBe(true)
      expect(groupAliveBySignal(g.pgid)).toBe(true)
      if (linux) expect(groupAliveProc(g.pgid, g.token)).toBe(true)
      const took = yield* untilFalse(() => groupAlive(g.pgid, g.token), 6_000)
      expect(groupAlive(g.pgid, g.token)).toBe(false)
      // signal 0 still reaches a zombie until its new parent reaps it: /proc is looked at first where there is one
      yield* untilFalse(() => groupAliveBySignal(g.pgid), 3_000)
      expect(groupAliveBySignal(g.pgid)).toBe(false)
      // the sleep ran its 2 s (less the time the leader took to exit)
      expect(took).toBeGreaterThan(1_000)
    }).pipe(Effect.ensuring(g.kill))
  }, 15_000)

  it.live.skipIf(!linux)("US-51 a reused group number is not the group: its leader's pid under another start token, or members that started before the leader", () => {
    const g = group("sleep 5")
    return Effect.gen(function* () {
      expect(g.token).not.toBeNull()
      expect(groupAliveProc(g.pgid, g.token)).toBe(true)
      expect(groupAliveProc(g.pgid, null)).toBe(true)
      // the pid runs another process than the leader that was recorded
      expect(groupAliveProc(g.pgid, String(BigInt(g.token!) - 1n))).toBe(false)
    }).pipe(Effect.ensuring(g.kill))
  })

  it.live.skipIf(!linux)("US-51 with the leader gone, only members that started at or after the recorded leader count", () => {
    const g = group("sleep 3 & exit 0")
    return Effect.gen(function* () {
      yield* g.exited
      expect(groupAliveProc(g.pgid, g.token)).toBe(true)
      expect(groupAliveProc(g.pgid, String(BigInt(g.token!) + 1_000_000n))).toBe(false)
    }).pipe(Effect.ensuring(g.kill))
  })

  it("US-51 a pgid no group can have is no group (0 would be this process's own group, 1 and below every process)", () => {
    for (const pgid of [0, -1, 1, 1.5, Number.NaN]) expect(groupAlive(pgid, null)).toBe(false)
    expect(groupAlive(4_194_303, null)).toBe(false)
  })
})

describe("startTimeCache", () => {
  it("US-41 start tokens read together expire apart: a busy pick never reads every peer's /proc file at once", () => {
    const reads: Array<number> = []
    const draws = [0, 0.5, 0.999, 0.25]
    let k = 0
    const cached = startTimeCache(1_000, () => draws[k++ % draws.length]!, (pid) => (reads.push(pid), `t${pid}`))
    // a cold pick reads its three peers
    for (const pid of [11, 12, 13]) expect(cached(pid, 0)).toBe(`t${pid}`)
    expect(reads).toEqual([11, 12, 13])
    // each entry lives a random half to whole TTL (500, 750, ~1000 ms): the peers are read again one at a time
    const readAt = (at: number) => {
      reads.length = 0
      for (const pid of [11, 12, 13]) cached(pid, at)
      return [...reads]
    }
    expect(readAt(499)).toEqual([])
    expect(readAt(500)).toEqual([11])
    expect(readAt(749)).toEqual([])
    expect(readAt(750)).toEqual([12])
    expect(readAt(998)).toEqual([])
    expect(readAt(1_000)).toEqual([13])
  })
})
