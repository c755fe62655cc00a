import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import {
  autoCapacity,
  cpuLimitOf,
  describeCapacity,
  effectiveCpus,
  parseCfsQuota,
  parseCpuList,
  parseCpuMax,
  parseMemoryLimitV1,
  parseMemoryMax,
  parseMeminfo,
  parseProcCgroup,
  parsePsiSomeAvg10
} from "../../../src/core/machine/facts.js"

const MEMINFO = `MemTotal:       24683548 kB
MemFree:        22713776 kB
MemAvailable:   24205212 kB
Buffers:          104416 kB
Cached:          1283436 kB
SwapCached:            0 kB
`

const PSI_CPU = `some avg10=39.48 avg60=16.14 avg300=8.74 total=10931510849
full avg10=0.00 avg60=0.00 avg300=0.00 total=0
`

describe("machine facts: CPUs", () => {
  it("US-51 cgroup v2 cpu.max: a quota, max, or nothing understood", () => {
    expect(parseCpuMax("max 100000\n")).toBe("max")
    expect(parseCpuMax("200000 100000\n")).toEqual({ quota: 200000, period: 100000 })
    expect(parseCpuMax("150000 100000")).toEqual({ quota: 150000, period: 100000 })
    for (const bad of ["", "max", "200000", "abc 100000", "200000 0", "0 100000", "-5 100000", "1 2 3", "1e5 100000"]) expect(parseCpuMax(bad), bad).toBeUndefined()
  })

  it("US-51 cgroup v1 cfs quota and period: -1 is no limit", () => {
    expect(parseCfsQuota("-1\n", "100000\n")).toBe("max")
    expect(parseCfsQuota("50000\n", "100000\n")).toEqual({ quota: 50000, period: 100000 })
    for (const [q, p] of [["", "100000"], ["50000", "0"], ["x", "100000"], ["0", "100000"], ["-2", "100000"]] as const) expect(parseCfsQuota(q, p)).toBeUndefined()
  })

  it("US-51 the online CPU list", () => {
    expect(parseCpuList("0-3\n")).toBe(4)
    expect(parseCpuList("0-3,6,8-9")).toBe(7)
    expect(parseCpuList("0")).toBe(1)
    for (const bad of ["", "3-1", "a", "0-", "0,,1"]) expect(parseCpuList(bad), bad).toBeUndefined()
  })

  it("US-51 effective CPUs: the smallest limit, never above the online count, fractions kept", () => {
    const v2 = cpuLimitOf({ quota: 400000, period: 100000 }, "v2")
    expect(effectiveCpus(8, [v2])).toEqual({ cpus: 4, online: 8, source: "cgroup v2 cpu.max 400000 100000" })
    expect(effectiveCpus(8, [cpuLimitOf({ quota: 150000, period: 100000 }, "v2")]).cpus).toBe(1.5)
    expect(effectiveCpus(8, [v2, cpuLimitOf({ quota: 200000, period: 100000 }, "v1")])).toEqual({ cpus: 2, online: 8, source: "cgroup v1 cfs_quota_us 200000 / cfs_period_us 100000" })
    expect(effectiveCpus(2, [v2])).toEqual({ cpus: 2, online: 2, source: "online; cgroup v2 cpu.max 400000 100000 allows 4" })
    expect(effectiveCpus(6, [])).toEqual({ cpus: 6, online: 6, source: "online" })
    expect(effectiveCpus(0, []).cpus).toBe(1)
  })

  it("US-51 auto capacity is half the effective CPUs, at least 1, and described in one line", () => {
    expect([0.5, 1, 1.5, 2, 3, 4, 7.9, 64].map(autoCapacity)).toEqual([1, 1, 1, 1, 1, 2, 3, 32])
    expect(describeCapacity(effectiveCpus(8, [cpuLimitOf({ quota: 400000, period: 100000 }, "v2")]))).toBe("auto: 4 CPUs (cgroup v2 cpu.max 400000 100000), halved → 2")
    expect(describeCapacity(effectiveCpus(1, []))).toBe("auto: 1 CPU (online), halved → 1")
    expect(describeCapacity(effectiveCpus(8, [cpuLimitOf({ quota: 250000, period: 150000 }, "v1")]))).toBe(
      "auto: 1.67 CPUs (cgroup v1 cfs_quota_us 250000 / cfs_period_us 150000), halved → 1"
    )
  })

  it.prop("US-51 for any quota and core count: 1 <= capacity, effective <= online", [fc.integer({ min: 1, max: 10_000_000 }), fc.integer({ min: 1, max: 1_000_000 }), fc.integer({ min: 1, max: 512 })], ([quota, period, online]) => {
    const eff = effectiveCpus(online, [cpuLimitOf({ quota, period }, "v2")])
    expect(eff.cpus).toBeLessThanOrEqual(online)
    expect(eff.cpus).toBeGreaterThan(0)
    expect(autoCapacity(eff.cpus)).toBeGreaterThanOrEqual(1)
  })
})

describe("machine facts: memory, pressure, cgroup membership", () => {
  it("US-51 memory.max (v2) and memory.limit_in_bytes (v1, huge is none)", () => {
    expect(parseMemoryMax("max\n")).toBe("max")
    expect(parseMemoryMax("4294967296\n")).toBe(4294967296)
    expect(parseMemoryMax("lots")).toBeUndefined()
    expect(parseMemoryLimitV1("9223372036854771712\n")).toBe("max")
    expect(parseMemoryLimitV1("2147483648\n")).toBe(2147483648)
    expect(parseMemoryLimitV1("")).toBeUndefined()
  })

  it("US-51 /proc/meminfo: MemTotal and MemAvailable in bytes", () => {
    expect(parseMeminfo(MEMINFO)).toEqual({ totalBytes: 24683548 * 1024, availableBytes: 24205212 * 1024 })
    expect(parseMeminfo("MemTotal: 1000 kB\n")).toEqual({ totalBytes: 1024000, availableBytes: undefined })
    expect(parseMeminfo("garbage")).toBeUndefined()
  })

  it("US-51 PSI: avg10 of the some line", () => {
    expect(parsePsiSomeAvg10(PSI_CPU)).toBe(39.48)
    expect(parsePsiSomeAvg10("some avg10=0.12 avg60=0.05 avg300=0.00 total=12345\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")).toBe(0.12)
    expect(parsePsiSomeAvg10("full avg10=3.00 avg60=0.00 avg300=0.00 total=0\n")).toBeUndefined()
    expect(parsePsiSomeAvg10("")).toBeUndefined()
  })

  it("US-51 /proc/self/cgroup: the v2 path and each v1 controller's path", () => {
    expect(parseProcCgroup("0::/user.slice/user-1000.slice/session-3.scope\n")).toEqual({ v2: "/user.slice/user-1000.slice/session-3.scope", v1: {} })
    const hybrid = "9:name=systemd:/\n4:memory:/process_api/e90877\n2:cpu,cpuacct:/ci/job\n0::/\n"
    expect(parseProcCgroup(hybrid)).toEqual({ v2: "/", v1: { "name=systemd": "/", memory: "/process_api/e90877", cpu: "/ci/job", cpuacct: "/ci/job" } })
    expect(parseProcCgroup("")).toBeUndefined()
    expect(parseProcCgroup("not a cgroup line")).toBeUndefined()
  })

  it.prop("US-51 every parser is total: any text gives a value or undefined, never a throw", [fc.oneof(fc.string(), fc.fullUnicodeString())], ([text]) => {
    parseCpuMax(text)
    parseCfsQuota(text, text)
    parseCpuList(text)
    parseMemoryMax(text)
    parseMemoryLimitV1(text)
    parseMeminfo(text)
    parsePsiSomeAvg10(text)
    parseProcCgroup(text)
  })
})
