/** `ocpool quota` and the quota section of `ocpool status` (issue 12, US-48), run as the built CLI over a temporary state dir. */
import { beforeAll, describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type QuotaFigures, type QuotaRecord } from "../../src/core/quota/record.js"
import { learnedIn, seedLearned, seedQuota, seedSql } from "../support/stateDb.js"
import { countSuccess, learnLimit, type GroupBudget } from "../../src/core/limits/learned.js"
import { cli, ensureBuilt } from "./builtCli.js"

const tmp = () => mkdtempSync(join(tmpdir(), "ocpool-quota-"))
const stateDir = (...records: ReadonlyArray<QuotaRecord>) => {
  const dir = tmp()
  chmodSync(dir, 0o700)
  seedQuota(dir, records)
  return dir
}

const ocpool = (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: "utf8", timeout: 30_000, env: { ...process.env, XDG_CONFIG_HOME: tmp(), OCPOOL_STATE_DIR: "", NO_COLOR: "1", ...env } })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

const MIN = 60_000
const now = Date.now()
const B: QuotaRecord = { model: "fakeB/pool-b", requests: { remaining: 3, limit: 100, resetAt: now + 10 * MIN }, tokens: { remaining: 9000, limit: 10_000 }, seenAt: now - 12_000 }
const A: QuotaRecord = { model: "fakeA/pool-a", tokens: { remaining: 50 }, seenAt: now - 1000 }
const STALE: QuotaRecord = { model: "fakeC/gone", requests: { remaining: 0, limit: 10, resetAt: now - 1000 }, seenAt: now - 5 * MIN }
/** `r` moved by the time since this file was loaded: a test that checks "seen 12s ago" must not count the CLI runs before it. */
const redate = (r: QuotaRecord): QuotaRecord => {
  const by = Date.now() - now
  const move = (f: QuotaFigures): QuotaFigures => (f.resetAt === undefined ? f : { ...f, resetAt: f.resetAt + by })
  return { ...r, ...(r.requests !== undefined ? { requests: move(r.requests) } : {}), ...(r.tokens !== undefined ? { tokens: move(r.tokens) } : {}), seenAt: r.seenAt + by }
}

beforeAll(() => ensureBuilt("quota --help"), 120_000)

describe("ocpool quota", () => {
  it("US-48 no records: one line saying where quota comes from, exit 0; --json has no models", () => {
    const dir = stateDir()
    expect(ocpool(["quota", "--state-dir", dir])).toEqual({ code: 0, stdout: "no quota seen yet (quota is read from providers' rate-limit headers, and learned from their 429s)\n", stderr: "" })
    expect(ocpool(["quota", "--json", "--state-dir", join(dir, "absent")])).toEqual({ code: 0, stdout: '{"models":[],"learned":[]}\n', stderr: "" })
  })

  it("US-48 one line per non-stale record, sorted by model; the stale one is left out", () => {
    const dir = stateDir(redate(B), redate(A), STALE)
    const r = ocpool(["quota", "--state-dir", dir])
    expect(r.code).toBe(0)
    expect(r.stderr).toBe("")
    const lines = r.stdout.trimEnd().split("\n")
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatch(/^fakeA\/pool-a {2}tokens 50 {2}seen \ds ago$/)
    expect(lines[1]).toMatch(/^fakeB\/pool-b {2}requests 3\/100 \(3%\) reset \d\d:\d\d:\d\dZ \(in (9m5\d|10m00)s\) {2}tokens 9000\/10000 \(90%\) {2}seen 1\ds ago$/)
  })

  it("US-48 --json: models with requests/tokens objects (absent figures null) or null", () => {
    const r = ocpool(["quota", "--json", "--state-dir", stateDir(B, A)])
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual({
      models: [
        { model: "fakeA/pool-a", requests: null, tokens: { remaining: 50, limit: null, resetAt: null }, seenAt: A.seenAt },
        { model: "fakeB/pool-b", requests: { remaining: 3, limit: 100, resetAt: B.requests!.resetAt }, tokens: { remaining: 9000, limit: 10_000, resetAt: null }, seenAt: B.seenAt }
      ],
      learned: []
    })
  })

  it("US-48 a garbage record is ignored; an unreadable state dir is exit 1 with one line, no stack", () => {
    const dir = stateDir(A)
    seedSql(dir, "INSERT INTO quota (model, body, seen_at) VALUES ('junk', '{not json', 0)")
    expect(ocpool(["quota", "--json", "--state-dir", dir]).stdout).toContain('"model":"fakeA/pool-a"')
    const file = join(tmp(), "file")
    writeFileSync(file, "x")
    const r = ocpool(["quota", "--state-dir", file])
    expect(r.code).toBe(1)
    expect(r.stdout).toBe("")
    expect(r.stderr).toMatch(/^ocpool: state dir .* unreadable: not a directory\n$/)
  })

  it("US-48 garbage records (issue 18): a reset thousands of years out or a seenAt in the future is stale (left out); a limit of 0 or huge figures never print Infinity%", () => {
    const t = Date.now()
    const far: QuotaRecord = { model: "fakeR/far", requests: { remaining: 3, limit: 100, resetAt: 8.64e15 }, seenAt: t - 1000 }
    const future: QuotaRecord = { model: "fakeF/future", tokens: { remaining: 5 }, seenAt: t + 3_600_000 }
    const zero: QuotaRecord = { model: "fakeZ/zero", requests: { remaining: 5, limit: 0, resetAt: t + 10 * MIN }, seenAt: t - 1000 }
    const huge: QuotaRecord = { model: "fakeH/huge", requests: { remaining: 1.5e308, limit: 1.6e308 }, tokens: { remaining: 7, limit: 10 }, seenAt: t - 1000 }
    const dir = stateDir(far, future, zero, huge)
    const r = ocpool(["quota", "--state-dir", dir])
    expect(r.code).toBe(0)
    expect(r.stderr).toBe("")
    expect(r.stdout).not.toMatch(/Infinity|NaN/)
    const lines = r.stdout.trimEnd().split("\n")
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatch(/^fakeH\/huge {2}tokens 7\/10 \(70%\) {2}seen \d+s ago$/)
    expect(lines[1]).toMatch(/^fakeZ\/zero {2}requests 5 reset \d\d:\d\d:\d\dZ \(in \d+m\d\ds\) {2}seen \d+s ago$/)
    const json = JSON.parse(ocpool(["quota", "--json", "--state-dir", stateDir(far, future, huge)]).stdout) as { models: Array<{ model: string; requests: unknown }> }
    expect(json.models).toEqual([{ model: "fakeH/huge", requests: null, tokens: { remaining: 7, limit: 10, resetAt: null }, seenAt: huge.seenAt }])
  })

  it("US-48 --help names the flags and the exit codes; the usage lists quota", () => {
    const help = ocpool(["quota", "--help"])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain("--json")
    expect(help.stdout).toContain("--state-dir DIR")
    expect(help.stdout.replace(/\s+/g, " ")).toContain("Exit 0; 1 if the state directory is unreadable")
    const usage = ocpool(["quota", "--bogus"])
    expect(usage.code).toBe(2)
    expect(usage.stderr).toContain("usage: ocpool quota [--json] [--state-dir DIR]")
  })
})

describe("ocpool status with quota records", () => {
  it("US-48 a quota: section after the slots and a quota array in --json, only when records exist", () => {
    const pool = join(tmp(), "pool.txt")
    writeFileSync(pool, "fakeA/pool-a 1\nfakeB/pool-b 1\n")
    const empty = stateDir(STALE)
    const without = ocpool(["status", "--pool", pool, "--state-dir", empty])
    expect(without.code).toBe(0)
    expect(without.stdout).not.toContain("quota:")
    expect(Object.hasOwn(JSON.parse(ocpool(["status", "--json", "--pool", pool, "--state-dir", empty]).stdout) as object, "quota")).toBe(false)

    const dir = stateDir(redate(B))
    const text = ocpool(["status", "--pool", pool, "--state-dir", dir])
    expect(text.code).toBe(0)
    const lines = text.stdout.trimEnd().split("\n")
    const at = lines.indexOf("quota:")
    expect(lines[at - 1]).toMatch(/^ {2}2\. fakeB\/pool-b/)
    expect(lines[at + 1]).toMatch(/^ {2}fakeB\/pool-b {2}requests 3\/100 \(3%\) reset .* seen 1\ds ago$/)
    const json = JSON.parse(ocpool(["status", "--json", "--pool", pool, "--state-dir", dir]).stdout) as { quota: Array<{ model: string }>; warnings: Array<string> }
    expect(json.quota.map((q) => q.model)).toEqual(["fakeB/pool-b"])
    // a quota file is a state file: the directory stays trusted
    expect(json.warnings.filter((w) => w.includes("not trusted"))).toEqual([])
  })

  it("US-48 the quota: section never shows a reset thousands of years out or a record seen in the future (issue 18)", () => {
    const pool = join(tmp(), "pool.txt")
    writeFileSync(pool, "fakeA/pool-a 1\nfakeB/pool-b 1\n")
    const far: QuotaRecord = { ...B, requests: { remaining: 3, limit: 100, resetAt: 8.64e15 }, seenAt: Date.now() - 1000 }
    const future: QuotaRecord = { ...A, seenAt: Date.now() + 3_600_000 }
    const dir = stateDir(far, future)
    const text = ocpool(["status", "--pool", pool, "--state-dir", dir])
    expect(text.code).toBe(0)
    expect(text.stdout).not.toContain("quota:")
    expect(Object.hasOwn(JSON.parse(ocpool(["status", "--json", "--pool", pool, "--state-dir", stateDir(far, future)]).stdout) as object, "quota")).toBe(false)
  })
})

describe("ocpool quota: learned budgets (issue 35)", () => {
  /** A group that learned 20 a minute (seen twice) and has used 5 of this minute. */
  const learned = (group: string, model: string): GroupBudget => {
    const t = Date.now()
    const minute = Math.floor(t / MIN) * MIN
    let b: GroupBudget | undefined
    for (const start of [minute - 2 * MIN, minute - MIN]) {
      for (let i = 0; i < 20; i++) b = countSuccess(b, group, start + i)
      b = learnLimit(b, group, start + 30_000, start + MIN)
    }
    for (let i = 0; i < 5; i++) b = countSuccess(b, group, minute + i)
    expect(groupOfModel(model)).toBe(group)
    return b!
  }
  /** What `learned` counted today (UTC): this minute's 5, and 20 for each of the two minutes before that is still today (a run just after midnight counts fewer). */
  const usedToday = (): number => {
    const minute = Math.floor(Date.now() / MIN) * MIN
    const day = Math.floor(minute / 86_400_000) * 86_400_000
    return 5 + [minute - 2 * MIN, minute - MIN].filter((start) => start >= day).length * 20
  }
  const groupOfModel = (m: string) => (m.endsWith(":free") ? `${m.split("/")[0]}/*:free` : m)

  it("US-48 a learned budget shows beside the stated ones, marked learned with how sure it is and the counts; --json has it under learned", () => {
    const dir = stateDir(redate(A))
    seedLearned(dir, [learned("orf/*:free", "orf/a:free")])
    const r = ocpool(["quota", "--state-dir", dir])
    expect(r.code).toBe(0)
    const lines = r.stdout.trimEnd().split("\n")
    expect(lines[0]).toMatch(/^fakeA\/pool-a /)
    const today = usedToday()
    expect(lines[1]).toMatch(new RegExp(`^orf/\\*:free {2}requests 15/20 a minute \\(learned, seen 2 times\\) reset \\d\\d:\\d\\d:00Z \\(in \\d+s\\) {2}used 5 this minute, ${today} today$`))
    const json = JSON.parse(ocpool(["quota", "--json", "--state-dir", dir]).stdout) as { learned: Array<Record<string, unknown>> }
    expect(json.learned).toEqual([expect.objectContaining({ group: "orf/*:free", window: "minute", limit: 20, remaining: 15, samples: 2, used: { minute: 5, day: today } })])
  })

  it("US-48 ocpool status shows a learned budget in its quota: section and under learned in --json", () => {
    const pool = join(tmp(), "pool.txt")
    writeFileSync(pool, "orf/a:free 1\norf/b:free 1\n")
    const dir = stateDir()
    seedLearned(dir, [learned("orf/*:free", "orf/a:free")])
    const lines = ocpool(["status", "--pool", pool, "--state-dir", dir]).stdout.trimEnd().split("\n")
    const at = lines.indexOf("quota:")
    expect(at).toBeGreaterThan(0)
    expect(lines[at + 1]).toMatch(/^ {2}orf\/\*:free {2}requests 15\/20 a minute \(learned, seen 2 times\) /)
    const json = JSON.parse(ocpool(["status", "--json", "--pool", pool, "--state-dir", dir]).stdout) as { learned?: Array<{ group: string }> }
    expect(json.learned?.map((l) => l.group)).toEqual(["orf/*:free"])
  })

  it("US-48 quota forget: a model names its group; the record goes for every process; one with nothing learned is exit 1; no name is exit 2", () => {
    const dir = stateDir()
    seedLearned(dir, [learned("orf/*:free", "orf/a:free"), learned("zen/big", "zen/big")])
    expect(ocpool(["quota", "forget", "orf/b:free", "--state-dir", dir])).toEqual({ code: 0, stdout: "forgot the learned budget of orf/*:free\n", stderr: "" })
    expect(learnedIn(dir)).toEqual(["zen/big"])
    expect(ocpool(["quota", "forget", "orf/*:free", "--state-dir", dir])).toEqual({ code: 1, stdout: "orf/*:free had nothing learned\n", stderr: "" })
    const none = ocpool(["quota", "forget", "--state-dir", dir])
    expect(none.code).toBe(2)
    expect(none.stderr).toContain("name the groups or models to forget, or --all")
    expect(ocpool(["quota", "forget", "--all", "--json", "--state-dir", dir])).toEqual({ code: 0, stdout: '{"forgotten":["zen/big"],"unknown":[]}\n', stderr: "" })
    expect(learnedIn(dir)).toEqual([])
  })
})
