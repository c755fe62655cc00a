/** `ocpool permits` and `ocpool permits release` in-process through `runCli`, over a fake permit table and fixed machine facts. */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { hostname } from "node:os"
import { runCli } from "../../src/cli/app.js"
import { captureStream, type CliIo } from "../../src/cli/output.js"
import { machineText } from "../../src/cli/permits.js"
import { FACTS, makeFake, type Fake } from "./permitsFake.js"

const ocpool = (fake: Fake, args: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const io: CliIo & { stdout: { text: string }; stderr: { text: string } } = { stdout: captureStream(false), stderr: captureStream(false), stdinIsTTY: false, env: {} }
    const code = yield* fake.provide(runCli(["node", "ocpool", ...args], io))
    return { code, stdout: io.stdout.text, stderr: io.stderr.text }
  })

const MACHINE =
  "machine: 2 CPUs (cgroup v2 cpu.max 200000 100000; 8 online), memory 3.5 GiB available of 16.0 GiB limit 8.0 GiB (/sys/fs/cgroup/memory.max), pressure cpu 1.25% memory n/a (some avg10), cgroup v2"

/** heavy (capacity 2): p-1 held by a session 90 s, p-2 held by a gone holder, p-3 queued (paused) 12 s. */
const busy = () => {
  const fake = makeFake([
    { name: "heavy", capacity: 2, source: "auto: 4 CPUs (online), halved → 2" },
    { name: "gpu", capacity: 1, source: "option" }
  ])
  const now = Date.now()
  fake.hold("heavy", 1, "npm test", { pid: 101, host: hostname(), session: "ses_abc" }, now - 90_000)
  fake.hold("heavy", 1, "cargo build", { pid: 202, host: "ci-7", via: "run", group: { pgid: 202, startToken: "5" } }, now - 5000)
  fake.hold("heavy", 2, "docker build\u001b[31m .", { pid: 303, host: hostname(), via: "mcp" }, now - 12_000)
  fake.markGone("p-2")
  fake.patch("p-3", { pausedAt: now - 1000 })
  return fake
}

describe("ocpool permits", () => {
  it.effect("US-51 each budget: capacity and its source, used, holders (pid, host, session, weight, reason, since), the queue in order; then the machine line", () =>
    Effect.gen(function* () {
      const r = yield* ocpool(busy(), ["permits"])
      expect(r.code).toBe(0)
      expect(r.stderr).toBe("")
      const lines = r.stdout.trimEnd().split("\n")
      expect(lines[0]).toBe("heavy: 2/2 used, 2 holders, 1 waiting  (capacity auto: 4 CPUs (online), halved → 2)")
      expect(lines[1]).toBe("  holders:")
      expect(lines[2]).toMatch(/^ {4}p-1  pid 101  session ses_abc  via plugin  weight 1  since 1m3\ds  npm test$/)
      expect(lines[3]).toMatch(/^ {4}p-2  pid 202 on ci-7 group 202  via run  weight 1  since [45]s  cargo build  \[holder gone\]$/)
      expect(lines[4]).toBe("  queue:")
      expect(lines[5]).toMatch(/^ {4}1\. p-3  pid 303  via mcp  weight 2  waiting 1[23]s  docker build \.  \[paused: client away\]$/)
      expect(lines[6]).toBe("gpu: 0/1 used, 0 holders, 0 waiting  (capacity option)")
      expect(lines[7]).toBe(MACHINE)
      expect(lines).toHaveLength(8)
    })
  )

  it.effect("US-51 --json: one object with every budget's holders and queue (positions) and the machine facts", () =>
    Effect.gen(function* () {
      const r = yield* ocpool(busy(), ["permits", "--json", "--state-dir", "/tmp/none"])
      expect(r.code).toBe(0)
      expect(r.stdout.trimEnd().split("\n")).toHaveLength(1)
      const out = JSON.parse(r.stdout)
      expect(Object.keys(out)).toEqual(["budgets", "machine"])
      expect(out.machine).toEqual({ ...FACTS, pressure: { cpu: 1.25, memory: null } })
      const [heavy, gpu] = out.budgets
      expect(gpu).toEqual({ name: "gpu", capacity: 1, source: "option", used: 0, holders: [], queue: [] })
      expect(heavy).toMatchObject({ name: "heavy", capacity: 2, used: 2 })
      expect(heavy.holders.map((h: { id: string }) => h.id)).toEqual(["p-1", "p-2"])
      expect(heavy.holders[0]).toMatchObject({ id: "p-1", pid: 101, session: "ses_abc", via: "plugin", group: null, weight: 1, reason: "npm test", gone: false, paused: false })
      expect(heavy.holders[0].heldMs).toBeGreaterThanOrEqual(90_000)
      expect(heavy.holders[1]).toMatchObject({ id: "p-2", host: "ci-7", group: 202, gone: true })
      expect(heavy.queue).toEqual([
        expect.objectContaining({ id: "p-3", position: 1, pid: 303, weight: 2, via: "mcp", paused: true, grantedAt: null, waitingMs: expect.any(Number) })
      ])
    })
  )

  it.effect("US-51 an empty table: each budget's line and the machine line", () =>
    Effect.gen(function* () {
      const r = yield* ocpool(makeFake(), ["permits"])
      expect(r).toEqual({ code: 0, stdout: `heavy: 0/2 used, 0 holders, 0 waiting  (capacity option)\n${MACHINE}\n`, stderr: "" })
    })
  )

  it("US-51 the machine line without the facts the kernel lacks; the online count said once", () => {
    expect(machineText({ ...FACTS, cpus: { cpus: 4, online: 4, source: "online" } })).toMatch(/^machine: 4 CPUs \(online\), memory /)
    expect(
      machineText({ cpus: { cpus: 1.5, online: 4, source: "cgroup v1 cfs_quota_us 150000 / cfs_period_us 100000" }, memory: { totalBytes: undefined, availableBytes: undefined, limitBytes: undefined, limitSource: undefined }, cgroup: { version: "v1", paths: [] }, pressure: { cpu: undefined, memory: undefined } })
    ).toBe("machine: 1.50 CPUs (cgroup v1 cfs_quota_us 150000 / cfs_period_us 100000; 4 online), memory n/a, pressure n/a, cgroup v1")
  })

  it.effect("US-51 release: a gone holder's permit is freed (exit 0); a live one is not without --force (exit 1), is with it (exit 0); an unknown id exit 1", () =>
    Effect.gen(function* () {
      const fake = busy()
      expect(yield* ocpool(fake, ["permits", "release", "p-2"])).toEqual({ code: 0, stdout: "released p-2 (holder pid 202 (group 202) is gone)\n", stderr: "" })
      expect(yield* ocpool(fake, ["permits", "release", "p-1"])).toEqual({ code: 1, stdout: "p-1 is held by pid 101 (alive): not released; --force to free it anyway\n", stderr: "" })
      expect(yield* ocpool(fake, ["permits", "release", "p-3"])).toEqual({ code: 1, stdout: "p-3 is queued by pid 303 (alive): not released; --force to free it anyway\n", stderr: "" })
      expect(fake.entries().map((e) => e.id)).toEqual(["p-1", "p-3"])
      expect(yield* ocpool(fake, ["permits", "release", "p-1", "--force"])).toEqual({ code: 0, stdout: "released p-1 (forced; holder pid 101 was alive)\n", stderr: "" })
      expect(yield* ocpool(fake, ["permits", "release", "p-9"])).toEqual({ code: 1, stdout: "no permit p-9\n", stderr: "" })
      expect(yield* ocpool(fake, ["permits", "release", "p-2"])).toEqual({ code: 1, stdout: "no permit p-2\n", stderr: "" })
      expect(fake.calls).toEqual(["free p-2 false", "free p-1 false", "free p-3 false", "free p-1 true", "free p-9 false", "free p-2 false"])
    })
  )

  it.effect("US-51 release --json: one object saying what was found", () =>
    Effect.gen(function* () {
      const fake = busy()
      const gone = yield* ocpool(fake, ["permits", "release", "p-2", "--json"])
      expect(gone.code).toBe(0)
      expect(JSON.parse(gone.stdout)).toEqual({ id: "p-2", released: true, forced: false, holder: { pid: 202, host: "ci-7", group: 202, gone: true } })
      const alive = yield* ocpool(fake, ["permits", "release", "--json", "p-1"])
      expect(alive.code).toBe(1)
      expect(JSON.parse(alive.stdout)).toEqual({ id: "p-1", released: false, forced: false, holder: { pid: 101, host: hostname(), group: null, gone: false } })
      const none = yield* ocpool(fake, ["permits", "release", "p-9", "--json"])
      expect(none.code).toBe(1)
      expect(JSON.parse(none.stdout)).toEqual({ id: "p-9", released: false, forced: false, holder: null })
    })
  )

  it.effect("US-51 release without an id, or an unknown flag: exit 2, nothing freed", () =>
    Effect.gen(function* () {
      const fake = busy()
      expect((yield* ocpool(fake, ["permits", "release"])).code).toBe(2)
      expect((yield* ocpool(fake, ["permits", "--bogus"])).code).toBe(2)
      expect(fake.calls).toEqual([])
    })
  )
})
