/** `ocpool cost` as a user runs it (US-3, SPEC §12.1): the built CLI over databases with opencode 1.18.33's schema. */
import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import Database from "better-sqlite3"
import { Effect, Layer } from "effect"
import { afterEach, beforeAll } from "vitest"
import { measureCost } from "../../src/cli/cost.js"
import { openFailures, withBusyRetry } from "../../src/cli/shared/db.js"
import { CostSqlite } from "../../src/layers/cost/CostSqlite.js"
import { SqliteNode } from "../../src/layers/opencodeDb/SqliteNode.js"
import { costOf } from "../../src/core/prices.js"
import { assistant, assistantData, editedAssistant, rawMessage, type AssistantSeed } from "../cost/costDb.js"
import { OpencodeDb } from "../retention/opencodeDb.js"
import { cli, ensureBuilt } from "./builtCli.js"

const MIN = 60_000
const DAY = 86_400_000

beforeAll(() => ensureBuilt("cost --help"))

const dirs: Array<string> = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

/** The catalog `OPENCODE_MODELS_PATH` names in these tests (models.dev form). */
const CATALOG = {
  fakeA: { models: { "pool-a": { cost: { input: 2, output: 8, cache_read: 0.5, cache_write: 1 } }, "root-a": { cost: { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 } } } },
  fakeB: { models: { "free-b": { cost: { input: 0, output: 0 } }, "no-cost": {} } }
}
const ROOT_PRICE = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }

/**
 * A root on fakeA/root-a (2 calls) that handed work to explore-1 on fakeA/pool-a (2 calls, costs
 * recorded) and to implement-2 on fakeB/free-b (1 call, free), plus an old root call outside 7 days.
 */
const setup = (more?: (o: OpencodeDb, ids: { readonly root: string; readonly kid: string; readonly now: number }) => void) => {
  const dir = mkdtempSync(join(tmpdir(), "ocpool-cost-cli-"))
  dirs.push(dir)
  const db = join(dir, "opencode.db")
  const o = new OpencodeDb(db)
  const now = Date.now()
  const root = o.session({ created: now - 60 * MIN })
  o.message(root, now - 59 * MIN)
  assistant(o, root, now - 58 * MIN, { agent: "build", model: "fakeA/root-a", cost: 0.0105, input: 1500, output: 400 })
  const kid = o.session({ created: now - 50 * MIN, parentId: root })
  assistant(o, kid, now - 49 * MIN, { agent: "explore-1", model: "fakeA/pool-a", cost: 0.0116, input: 5000, output: 200, reasoning: 50, cacheRead: 1000, cacheWrite: 100 })
  assistant(o, kid, now - 48 * MIN, { agent: "explore-1", model: "fakeA/pool-a", cost: 0.0048, input: 2000, output: 100 })
  const kid2 = o.session({ created: now - 40 * MIN, parentId: kid })
  assistant(o, kid2, now - 39 * MIN, { agent: "implement-2", model: "fakeB/free-b", cost: 0, input: 800, output: 90 })
  assistant(o, root, now - 30 * MIN, { agent: "build", model: "fakeA/root-a", cost: 0.0195, input: 2500, output: 800 })
  const old = o.session({ created: now - 20 * DAY })
  assistant(o, old, now - 20 * DAY, { agent: "build", model: "fakeA/root-a", cost: 1, input: 100_000, output: 1000 })
  more?.(o, { root, kid, now })
  o.db.pragma("wal_checkpoint(TRUNCATE)")
  o.close()
  const catalog = join(dir, "models.json")
  writeFileSync(catalog, JSON.stringify(CATALOG))
  mkdirSync(join(dir, "cache"))
  return { dir, db, catalog, env: { OPENCODE_MODELS_PATH: catalog, XDG_CACHE_HOME: join(dir, "cache") } }
}

/** The pooled tokens of `setup` and what they cost on the root's model. */
const POOLED = { input: 7800, output: 390, reasoning: 50, cacheRead: 1000, cacheWrite: 100 }
const BASELINE_COST = costOf(ROOT_PRICE, POOLED)

const ocpool = (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: "utf8", timeout: 30_000, env: { ...process.env, OPENCODE_DB: "", OPENCODE_MODELS_PATH: "", ...env } })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

interface UsageJson {
  readonly calls: number
  readonly tokens: { input: number; output: number; reasoning: number; cacheRead: number; cacheWrite: number }
  readonly cost: number | null
}

describe("ocpool cost", () => {
  it("US-3 the default profile prints a baseline row and a pool row with calls, input, output and cost, from the same messages", () => {
    const s = setup()
    const r = ocpool(["cost", "--db", s.db], s.env)
    expect(r.stderr).toBe("")
    expect(r.code).toBe(0)
    const cost = (usd: number) => `\\$${usd.toFixed(usd < 0.01 ? 4 : 2).replace(".", "\\.")}`
    expect(r.stdout).toMatch(new RegExp(`^baseline +3 +7,800 +390 +50 +1,000 +100 +${cost(BASELINE_COST)}$`, "m"))
    expect(r.stdout).toMatch(/^pool +3 +7,800 +390 +50 +1,000 +100 +\$0\.02$/m)
    // grouped by agent; the 20-day-old call is outside the default 7 days
    expect(r.stdout).toMatch(/^build +2 +4,000 +1,200 +0 +0 +0 +\$0\.03$/m)
    expect(r.stdout).toMatch(/^explore-1 +2 +7,000 +300 +50 +1,000 +100 +\$0\.02$/m)
    expect(r.stdout).toMatch(/^implement-2 +1 +800 +90 +0 +0 +0 +\$0\.00$/m)
    expect(r.stdout).toMatch(/^total +5 +11,800 +1,590 +50 +1,000 +100 +\$0\.05$/m)
    expect(r.stdout).toContain("baseline: the pooled work priced on fakeA/root-a")
    expect(r.stdout).toContain("prices: OPENCODE_MODELS_PATH, then presets/prices.json")
  })

  it("US-3 --json is one object whose pool and baseline rows hold the database's numbers", () => {
    const s = setup()
    const r = ocpool(["cost", "--db", s.db, "--json", "--by", "model"], s.env)
    expect(r.code).toBe(0)
    expect(r.stdout.trim().split("\n")).toHaveLength(1)
    const j = JSON.parse(r.stdout) as {
      since: string
      from: string
      by: string
      groups: ReadonlyArray<UsageJson & { key: string }>
      total: UsageJson
      pool: UsageJson
      baseline: UsageJson & { models: ReadonlyArray<string> }
      unpriced: ReadonlyArray<string>
      priceSources: ReadonlyArray<{ name: string; path: string }>
    }
    expect(Object.keys(j)).toEqual(["since", "from", "to", "by", "groups", "total", "baseline", "pool", "unpriced", "rootsWithoutModel", "unreadableRows", "priceSources"])
    expect(j.since).toBe("7d")
    expect(j.by).toBe("model")
    expect(j.groups.map((g) => [g.key, g.calls, g.cost])).toEqual([
      ["fakeA/pool-a", 2, 0.0164],
      ["fakeA/root-a", 2, 0.03],
      ["fakeB/free-b", 1, 0]
    ])
    expect(j.pool).toEqual({ calls: 3, tokens: POOLED, cost: 0.0164 })
    expect(j.baseline.calls).toBe(3)
    expect(j.baseline.tokens).toEqual(POOLED)
    expect(j.baseline.cost).toBeCloseTo(BASELINE_COST, 10)
    expect(j.baseline.models).toEqual(["fakeA/root-a"])
    expect(j.unpriced).toEqual([])
    expect(j.priceSources[0]).toEqual({ name: "OPENCODE_MODELS_PATH", path: s.catalog })
  })

  it("US-3 --since all takes every message, --by day splits by UTC day", () => {
    const s = setup()
    const all = JSON.parse(ocpool(["cost", "--db", s.db, "--json", "--since", "all"], s.env).stdout) as { total: UsageJson; from: null }
    expect(all.from).toBeNull()
    expect(all.total.calls).toBe(6)
    const days = JSON.parse(ocpool(["cost", "--db", s.db, "--json", "--since", "30d", "--by", "day"], s.env).stdout) as { groups: ReadonlyArray<{ key: string; calls: number }> }
    expect(days.groups.map((g) => g.calls).reduce((a, b) => a + b)).toBe(6)
    expect(days.groups[0]!.key).toBe(new Date(Date.now() - 20 * DAY).toISOString().slice(0, 10))
    // the calls 39 and 30 minutes ago
    const recent = JSON.parse(ocpool(["cost", "--db", s.db, "--json", "--since", "45m"], s.env).stdout) as { total: UsageJson }
    expect(recent.total.calls).toBe(2)
  })

  it("US-3 a pool model priced at zero shows $0.00, not unknown", () => {
    const s = setup()
    const r = ocpool(["cost", "--db", s.db, "--by", "model"], s.env)
    expect(r.stdout).toMatch(/^fakeB\/free-b +1 +800 +90 +0 +0 +0 +\$0\.00$/m)
    expect(r.stdout).not.toContain("unknown")
  })

  it("US-3 --baseline-model naming a model without a price: cost unknown, stderr says so, exit 1", () => {
    const s = setup()
    const r = ocpool(["cost", "--db", s.db, "--baseline-model", "fakeB/no-cost"], s.env)
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(/^baseline +3 +7,800 +390 +50 +1,000 +100 +unknown$/m)
    expect(r.stdout).toMatch(/^pool +3 +7,800 +390 +50 +1,000 +100 +\$0\.02$/m)
    expect(r.stderr).toMatch(/^ocpool: cost unknown: no price for the baseline model fakeB\/no-cost in any price source \(OPENCODE_MODELS_PATH .*, presets\/prices\.json .*\)\n$/)
    const j = ocpool(["cost", "--db", s.db, "--baseline-model", "fakeB/no-cost", "--json"], s.env)
    expect(j.code).toBe(1)
    expect((JSON.parse(j.stdout) as { baseline: UsageJson }).baseline.cost).toBeNull()
  })

  it("US-3 --baseline-model with a price prices the pooled work on it, exit 0", () => {
    const s = setup()
    const r = ocpool(["cost", "--db", s.db, "--json", "--baseline-model", "fakeA/pool-a"], s.env)
    expect(r.code).toBe(0)
    expect((JSON.parse(r.stdout) as { baseline: UsageJson }).baseline.cost).toBeCloseTo(costOf({ input: 2, output: 8, cacheRead: 0.5, cacheWrite: 1 }, POOLED), 10)
  })

  it("US-3 a model no source prices, recorded at 0, shows unknown with a note on stderr, exit 0", () => {
    const s = setup((o, { kid, now }) => assistant(o, kid, now - MIN, { agent: "explore-1", model: "fakeZ/unlisted", cost: 0, input: 10, output: 1 }))
    const r = ocpool(["cost", "--db", s.db, "--by", "model"], s.env)
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^fakeZ\/unlisted +1 +10 +1 +0 +0 +0 +unknown$/m)
    expect(r.stdout).toMatch(/^pool +4 .* unknown$/m)
    expect(r.stdout).toMatch(/^total +6 .* unknown$/m)
    expect(r.stderr).toBe("ocpool: no price for fakeZ/unlisted in any price source; its cost shows unknown\n")
  })

  it("US-3 the first price source that prices a model wins; a broken catalog is one warning and falls through", () => {
    const s = setup()
    // the cached catalog prices the root model too, at 10×; OPENCODE_MODELS_PATH comes first
    mkdirSync(join(s.dir, "cache", "opencode"))
    writeFileSync(join(s.dir, "cache", "opencode", "models.json"), JSON.stringify({ fakeA: { models: { "root-a": { cost: { input: 30, output: 150 } } } } }))
    const first = JSON.parse(ocpool(["cost", "--db", s.db, "--json"], s.env).stdout) as { baseline: UsageJson; priceSources: ReadonlyArray<{ name: string }> }
    expect(first.baseline.cost).toBeCloseTo(BASELINE_COST, 10)
    expect(first.priceSources.map((p) => p.name)).toEqual(["OPENCODE_MODELS_PATH", "opencode cache", "presets/prices.json"])
    writeFileSync(s.catalog, "{ not json")
    const r = ocpool(["cost", "--db", s.db, "--json"], s.env)
    expect(r.code).toBe(0)
    expect(r.stderr).toMatch(/^ocpool: price source OPENCODE_MODELS_PATH .*models\.json skipped: not JSON \(.*\)\n/)
    expect(r.stderr.split("\n").filter((l) => l.includes("skipped"))).toHaveLength(1)
    const j = JSON.parse(r.stdout) as { baseline: UsageJson }
    expect(j.baseline.cost).toBeCloseTo(costOf({ input: 30, output: 150, cacheRead: 0, cacheWrite: 0 }, POOLED), 10)
  })

  it("US-3 the database is opened read-only: its bytes do not change", () => {
    const s = setup()
    const before = readFileSync(s.db)
    expect(ocpool(["cost", "--db", s.db, "--json"], s.env).code).toBe(0)
    expect(readFileSync(s.db).equals(before)).toBe(true)
  })

  const bad: ReadonlyArray<readonly [string, ReadonlyArray<string>, RegExp]> = [
    ["a bad --since", ["--since", "7"], /^ocpool: --since must be a duration such as 30m, 24h, 7d or 2w \(above zero\), or 'all', got '7'\n$/],
    ["a bad --by", ["--by", "week"], /^ocpool: --by must be one of agent, model, session, day, got 'week'\n$/],
    ["a bad --baseline-model", ["--baseline-model", "sonnet"], /^ocpool: --baseline-model must be provider\/model, got 'sonnet'\n$/],
    ["a missing --db", ["--db", "/nonexistent/opencode.db"], /^ocpool: database \/nonexistent\/opencode\.db \(from --db\): no such file\n$/]
  ]
  for (const [name, flags, message] of bad) {
    it(`US-3 ${name} is one line on stderr, exit 2`, () => {
      const s = setup()
      const r = ocpool(["cost", ...(flags.includes("--db") ? [] : ["--db", s.db]), ...flags], s.env)
      expect(r.code).toBe(2)
      expect(r.stdout).toBe("")
      expect(r.stderr).toMatch(message)
    })
  }

  it("US-3 a database without a message table, or a file that is not SQLite, is bad input: one line, exit 2", () => {
    const s = setup()
    const empty = join(s.dir, "empty.db")
    const d = new Database(empty)
    d.exec("CREATE TABLE session (id text, parent_id text)")
    d.close()
    const r = ocpool(["cost", "--db", empty], s.env)
    expect(r.code).toBe(2)
    expect(r.stderr).toBe(`ocpool: ${empty} is not an opencode database: no table 'message'; nothing changed\n`)
    const text = join(s.dir, "notes.txt")
    writeFileSync(text, "hello, not a database\n".repeat(100))
    const t = ocpool(["cost", "--db", text], s.env)
    expect(t.code).toBe(2)
    expect(t.stderr).toMatch(/^ocpool: .*notes\.txt is not an opencode database: .*\n$/)
  })

  /** A connection holding an EXCLUSIVE lock on the database, in rollback-journal mode, where it shuts readers out too. */
  const locked = (path: string) => {
    const db = new Database(path)
    expect(db.pragma("journal_mode = DELETE", { simple: true })).toBe("delete")
    db.exec("BEGIN EXCLUSIVE")
    let held = true
    return {
      release: () => {
        if (!held) return
        held = false
        db.exec("ROLLBACK")
        db.close()
      }
    }
  }

  /** The command's run with busy_timeout shortened from 5 s to 20 ms; the back-off (7.75 s) is the real one. */
  const measureBusy = (path: string) =>
    withBusyRetry(measureCost({ from: undefined, by: "agent", baselineModel: undefined, sources: [] })).pipe(
      Effect.provide(CostSqlite({ busyTimeoutMs: 20 }).pipe(Layer.provide(SqliteNode(path, { readonly: true }))))
    )

  it.live("US-3 a database another connection has locked: after the busy back-off, exit 75 and one line that says so", () =>
    Effect.gen(function* () {
      const s = setup()
      const lock = locked(s.db)
      const started = Date.now()
      const failure = yield* measureBusy(s.db).pipe(openFailures(s.db), Effect.flip, Effect.ensuring(Effect.sync(lock.release)))
      expect(Date.now() - started).toBeGreaterThanOrEqual(7_750)
      expect(failure).toMatchObject({
        _tag: "SweepIncomplete",
        exitCode: 75,
        message: `database ${s.db} is busy (database is locked): another connection held its lock through 5 retries; nothing changed, try again later`
      })
      // once the lock is gone it reports
      expect(ocpool(["cost", "--db", s.db], s.env).code).toBe(0)
    }),
  30_000
  )

  it.live("US-3 a lock released during the back-off: the next attempt reports", () =>
    Effect.gen(function* () {
      const s = setup()
      const lock = locked(s.db)
      // released after the first attempt failed and the first wait (250 ms) began
      const timer = setTimeout(lock.release, 150)
      const report = yield* measureBusy(s.db).pipe(Effect.ensuring(Effect.sync(() => (clearTimeout(timer), lock.release()))))
      expect(report.total.calls).toBe(6)
      expect(report.pool.calls).toBe(3)
    })
  )

  it("US-3 finds the default database under XDG_DATA_HOME, and --help tells the flags", () => {
    const s = setup()
    mkdirSync(join(s.dir, "data", "opencode"), { recursive: true })
    writeFileSync(join(s.dir, "data", "opencode", "opencode.db"), readFileSync(s.db))
    const r = ocpool(["cost", "--json"], { ...s.env, XDG_DATA_HOME: join(s.dir, "data") })
    expect(r.code).toBe(0)
    expect((JSON.parse(r.stdout) as { total: UsageJson }).total.calls).toBe(5)
    const h = ocpool(["cost", "--help"])
    expect(h.code).toBe(0)
    for (const flag of ["--db PATH", "--since DURATION", "--by agent|model|session|day", "--baseline-model PROVIDER/MODEL", "--json"]) expect(h.stdout).toContain(flag)
  })

  /** The whole report of `setup` without extra rows (7 days): what the good rows sum to, exactly. */
  const TOTAL: UsageJson = { calls: 5, tokens: { input: 11_800, output: 1590, reasoning: 50, cacheRead: 1000, cacheWrite: 100 }, cost: 0.0464 }
  const POOL: UsageJson = { calls: 3, tokens: POOLED, cost: 0.0164 }
  interface ReportJson {
    readonly groups: ReadonlyArray<UsageJson & { key: string }>
    readonly total: UsageJson
    readonly pool: UsageJson
    readonly baseline: UsageJson & { models: ReadonlyArray<string> }
    readonly unreadableRows: number
  }
  const report = (r: { code: number | null; stdout: string }): ReportJson => {
    expect(r.code).toBe(0)
    return JSON.parse(r.stdout) as ReportJson
  }
  /** CATALOG as a price table. */
  const TABLE = new Map([
    ["fakeA/pool-a", { input: 2, output: 8, cacheRead: 0.5, cacheWrite: 1 }],
    ["fakeA/root-a", ROOT_PRICE],
    ["fakeB/free-b", { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }]
  ])
  /** The in-process run over the same database: CostSqlite on a read-only better-sqlite3 connection. */
  const measure = (path: string, by: "agent" | "day" = "agent", from: number | undefined = Date.now() - 7 * DAY) =>
    measureCost({ from, by, baselineModel: undefined, sources: [{ name: "catalog", path: "models.json", table: TABLE }] }).pipe(
      Effect.provide(CostSqlite().pipe(Layer.provide(SqliteNode(path, { readonly: true })))),
      Effect.runPromise
    )

  it("US-3 message rows that are not JSON are skipped and counted: the good rows sum exactly, exit 0", async () => {
    // three rows '{not json', one the root's newest message (the baseline's model lookup reads it too)
    const s = setup((o, { root, kid, now }) => {
      rawMessage(o, kid, now - 45 * MIN, now - 45 * MIN, "{not json")
      rawMessage(o, kid, now - 44 * MIN, now - 44 * MIN, "{not json")
      rawMessage(o, root, now - MIN, now - MIN, "{not json")
    })
    const text = ocpool(["cost", "--db", s.db], s.env)
    expect(text.stderr).toBe("")
    expect(text.code).toBe(0)
    expect(text.stdout).toMatch(/^total +5 +11,800 +1,590 +50 +1,000 +100 +\$0\.05\n3 rows unreadable, skipped: not a JSON object, or an assistant message with a missing or invalid agent, model, token count or cost\n\nPOOLED WORK/m)
    expect(text.stdout).toMatch(/^pool +3 +7,800 +390 +50 +1,000 +100 +\$0\.02$/m)
    const j = report(ocpool(["cost", "--db", s.db, "--json"], s.env))
    expect(j.total).toEqual(TOTAL)
    expect(j.pool).toEqual(POOL)
    expect(j.baseline.cost).toBeCloseTo(BASELINE_COST, 10)
    expect(j.baseline.models).toEqual(["fakeA/root-a"])
    expect(j.unreadableRows).toBe(3)
    // the report itself, in-process
    const r = await measure(s.db)
    expect(r.unreadable).toBe(3)
    expect(r.total).toMatchObject({ calls: 5, tokens: TOTAL.tokens })
    expect(r.total.cost).toBeCloseTo(0.0464, 12)
    expect(r.baseline.models).toEqual(["fakeA/root-a"])
    // a malformed row outside the window is not in the report at all
    expect(report(ocpool(["cost", "--db", s.db, "--json", "--since", "40m"], s.env)).unreadableRows).toBe(1)
  })

  it("US-3 times outside the date range (2^62, -2^63, 8.64e15 + 1, text) go into the day unknown with --by day, exit 0", async () => {
    const seed: AssistantSeed = { agent: "explore-1", model: "fakeA/pool-a", cost: 0.001, input: 10, output: 1 }
    let at = 0
    const s = setup((o, { kid, now }) => {
      at = now
      for (const time of [2n ** 62n, -(2n ** 63n), 8_640_000_000_000_001, "yesterday"]) rawMessage(o, kid, now - 10 * MIN, time, assistantData(seed, now))
    })
    const days = report(ocpool(["cost", "--db", s.db, "--json", "--by", "day"], s.env))
    const known = days.groups.filter((g) => g.key !== "unknown")
    expect(known.map((g) => g.key)).toEqual([...new Set([58, 49, 48, 39, 30].map((m) => new Date(at - m * MIN).toISOString().slice(0, 10)))].sort())
    expect(known.reduce((a, g) => a + g.calls, 0)).toBe(5)
    // unknown comes after every date; a time that is not a date is in every window
    expect(days.groups.at(-1)).toEqual({ key: "unknown", calls: 4, tokens: { input: 40, output: 4, reasoning: 0, cacheRead: 0, cacheWrite: 0 }, cost: 0.004 })
    expect(days.total.calls).toBe(9)
    expect(days.unreadableRows).toBe(0)
    const text = ocpool(["cost", "--db", s.db, "--by", "day", "--since", "all"], s.env)
    expect(text.stderr).toBe("")
    expect(text.code).toBe(0)
    expect(text.stdout).toMatch(/^unknown +4 +40 +4 +0 +0 +0 +\$0\.0040\ntotal +10 /m)
    const r = await measure(s.db, "day")
    expect(r.groups.at(-1)).toMatchObject({ key: "unknown", calls: 4 })
  })

  /** Assistant rows no report may sum: a bad value of each kind, in the pooled child. */
  const BAD_ROWS: ReadonlyArray<readonly [string, (d: Record<string, any>) => void]> = [
    ["negative tokens", (d) => (d.tokens.input = -5000)],
    ["a negative cost", (d) => (d.cost = -0.5)],
    ["tokens '12abc'", (d) => (d.tokens.output = "12abc")],
    ["a cost '12' (a string)", (d) => (d.cost = "12")],
    ["tokens 'NaN'", (d) => (d.tokens.reasoning = "NaN")],
    ["a cost true", (d) => (d.cost = true)],
    ["tokens above 2^53", (d) => (d.tokens.cache.read = 2 ** 60)],
    ["fractional tokens", (d) => (d.tokens.input = 1.5)],
    ["a cost null", (d) => (d.cost = null)],
    ["no tokens", (d) => delete d.tokens],
    ["no cache read", (d) => delete d.tokens.cache.read],
    ["a cache array", (d) => (d.tokens.cache = [1, 2])],
    ["tokens a string", (d) => (d.tokens = "lots")],
    ["an agent number", (d) => (d.agent = 5)],
    ["a provider object", (d) => (d.providerID = { id: "fakeA" })],
    ["no model", (d) => delete d.modelID]
  ]

  it("US-3 an assistant row with a negative, string, boolean, huge, fractional or missing count or cost, a non-string agent or model, or data that is not a JSON object, is unreadable: it adds nothing, exit 0", async () => {
    const seed: AssistantSeed = { agent: "explore-1", model: "fakeA/pool-a", cost: 7, input: 100_000, output: 100_000 }
    const s = setup((o, { root, kid, now }) => {
      for (const [, edit] of BAD_ROWS) rawMessage(o, kid, now - 10 * MIN, now - 10 * MIN, editedAssistant(seed, now, edit))
      // numbers JSON.stringify cannot write: 1e999 (infinite to SQLite) and 2^64 written out
      rawMessage(o, kid, now - 10 * MIN, now - 10 * MIN, editedAssistant(seed, now, () => {}).replace('"input":100000', '"input":1e999'))
      rawMessage(o, kid, now - 10 * MIN, now - 10 * MIN, editedAssistant(seed, now, () => {}).replace('"cost":7', '"cost":18446744073709551616'))
      // data that is not a JSON object: an array, a number, a string, null, a BLOB
      for (const data of ['[{"role":"assistant","cost":7}]', "42", '"assistant"', "null", Buffer.from(editedAssistant(seed, now, () => {}))])
        rawMessage(o, kid, now - 10 * MIN, now - 10 * MIN, data)
      // the root's newest message is unreadable (negative tokens) and names another model: the baseline keeps fakeA/root-a
      rawMessage(o, root, now - MIN, now - MIN, editedAssistant({ ...seed, agent: "build", model: "fakeB/free-b" }, now, (d) => (d.tokens.input = -1)))
      // readable, and not in the report: objects that are not assistant messages
      for (const data of ['{"role":"user"}', "{}", '{"role":["assistant"],"cost":7}']) rawMessage(o, kid, now - 10 * MIN, now - 10 * MIN, data)
    })
    const j = report(ocpool(["cost", "--db", s.db, "--json"], s.env))
    expect(j.total).toEqual(TOTAL)
    expect(j.pool).toEqual(POOL)
    expect(j.baseline.models).toEqual(["fakeA/root-a"])
    expect(j.baseline.cost).toBeCloseTo(BASELINE_COST, 10)
    expect(j.unreadableRows).toBe(BAD_ROWS.length + 2 + 5 + 1)
    const text = ocpool(["cost", "--db", s.db, "--by", "model"], s.env)
    expect(text.code).toBe(0)
    expect(text.stderr).toBe("")
    expect(text.stdout).toContain(`\n${BAD_ROWS.length + 8} rows unreadable, skipped: `)
    expect(text.stdout).toMatch(/^fakeA\/pool-a +2 +7,000 +300 +50 +1,000 +100 +\$0\.02$/m)
    const r = await measure(s.db)
    expect(r.unreadable).toBe(BAD_ROWS.length + 8)
    expect(r.total).toMatchObject({ calls: 5, tokens: TOTAL.tokens })
  })

  it("US-3 every message the real opencode 1.18.33 wrote (test/fixtures/opencode-1.18.33/db-samples.json) is readable", async () => {
    const samples = JSON.parse(readFileSync(new URL("../fixtures/opencode-1.18.33/db-samples.json", import.meta.url), "utf8")) as {
      session: ReadonlyArray<{ id: string; parent_id: string | null; time_created: number }>
      message: ReadonlyArray<{ session_id: string; time_created: number; data: string }>
    }
    const dir = mkdtempSync(join(tmpdir(), "ocpool-cost-samples-"))
    dirs.push(dir)
    const o = new OpencodeDb(join(dir, "opencode.db"))
    for (const x of samples.session) o.session({ id: x.id, created: x.time_created, parentId: x.parent_id })
    for (const m of samples.message) rawMessage(o, m.session_id, m.time_created, m.time_created, m.data)
    o.close()
    const assistants = samples.message.filter((m) => (JSON.parse(m.data) as { role: string }).role === "assistant")
    expect(assistants.length).toBeGreaterThan(0)
    const r = await measure(join(dir, "opencode.db"), "agent", undefined)
    expect(r.unreadable).toBe(0)
    expect(r.total.calls).toBe(assistants.length)
  })
})
