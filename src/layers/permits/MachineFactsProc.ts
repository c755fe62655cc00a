/**
 * MachineFacts from /proc and /sys/fs/cgroup (Linux). The cgroup of this process is read from
 * `/proc/self/cgroup`; its limits are read in its directory and every parent up to the mount (the
 * smallest wins), under the v2 mount when it has controllers, else under the v1 `cpu,cpuacct`/`cpu` and
 * `memory` mounts. A path not visible here (a container without a cgroup namespace) leaves the mount's
 * own files. Never fails: a missing or unreadable file is a fact left undefined. `root` lets tests lay
 * out fake trees.
 */
import { Effect, Layer } from "effect"
import { existsSync, readFileSync } from "node:fs"
import { availableParallelism } from "node:os"
import { join, posix } from "node:path"
import {
  cpuLimitOf,
  effectiveCpus,
  parseCfsQuota,
  parseCpuMax,
  parseMemoryLimitV1,
  parseMemoryMax,
  parseMeminfo,
  parseProcCgroup,
  parsePsiSomeAvg10,
  type CpuLimit,
  type ProcCgroup
} from "../../core/machine/facts.js"
import { MachineFacts, type MachineFactsView } from "../../services/permits/MachineFacts.js"
import { spanned } from "../hotPath.js"

const readText = (path: string): string | undefined => {
  try {
    return readFileSync(path, "utf8")
  } catch {
    return undefined
  }
}

/** The cgroup directories of `path` under `mount`, deepest first, up to the mount itself; those that exist. */
const dirsUp = (root: string, mount: string, path: string): Array<string> => {
  const dirs: Array<string> = []
  let p = posix.normalize(`/${path}`)
  for (;;) {
    const rel = p === "/" ? mount : `${mount}${p}`
    if (existsSync(join(root, rel))) dirs.push(rel)
    if (p === "/") return dirs
    p = posix.dirname(p)
  }
}

const V1_CPU_MOUNTS = ["/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpuacct,cpu"]

interface Limits {
  readonly version: "v2" | "v1" | "none"
  readonly paths: ReadonlyArray<string>
  readonly cpu: ReadonlyArray<CpuLimit>
  readonly memory: { readonly bytes: number; readonly source: string } | undefined
}

const limitsOf = (root: string, cg: ProcCgroup | undefined): Limits => {
  const at = (rel: string) => readText(join(root, rel))
  const paths = new Set<string>()
  const cpu: Array<CpuLimit> = []
  let memory: { bytes: number; source: string } | undefined
  const memoryLimit = (bytes: number | "max" | undefined, source: string) => {
    if (typeof bytes === "number" && (memory === undefined || bytes < memory.bytes)) memory = { bytes, source }
  }
  if (existsSync(join(root, "/sys/fs/cgroup/cgroup.controllers"))) {
    for (const dir of dirsUp(root, "/sys/fs/cgroup", cg?.v2 ?? "/")) {
      const cpuMax = at(`${dir}/cpu.max`)
      const memMax = at(`${dir}/memory.max`)
      if (cpuMax !== undefined || memMax !== undefined) paths.add(dir)
      const q = cpuMax === undefined ? undefined : parseCpuMax(cpuMax)
      if (q !== undefined && q !== "max") cpu.push(cpuLimitOf(q, "v2"))
      if (memMax !== undefined) memoryLimit(parseMemoryMax(memMax), `${dir}/memory.max`)
    }
    return { version: "v2", paths: [...paths], cpu, memory }
  }
  let v1 = false
  const cpuMount = V1_CPU_MOUNTS.find((m) => existsSync(join(root, m)))
  if (cpuMount !== undefined) {
    v1 = true
    for (const dir of dirsUp(root, cpuMount, cg?.v1.cpu ?? "/")) {
      const quota = at(`${dir}/cpu.cfs_quota_us`)
      const period = at(`${dir}/cpu.cfs_period_us`)
      if (quota === undefined || period === undefined) continue
      paths.add(dir)
      const q = parseCfsQuota(quota, period)
      if (q !== undefined && q !== "max") cpu.push(cpuLimitOf(q, "v1"))
    }
  }
  if (existsSync(join(root, "/sys/fs/cgroup/memory"))) {
    v1 = true
    for (const dir of dirsUp(root, "/sys/fs/cgroup/memory", cg?.v1.memory ?? "/")) {
      const limit = at(`${dir}/memory.limit_in_bytes`)
      if (limit === undefined) continue
      paths.add(dir)
      memoryLimit(parseMemoryLimitV1(limit), `${dir}/memory.limit_in_bytes`)
    }
  }
  return { version: v1 ? "v1" : "none", paths: [...paths], cpu, memory }
}

/** The facts as of now, read under `root` with `online` cores. */
export const readMachineFacts = (root: string, online: number): MachineFactsView => {
  const cgText = readText(join(root, "/proc/self/cgroup"))
  const limits = limitsOf(root, cgText === undefined ? undefined : parseProcCgroup(cgText))
  const meminfoText = readText(join(root, "/proc/meminfo"))
  const meminfo = meminfoText === undefined ? undefined : parseMeminfo(meminfoText)
  const psi = (name: string) => {
    const text = readText(join(root, "/proc/pressure", name))
    return text === undefined ? undefined : parsePsiSomeAvg10(text)
  }
  return {
    cpus: effectiveCpus(online, limits.cpu),
    memory: {
      totalBytes: meminfo?.totalBytes,
      availableBytes: meminfo?.availableBytes,
      limitBytes: limits.memory?.bytes,
      limitSource: limits.memory?.source
    },
    cgroup: { version: limits.version, paths: limits.paths },
    pressure: { cpu: psi("cpu"), memory: psi("memory") }
  }
}

/** The online core count as Node sees it (affinity included). */
const onlineCpus = (): number => {
  try {
    return availableParallelism()
  } catch {
    return 1
  }
}

/** MachineFacts of this machine; `root` (default `/`) and `online` for tests over a fake tree. */
export const MachineFactsProc = (root: string = "/", online: () => number = onlineCpus) =>
  Layer.succeed(
    MachineFacts,
    MachineFacts.of({
      read: spanned(
        Effect.sync(() => readMachineFacts(root, online())),
        "MachineFacts.read"
      )
    })
  )
