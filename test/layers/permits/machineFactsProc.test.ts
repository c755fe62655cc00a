/** MachineFactsProc on this machine, and over fake /proc + /sys/fs/cgroup trees (v2, v1, none) written into temp dirs. */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { availableParallelism, tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { autoCapacity, describeCapacity } from "../../../src/core/machine/facts.js"
import { MachineFactsProc } from "../../../src/layers/permits/MachineFactsProc.js"
import { MachineFactsTest } from "../../../src/layers/permits/MachineFactsTest.js"
import { MachineFacts, type MachineFactsView } from "../../../src/services/permits/MachineFacts.js"

const roots: Array<string> = []
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true })
})

/** A temp root with `files` (path → text) written under it. */
const fakeRoot = (files: Record<string, string>): string => {
  const root = mkdtempSync(join(tmpdir(), "ocpool-facts-"))
  roots.push(root)
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  return root
}

const MEMINFO = "MemTotal:       16384000 kB\nMemFree:         8000000 kB\nMemAvailable:   12000000 kB\n"
const PSI = (avg10: string) => `some avg10=${avg10} avg60=0.10 avg300=0.05 total=123456\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n`

const readAt = (root: string, online: number) => Effect.provide(MachineFacts.pipe(Effect.flatMap((f) => f.read)), MachineFactsProc(root, () => online))

describe("MachineFactsProc", () => {
  it.live("US-51 on this machine: 1 <= effective CPUs <= online, capacity >= 1, memory read", () =>
    Effect.gen(function* () {
      const facts = yield* MachineFacts.pipe(Effect.flatMap((f) => f.read), Effect.provide(MachineFactsProc()))
      expect(facts.cpus.online).toBe(availableParallelism())
      expect(facts.cpus.cpus).toBeGreaterThan(0)
      expect(facts.cpus.cpus).toBeLessThanOrEqual(facts.cpus.online)
      expect(autoCapacity(facts.cpus.cpus)).toBeGreaterThanOrEqual(1)
      expect(describeCapacity(facts.cpus)).toMatch(/^auto: [\d.]+ CPUs? \(.+\), halved → \d+$/)
      expect(facts.memory.totalBytes).toBeGreaterThan(0)
    })
  )

  it.live("US-51 cgroup v2: the process's cpu.max and memory.max, the smallest up the tree, and PSI", () =>
    Effect.gen(function* () {
      const root = fakeRoot({
        "proc/self/cgroup": "0::/ci.slice/job-7.scope\n",
        "proc/meminfo": MEMINFO,
        "proc/pressure/cpu": PSI("12.50"),
        "proc/pressure/memory": PSI("0.25"),
        "sys/fs/cgroup/cgroup.controllers": "cpuset cpu io memory pids\n",
        "sys/fs/cgroup/ci.slice/cpu.max": "300000 100000\n",
        "sys/fs/cgroup/ci.slice/memory.max": "max\n",
        "sys/fs/cgroup/ci.slice/job-7.scope/cpu.max": "max 100000\n",
        "sys/fs/cgroup/ci.slice/job-7.scope/memory.max": "2147483648\n"
      })
      const facts = yield* readAt(root, 8)
      expect(facts).toEqual({
        cpus: { cpus: 3, online: 8, source: "cgroup v2 cpu.max 300000 100000" },
        memory: { totalBytes: 16384000 * 1024, availableBytes: 12000000 * 1024, limitBytes: 2147483648, limitSource: "/sys/fs/cgroup/ci.slice/job-7.scope/memory.max" },
        cgroup: { version: "v2", paths: ["/sys/fs/cgroup/ci.slice/job-7.scope", "/sys/fs/cgroup/ci.slice"] },
        pressure: { cpu: 12.5, memory: 0.25 }
      } satisfies MachineFactsView)
      expect(describeCapacity(facts.cpus)).toBe("auto: 3 CPUs (cgroup v2 cpu.max 300000 100000), halved → 1")
    })
  )

  it.live("US-51 cgroup v2 in a container without a cgroup namespace: the mount's own cpu.max, fractions kept", () =>
    Effect.gen(function* () {
      const root = fakeRoot({
        "proc/self/cgroup": "0::/docker/0123abcd\n",
        "sys/fs/cgroup/cgroup.controllers": "cpu memory\n",
        "sys/fs/cgroup/cpu.max": "150000 100000\n"
      })
      const facts = yield* readAt(root, 4)
      expect(facts.cpus).toEqual({ cpus: 1.5, online: 4, source: "cgroup v2 cpu.max 150000 100000" })
      expect(facts.cgroup).toEqual({ version: "v2", paths: ["/sys/fs/cgroup"] })
      expect(facts.memory).toEqual({ totalBytes: undefined, availableBytes: undefined, limitBytes: undefined, limitSource: undefined })
      expect(facts.pressure).toEqual({ cpu: undefined, memory: undefined })
    })
  )

  it.live("US-51 cgroup v1: cfs quota over period under cpu,cpuacct, memory.limit_in_bytes (huge is none), capped at online", () =>
    Effect.gen(function* () {
      const root = fakeRoot({
        "proc/self/cgroup": "11:memory:/runner/42\n4:cpu,cpuacct:/runner/42\n1:name=systemd:/\n",
        "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us": "-1\n",
        "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": "100000\n",
        "sys/fs/cgroup/cpu,cpuacct/runner/42/cpu.cfs_quota_us": "200000\n",
        "sys/fs/cgroup/cpu,cpuacct/runner/42/cpu.cfs_period_us": "100000\n",
        "sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n",
        "sys/fs/cgroup/memory/runner/42/memory.limit_in_bytes": "4294967296\n"
      })
      const facts = yield* readAt(root, 16)
      expect(facts.cpus).toEqual({ cpus: 2, online: 16, source: "cgroup v1 cfs_quota_us 200000 / cfs_period_us 100000" })
      expect(facts.memory.limitBytes).toBe(4294967296)
      expect(facts.memory.limitSource).toBe("/sys/fs/cgroup/memory/runner/42/memory.limit_in_bytes")
      expect(facts.cgroup).toEqual({
        version: "v1",
        paths: ["/sys/fs/cgroup/cpu,cpuacct/runner/42", "/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/memory/runner/42", "/sys/fs/cgroup/memory"]
      })
      // a quota above the online count is capped
      expect((yield* readAt(root, 1)).cpus).toEqual({ cpus: 1, online: 1, source: "online; cgroup v1 cfs_quota_us 200000 / cfs_period_us 100000 allows 2" })
    })
  )

  it.live("US-51 cgroup v1 with a separate cpu mount and no limit: the online count", () =>
    Effect.gen(function* () {
      const root = fakeRoot({
        "proc/self/cgroup": "2:cpu:/\n",
        "sys/fs/cgroup/cpu/cpu.cfs_quota_us": "-1\n",
        "sys/fs/cgroup/cpu/cpu.cfs_period_us": "100000\n"
      })
      const facts = yield* readAt(root, 6)
      expect(facts.cpus).toEqual({ cpus: 6, online: 6, source: "online" })
      expect(facts.cgroup).toEqual({ version: "v1", paths: ["/sys/fs/cgroup/cpu"] })
    })
  )

  it.live("US-51 no cgroup files, no /proc: every fact undefined, the online count, never a failure", () =>
    Effect.gen(function* () {
      const root = fakeRoot({ "proc/self/cgroup": "garbage\n", "proc/pressure/cpu": "nonsense" })
      const facts = yield* readAt(root, 3)
      expect(facts).toEqual({
        cpus: { cpus: 3, online: 3, source: "online" },
        memory: { totalBytes: undefined, availableBytes: undefined, limitBytes: undefined, limitSource: undefined },
        cgroup: { version: "none", paths: [] },
        pressure: { cpu: undefined, memory: undefined }
      } satisfies MachineFactsView)
      // bad file texts are undefined too
      const bad = fakeRoot({ "sys/fs/cgroup/cgroup.controllers": "", "sys/fs/cgroup/cpu.max": "lots\n", "sys/fs/cgroup/memory.max": "?\n" })
      const badFacts = yield* readAt(bad, 2)
      expect(badFacts.cpus).toEqual({ cpus: 2, online: 2, source: "online" })
      expect(badFacts.memory.limitBytes).toBeUndefined()
    })
  )

  it.effect("US-51 MachineFactsTest answers the view it was given", () =>
    Effect.gen(function* () {
      const view: MachineFactsView = {
        cpus: { cpus: 4, online: 8, source: "cgroup v2 cpu.max 400000 100000" },
        memory: { totalBytes: 1, availableBytes: 1, limitBytes: undefined, limitSource: undefined },
        cgroup: { version: "v2", paths: ["/sys/fs/cgroup"] },
        pressure: { cpu: 1, memory: undefined }
      }
      expect(yield* MachineFacts.pipe(Effect.flatMap((f) => f.read), Effect.provide(MachineFactsTest(view)))).toEqual(view)
    })
  )
})
