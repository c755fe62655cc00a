/**
 * The machine's facts as the kernel writes them (issue 21): CPU quota of the cgroup (v2 `cpu.max`, v1
 * `cpu.cfs_quota_us`/`cpu.cfs_period_us`), the online cores, memory limits (v2 `memory.max`, v1
 * `memory.limit_in_bytes`), `/proc/meminfo`, pressure (PSI `some avg10`). Capacity `auto` of a budget
 * comes from the effective CPUs: a CI runner with 2 cores of quota on a 64-core host has 2, not 64.
 * Pure parsers over the files' text, each total: text it does not understand is `undefined`.
 */

/** A CPU quota: `quota` µs of CPU time per `period` µs. */
export interface CpuQuota {
  readonly quota: number
  readonly period: number
}

/** No limit (`max`, `-1`, a v1 limit near 2^63). */
export const NO_LIMIT = "max" as const
export type NoLimit = typeof NO_LIMIT

const INTEGER = /^-?\d+$/

const int = (text: string): number | undefined => {
  const t = text.trim()
  if (!INTEGER.test(t)) return undefined
  const n = Number(t)
  return Number.isSafeInteger(n) ? n : undefined
}

/** cgroup v2 `cpu.max`: `max 100000` (no limit) or `200000 100000`. */
export const parseCpuMax = (text: string): CpuQuota | NoLimit | undefined => {
  const parts = text.trim().split(/\s+/)
  if (parts.length !== 2) return undefined
  const period = int(parts[1]!)
  if (period === undefined || period <= 0) return undefined
  if (parts[0] === "max") return NO_LIMIT
  const quota = int(parts[0]!)
  return quota === undefined || quota <= 0 ? undefined : { quota, period }
}

/** cgroup v1 `cpu.cfs_quota_us` (`-1`: no limit) and `cpu.cfs_period_us`. */
export const parseCfsQuota = (quotaText: string, periodText: string): CpuQuota | NoLimit | undefined => {
  const quota = int(quotaText)
  const period = int(periodText)
  if (quota === undefined || period === undefined || period <= 0) return undefined
  if (quota === -1) return NO_LIMIT
  return quota > 0 ? { quota, period } : undefined
}

/** A CPU list as in `/sys/devices/system/cpu/online` (`0-3,6,8-9`): how many CPUs. */
export const parseCpuList = (text: string): number | undefined => {
  const t = text.trim()
  if (t === "") return undefined
  let n = 0
  for (const part of t.split(",")) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part)
    if (m === null) return undefined
    const from = Number(m[1])
    const to = m[2] === undefined ? from : Number(m[2])
    if (to < from) return undefined
    n += to - from + 1
  }
  return n
}

/** One CPU limit found, with what it came from (`cgroup v2 cpu.max 400000 100000`). */
export interface CpuLimit {
  readonly cpus: number
  readonly source: string
}

export const cpuLimitOf = (q: CpuQuota, version: "v1" | "v2"): CpuLimit => ({
  cpus: q.quota / q.period,
  source: version === "v2" ? `cgroup v2 cpu.max ${q.quota} ${q.period}` : `cgroup v1 cfs_quota_us ${q.quota} / cfs_period_us ${q.period}`
})

/** The CPUs work may use: the smallest limit, never above the online count; fractions kept (1.5). */
export interface EffectiveCpus {
  readonly cpus: number
  readonly online: number
  /** What decided it: a cgroup limit, or `online`. */
  readonly source: string
}

export const effectiveCpus = (online: number, limits: ReadonlyArray<CpuLimit>): EffectiveCpus => {
  const cores = Number.isFinite(online) && online >= 1 ? Math.floor(online) : 1
  let best: CpuLimit | undefined
  for (const l of limits) if (Number.isFinite(l.cpus) && l.cpus > 0 && (best === undefined || l.cpus < best.cpus)) best = l
  if (best === undefined || best.cpus >= cores) return { cpus: cores, online: cores, source: best === undefined ? "online" : `online; ${best.source} allows ${formatCpus(best.cpus)}` }
  return { cpus: best.cpus, online: cores, source: best.source }
}

/** Capacity `auto`: half the effective CPUs, at least 1. */
export const autoCapacity = (cpus: number): number => Math.max(1, Math.floor(cpus / 2))

const formatCpus = (cpus: number): string => (Number.isInteger(cpus) ? String(cpus) : String(Math.round(cpus * 100) / 100))

/** `auto: 4 CPUs (cgroup v2 cpu.max 400000 100000), halved → 2`. */
export const describeCapacity = (eff: EffectiveCpus): string =>
  `auto: ${formatCpus(eff.cpus)} CPU${eff.cpus === 1 ? "" : "s"} (${eff.source}), halved → ${autoCapacity(eff.cpus)}`

/** cgroup v2 `memory.max`: bytes or `max`. */
export const parseMemoryMax = (text: string): number | NoLimit | undefined => {
  if (text.trim() === "max") return NO_LIMIT
  const n = int(text)
  return n === undefined || n < 0 ? undefined : n
}

/** At or above this a v1 limit means none (the kernel writes 2^63 rounded down to a page). */
const V1_UNLIMITED = 2 ** 60

/** cgroup v1 `memory.limit_in_bytes`: bytes; a huge value is no limit. */
export const parseMemoryLimitV1 = (text: string): number | NoLimit | undefined => {
  const t = text.trim()
  if (!/^\d+$/.test(t)) return t === "-1" ? NO_LIMIT : undefined
  const n = Number(t)
  return n >= V1_UNLIMITED ? NO_LIMIT : n
}

export interface Meminfo {
  readonly totalBytes: number | undefined
  readonly availableBytes: number | undefined
}

/** `/proc/meminfo`: MemTotal and MemAvailable (kB) in bytes; undefined when it has neither. */
export const parseMeminfo = (text: string): Meminfo | undefined => {
  const field = (name: string): number | undefined => {
    const m = new RegExp(`^${name}:\\s*(\\d+)\\s*kB\\s*$`, "m").exec(text)
    return m === null ? undefined : Number(m[1]) * 1024
  }
  const totalBytes = field("MemTotal")
  const availableBytes = field("MemAvailable")
  return totalBytes === undefined && availableBytes === undefined ? undefined : { totalBytes, availableBytes }
}

/** A PSI file (`/proc/pressure/cpu`): `avg10` of the `some` line, a percentage. */
export const parsePsiSomeAvg10 = (text: string): number | undefined => {
  const m = /^some\b[^\n]*?\bavg10=(\d+(?:\.\d+)?)(?=\s|$)/m.exec(text)
  return m === null ? undefined : Number(m[1])
}

/** `/proc/self/cgroup`: the v2 path (line `0::/path`) and the v1 path of each controller. */
export interface ProcCgroup {
  readonly v2: string | undefined
  readonly v1: Readonly<Record<string, string>>
}

export const parseProcCgroup = (text: string): ProcCgroup | undefined => {
  let v2: string | undefined
  const v1: Record<string, string> = {}
  let any = false
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue
    const m = /^(\d+):([^:]*):(\/.*)$/.exec(line)
    if (m === null) return undefined
    any = true
    if (m[1] === "0" && m[2] === "") v2 = m[3]!
    else for (const c of m[2]!.split(",")) if (c !== "") v1[c] = m[3]!
  }
  return any ? { v2, v1 } : undefined
}
