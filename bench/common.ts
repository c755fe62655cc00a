/**
 * What the benchmarks share: command-line flags, a deterministic PRNG, the repository's paths, opencode
 * ids, the generated-database cache, and the routing pick's bare file-work reference (a busy pool's
 * claim files and the bare synchronous work over them) that other costs are measured against.
 */
import { spawn, type ChildProcess } from "node:child_process"
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync, writeSync } from "node:fs"
import { hostname } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { encodeClaimFile } from "../src/core/pool/claimFile.js"
import type { Claim } from "../src/core/pool/claims.js"
import { startTimeOf } from "../src/layers/state/proc.js"
import { Effect } from "effect"
import { appLogLayer } from "../src/layers/opencode/LoggerAppLog.js"
import type { LogLevel } from "../src/services/opencode/AppLog.js"
import { DEAD_FILE_MS } from "../src/core/constants.js"
import { STATE_DB } from "../src/core/stateTrust.js"
import { directExec, openStateDb } from "../src/layers/state/SharedStateSqlite.js"
import { migrateSqlite } from "../src/layers/state/sqliteSchema.js"
import { sqlClaims } from "../src/layers/state/sqlRecords.js"

/**
 * A log that counts its lines by level and keeps none, as the live one hands each line to opencode's
 * server and keeps nothing: a log that kept every line would grow the heap the benchmark measures.
 * Built the way the live log is (AppLogSdk: `appLogLayer`, a synchronous write per line, no fiber),
 * at level debug: every line the plugin makes is counted.
 */
export const countingLog = () => {
  const counts: Record<LogLevel, number> = { debug: 0, info: 0, warn: 0, error: 0 }
  return { counts, layer: appLogLayer((level) => void counts[level]++, "debug") }
}

/** The value after `--name`, if the flag is given. */
export const argValue = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? process.argv[i + 1] : undefined
}

/** A numeric flag `--name N`, or the fallback. */
export const arg = (name: string, fallback: number): number => {
  const v = argValue(name)
  return v === undefined ? fallback : Number(v)
}

/** A bare flag `--name`. */
export const flag = (name: string): boolean => process.argv.includes(`--${name}`)

/** mulberry32: a small deterministic PRNG, so every run generates the same data. */
export const rng = (seed: number) => () => {
  seed |= 0
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

/** The repository (benches run from dist/, one level down), opencode 1.18.33's schema, the built CLI. */
export const ROOT = fileURLToPath(new URL("..", import.meta.url))
export const SCHEMA = readFileSync(join(ROOT, "test/fixtures/opencode-1.18.33/schema.sql"), "utf8")
export const CLI = join(ROOT, "bin/ocpool.js")

/** The upper median. */
export const median = (xs: ReadonlyArray<number>): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
const ERA = 2 ** 36
const MASK48 = 2 ** 48

/**
 * opencode's id (packages/opencode/src/id/id.ts): `<prefix>_` + 12 hex of (ms × 4096 + counter) mod 2^48
 * (bitwise inverted for descending ids: sessions) + 14 random base62. The counter restarts at 1 for
 * every new millisecond, as opencode's does.
 */
export const idMaker = (random: () => number) => {
  let lastMs = -1
  let counter = 0
  return (prefix: string, ms: number, descending = false): string => {
    if (ms !== lastMs) {
      lastMs = ms
      counter = 0
    }
    counter++
    let v = ((ms % ERA) * 4096 + counter) % MASK48
    if (descending) v = MASK48 - 1 - v
    let tail = ""
    for (let i = 0; i < 14; i++) tail += BASE62[Math.floor(random() * 62)]
    return `${prefix}_${v.toString(16).padStart(12, "0")}${tail}`
  }
}

/** What a generator records next to its database. */
/** What every cached database's meta file holds; each bench adds its own counts. */
export interface GeneratedMeta {
  readonly version: number
  readonly generatedAt: number
  /** The database file's size. */
  readonly bytes: number
  /** How long generating it took. */
  readonly generateMs: number
}

/**
 * A generated database cached as `.bench-cache/<name>.db` with its meta in `<name>.json`: reused while
 * its version matches and it is younger than `maxAgeMs` (unless `--regen`), else generated again.
 */
export const cachedDatabase = <M extends GeneratedMeta>(
  name: string,
  version: number,
  maxAgeMs: number,
  generate: (path: string) => M
): { readonly path: string; readonly meta: M; readonly fresh: boolean } => {
  const dir = join(ROOT, ".bench-cache")
  mkdirSync(dir, { recursive: true })
  const path = join(dir, `${name}.db`)
  const metaPath = join(dir, `${name}.json`)
  if (!flag("regen") && existsSync(path) && existsSync(metaPath)) {
    const meta = JSON.parse(readFileSync(metaPath, "utf8")) as M
    if (meta.version === version && Date.now() - meta.generatedAt < maxAgeMs) return { path, meta, fresh: false }
  }
  const meta = generate(`${path}.tmp`)
  for (const suffix of ["-wal", "-shm"]) rmSync(`${path}.tmp${suffix}`, { force: true })
  renameSync(`${path}.tmp`, path)
  writeFileSync(metaPath, JSON.stringify(meta))
  return { path, meta, fresh: true }
}

/** The q-quantile of the samples (nearest rank, upper). */
export const quantile = (xs: ReadonlyArray<number>, q: number): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!
}

/** The busy pool of the file-work reference: 32 live peer processes holding 14 claims each over 4 models. */
export const PEERS = 32
export const PER_PEER = 14
export const MODELS = ["zen/a", "zen/b", "go/c", "go/d"]

/** Live peer processes (`sleep 600`), so the dead-holder checks (kill 0, /proc start time) run as in real use; the caller kills them. */
export const spawnPeers = async (n = PEERS): Promise<Array<ChildProcess>> => {
  const peers = Array.from({ length: n }, () => spawn("sleep", ["600"], { stdio: "ignore" }))
  await new Promise((r) => setTimeout(r, 200))
  return peers
}

/**
 * Each peer's claims, `PER_PEER` spread over `MODELS`, as a running plugin writes them: a row of
 * `stateDir`'s state.db (what the pick reads, issue 32), and the claim file an earlier version wrote
 * (what the bare file-work reference reads: the file pick that state.db replaced).
 */
export const writePeerClaims = (stateDir: string, peers: ReadonlyArray<ChildProcess>, now: number): void => {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 })
  const db = openStateDb(join(stateDir, STATE_DB))
  for (const p of peers) {
    const claims: Array<Claim> = Array.from({ length: PER_PEER }, (_, k) => ({
      key: `ses_peer${p.pid}:call_${k}`,
      base: "explore",
      slot: 1 + (k % 4),
      model: MODELS[k % 4]!,
      acquiredAt: now,
      heartbeatAt: now,
      ownerSession: `ses_peer${p.pid}`,
      targetSession: `ses_child${p.pid}_${k}`,
      abortAttempts: 0,
      abortPending: false,
      abortOrigin: null,
      abortInFlight: false,
      endedInFlight: false
    }))
    writeFileSync(join(stateDir, `claims.${p.pid}.json`), encodeClaimFile({ pid: p.pid!, startTime: startTimeOf(p.pid!), host: hostname(), writtenAt: now, reaped: 0, claims }), { mode: 0o600 })
    const exec = directExec(db)
    db.exec("BEGIN IMMEDIATE")
    migrateSqlite(db)
    Effect.runSync(sqlClaims(exec, { host: hostname(), pid: p.pid!, startToken: startTimeOf(p.pid!), instance: 0, leaseMs: DEAD_FILE_MS }).part.publish({ claims, reaped: 0 }, now).pipe(Effect.orDie))
    db.exec("COMMIT")
  }
  db.close()
}

/**
 * The file pick's reference (bench:route, bench:permits): what the state files before issue 32 cost at
 * the least, bare and synchronous: take `pool.lock`, readdir + read + JSON.parse every claim file,
 * publish a file (write + rename), drop the lock. `samples` times in ms, after `warmup` unmeasured rounds.
 */
export const bareFileWork = (stateDir: string, samples: number, warmup = 200): Array<number> => {
  const bare: Array<number> = []
  const own = join(stateDir, "bench-own.json")
  for (let i = 0; i < samples + warmup; i++) {
    const t0 = process.hrtime.bigint()
    const fd = openSync(join(stateDir, "pool.lock"), "wx", 0o600)
    writeSync(fd, JSON.stringify({ pid: process.pid, at: Date.now() }))
    closeSync(fd)
    let n = 0
    for (const name of readdirSync(stateDir)) {
      if (!name.startsWith("claims.") || !name.endsWith(".json")) continue
      n += Object.keys((JSON.parse(readFileSync(join(stateDir, name), "utf8")) as { claims: object }).claims).length
    }
    writeFileSync(`${own}.tmp`, JSON.stringify({ n, at: Date.now() }), { mode: 0o600 })
    renameSync(`${own}.tmp`, own)
    unlinkSync(join(stateDir, "pool.lock"))
    const t1 = process.hrtime.bigint()
    if (i >= warmup) bare.push(Number(t1 - t0) / 1e6)
  }
  return bare
}

/** The task hooks a spawn bench drives (`makeHooks`' answer). */
interface TaskHooks {
  readonly "tool.execute.before"?: (input: { tool: string; sessionID: string; callID: string }, output: { args: Record<string, unknown> }) => Promise<void>
  readonly "tool.execute.after"?: (input: { tool: string; sessionID: string; callID: string; args: unknown }, output: { title: string; output: string; metadata: unknown }) => Promise<void>
}

/**
 * One spawn of `explore` and its release through `hooks`, timed from hook entry to the rewritten
 * argument (ms); `stats()` says how many ran and how many kept their agent (not routed).
 */
export const spawnTimer = (hooks: TaskHooks) => {
  let call = 0
  let unrouted = 0
  const spawnOnce = async (): Promise<number> => {
    const i = call++
    const output = { args: { subagent_type: "explore" } as Record<string, unknown> }
    const t0 = process.hrtime.bigint()
    await hooks["tool.execute.before"]!({ tool: "task", sessionID: "ses_bench", callID: `c${i}` }, output)
    const t1 = process.hrtime.bigint()
    if (output.args.subagent_type === "explore") unrouted++
    await hooks["tool.execute.after"]!({ tool: "task", sessionID: "ses_bench", callID: `c${i}`, args: {} }, { title: "", output: "", metadata: {} })
    return Number(t1 - t0) / 1e6
  }
  return { spawnOnce, stats: () => ({ spawns: call, unrouted }) }
}
