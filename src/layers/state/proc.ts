/** Process facts for the dead-holder rules (SPEC §5.2): liveness by signal 0, the Linux start token, and whether a process group lives (permits). */
import { readdirSync, readFileSync } from "node:fs"
import { hostname } from "node:os"
import { hostIdOf } from "../../core/state/fleet.js"

/** A pid a process can have: `kill(0, 0)` would signal this process group and `kill(-1, 0)` every process. */
const isProcessId = (pid: number): boolean => Number.isSafeInteger(pid) && pid > 0

/** `kill(pid, 0)`: ESRCH is dead, EPERM counts as alive; a pid no process can have is dead. */
export const pidState = (pid: number): "alive" | "dead" => {
  if (!isProcessId(pid)) return "dead"
  try {
    process.kill(pid, 0)
    return "alive"
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM" ? "alive" : "dead"
  }
}

/** Field 22 of /proc/<pid>/stat, counted after the closing `)` of the command name; null elsewhere. */
export const startTimeOf = (pid: number): string | null => {
  if (!isProcessId(pid)) return null
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    // fields[0] is field 3 (state), so field 22 is fields[19]
    return fields[19] ?? null
  } catch {
    return null
  }
}

/**
 * Start tokens cached for up to `ttlMs` per pid: the critical section checks every peer on every pick,
 * and a `/proc` read per peer is most of its cost. A dead pid is still seen at once (`kill(pid, 0)` is
 * not cached); only a pid reused by a new process is seen up to `ttlMs` later. Each entry lives a
 * random half to whole `ttlMs`, so the peers read together at a cold pick are read again at different
 * picks: a busy pool pays one read now and then, never all 32 in one pick (a 4–5 ms spawn, bench:route).
 */
export const startTimeCache = (ttlMs: number, random: () => number = Math.random, read: (pid: number) => string | null = startTimeOf) => {
  const cache = new Map<number, { readonly until: number; readonly token: string | null }>()
  return (pid: number, now: number): string | null => {
    const hit = cache.get(pid)
    if (hit !== undefined && now < hit.until) return hit.token
    const token = read(pid)
    if (cache.size > 4096) cache.clear()
    cache.set(pid, { until: now + ttlMs * (0.5 + random() / 2), token })
    return token
  }
}

/** Fields 3 (state), 5 (pgrp) and 22 (start time) of a /proc/<pid>/stat line, or undefined when it does not parse. */
const statFields = (stat: string): { readonly state: string; readonly pgrp: number; readonly start: string | undefined } | undefined => {
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  const state = fields[0]
  const pgrp = Number(fields[2])
  return state === undefined || !Number.isSafeInteger(pgrp) ? undefined : { state, pgrp, start: fields[19] }
}

/** Whether start token `a` is not before `b` (both decimal clock ticks; one that does not parse never excludes). */
const notBefore = (a: string | undefined, b: string): boolean => {
  if (a === undefined || !/^\d+$/.test(a) || !/^\d+$/.test(b)) return true
  return BigInt(a) >= BigInt(b)
}

/**
 * Linux: whether a live (not zombie) process is in group `pgid`, read from /proc/[0-9]*\/stat. With the
 * leader's start token known, a process that started before the leader is not counted, and a process
 * now running under the pid `pgid` with another start token means the group's number was reused (Linux
 * never reuses a pid while a group still holds it): the group is gone. `undefined` when /proc cannot be
 * listed.
 */
export const groupAliveProc = (pgid: number, leaderStartToken: string | null): boolean | undefined => {
  let names: Array<string>
  try {
    names = readdirSync("/proc")
  } catch {
    return undefined
  }
  let member = false
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${name}/stat`, "utf8")
    } catch {
      continue // exited meanwhile
    }
    const f = statFields(stat)
    if (f === undefined) continue
    if (leaderStartToken !== null && Number(name) === pgid && f.start !== undefined && f.start !== leaderStartToken) return false
    if (f.pgrp !== pgid || f.state === "Z") continue
    if (leaderStartToken === null || notBefore(f.start, leaderStartToken)) member = true
  }
  return member
}

/** Elsewhere: `kill(-pgid, 0)`: ESRCH is no process in the group, EPERM counts as alive. */
export const groupAliveBySignal = (pgid: number): boolean => {
  if (!isProcessId(pgid) || pgid === 1) return false
  try {
    process.kill(-pgid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** Whether any process of group `pgid` lives (the holder of an `ocpool run` permit, issue 21). */
export const groupAlive = (pgid: number, leaderStartToken: string | null): boolean => {
  if (!isProcessId(pgid) || pgid === 1) return false
  if (process.platform === "linux") {
    const seen = groupAliveProc(pgid, leaderStartToken)
    if (seen !== undefined) return seen
  }
  return groupAliveBySignal(pgid)
}

/** This host's id among the hosts sharing a state (issue 22): `OCPOOL_HOST_ID`, else the hostname. */
export const ownHostId = (): string => hostIdOf(process.env, hostname())
