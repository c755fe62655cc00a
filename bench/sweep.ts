/**
 * Retention sweep throughput (`npm run bench:sweep [-- --events N --sessions S --rounds R --regen --no-probe]`, not
 * part of CI).
 *
 * Generates, once, an opencode database from opencode 1.18.33's real schema: N events (default
 * 1,000,000) laid out as opencode writes them (bursts per session, 3–6 sessions active at once and
 * interleaved, idle gaps, ids encoded like opencode's), S sessions (default N / 100) with 50 parts
 * each. It is cached under `.bench-cache/` and copied for every measurement. Then, in rounds, each
 * measurement in a fresh process:
 *  - the sweep: the built CLI, `node bin/ocpool.js sweep events --db COPY --json` (defaults: 7 days,
 *    1 h grace), on one copy;
 *  - the reference: on another copy, one plain `DELETE FROM event WHERE id IN (SELECT id FROM doomed)`
 *    of exactly the rows the sweep deleted (their ids, collected untimed into a side database).
 * It prints rows/s for both, the ratio (target >= 0.5) and the longest write transaction of the sweep
 * (target <= 100 ms); then, for information, `sweep sessions` (30 days, 24 h grace) against a plain
 * one-transaction delete of the same trees, and (unless `--no-probe`) one more `sweep events` with a
 * writer next to it that writes one row every 5 ms, as a working opencode would, to show how long such a
 * writer waits. The last line is the whole result as JSON.
 */
import Database from "better-sqlite3"
import { execFileSync, spawn, spawnSync } from "node:child_process"
import { closeSync, copyFileSync, existsSync, fsyncSync, mkdtempSync, openSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { arg, argValue, cachedDatabase, CLI, flag, idMaker, median, ROOT, rng, SCHEMA, type GeneratedMeta } from "./common.js"


const EVENTS = arg("events", 1_000_000)
const SESSIONS = arg("sessions", Math.max(50, Math.round(EVENTS / 100)))
const PARTS = arg("parts", 50)
const ROUNDS = arg("rounds", 3)
/** Bumped whenever the generator changes, so an old cache is not reused. */
const GENERATOR_VERSION = 1
/** The events span this many days before the generation time; a sweep of 7 days finds ~7/8 of them old. */
const SPAN_DAYS = 60
/** A cache older than this is regenerated: the CLI uses the wall clock, and the old/recent split drifts. */
const CACHE_MAX_AGE_MS = 12 * 3_600_000

const DAY = 86_400_000

// ---------------------------------------------------------------------------------------------------
// Generator

const WORDS =
  "the a to of and in is for that this with on it be as are not file function return value test error import const type when use should from line change build run check we need can will fix add update".split(
    " "
  )

/**
 * The free text of a payload: 50 B to 1.8 KB, log-uniform (mean ≈ 490 B). With the JSON around it an
 * event's `data` is ~280 B to 2 KB (mean ≈ 720 B), the range opencode's event payloads are mostly in.
 */
const textSize = (random: () => number): number => Math.round(50 * Math.pow(36, random()))

interface Layout {
  /** Per event, in insertion (= time) order: the session index and the time in ms. */
  readonly session: Int32Array
  readonly time: Float64Array
  readonly parent: Int32Array
  readonly workspace: Uint8Array
  readonly synced: Uint8Array
}

/**
 * The event schedule. Sessions start in order; 3–6 are active at once (the target changes now and
 * then); the scheduler picks one active session at a time and lets it emit a burst (a geometric run of
 * ~12 events, 0–40 ms apart, several in the same millisecond now and then), then pauses 0.2–20 s. A
 * session leaves when its share of the events is spent; 2 % of sessions are resumed much later (a user
 * coming back to an old session) with the rest of their share; 30 % of new sessions are subagents of an
 * active root session. Idle gaps (exponential, ~one per five sessions) stretch the activity over
 * SPAN_DAYS ending one minute before the generation time.
 */
const layout = (n: number, s: number, end: number, random: () => number): Layout => {
  // Shares: 20 + exponential(mean 80) each, scaled to n, at least 1.
  const weights = Array.from({ length: s }, () => 20 - 80 * Math.log(1 - random()))
  const total = weights.reduce((a, b) => a + b, 0)
  const budget = new Int32Array(s)
  let assigned = 0
  for (let i = 0; i < s; i++) {
    budget[i] = Math.max(1, Math.floor((n * weights[i]!) / total))
    assigned += budget[i]!
  }
  for (let i = 0; assigned !== n; i = (i + 1) % s) {
    if (assigned < n) {
      budget[i]!++
      assigned++
    } else if (budget[i]! > 1) {
      budget[i]!--
      assigned--
    }
  }
  const resumes = new Uint8Array(s)
  /** Events left in the current phase; a resumed session's second phase is what its first left over. */
  const phase = new Int32Array(s)
  for (let i = 0; i < s; i++) {
    if (budget[i]! >= 10 && random() < 0.02) {
      resumes[i] = 1
      phase[i] = Math.ceil(budget[i]! * 0.7)
    } else phase[i] = budget[i]!
  }
  const firstPhase = Int32Array.from(phase)
  const parent = new Int32Array(s).fill(-1)
  const workspace = new Uint8Array(s)
  const synced = new Uint8Array(s)
  for (let i = 0; i < s; i++) {
    if (random() < 0.01) workspace[i] = 1
    else if (random() < 0.01) synced[i] = 1
  }

  const session = new Int32Array(n)
  const activeTime = new Float64Array(n)
  const idleWeight = new Float64Array(n)
  const active: Array<number> = []
  const pending: Array<{ readonly session: number; readonly at: number }> = []
  let target = 3 + Math.floor(random() * 4)
  let next = 0
  let t = 0
  let emitted = 0
  let idleTotal = 0
  const idleChance = Math.max(1, s / 5) / Math.max(1, n / 12)
  while (emitted < n) {
    while (active.length < target) {
      const due = pending.findIndex((p) => p.at <= next || next >= s)
      if (due >= 0) {
        const [p] = pending.splice(due, 1)
        phase[p!.session] = budget[p!.session]! - firstPhase[p!.session]!
        resumes[p!.session] = 2
        active.push(p!.session)
      } else if (next < s) {
        const roots = active.filter((a) => parent[a] === -1)
        if (roots.length > 0 && random() < 0.3) parent[next] = roots[Math.floor(random() * roots.length)]!
        active.push(next++)
      } else break
    }
    if (active.length === 0) break
    const slot = Math.floor(random() * active.length)
    const who = active[slot]!
    let burst = 1
    while (random() > 1 / 12) burst++
    burst = Math.min(burst, phase[who]!)
    for (let k = 0; k < burst; k++) {
      t += random() < 0.2 ? 0 : Math.floor(random() * 40)
      session[emitted] = who
      activeTime[emitted] = t
      emitted++
    }
    phase[who] = phase[who]! - burst
    t += 200 + Math.floor(random() * 19_800)
    if (emitted < n && random() < idleChance) {
      const w = -Math.log(1 - random())
      idleWeight[emitted] = w
      idleTotal += w
    }
    if (phase[who] === 0) {
      active.splice(slot, 1)
      if (resumes[who] === 1) pending.push({ session: who, at: next + 500 + Math.floor(random() * 4_500) })
    }
    if (random() < 0.01) target = 3 + Math.floor(random() * 4)
  }
  // Stretch the activity over the span with the idle gaps.
  const start = end - SPAN_DAYS * DAY
  const idleMs = Math.max(0, SPAN_DAYS * DAY - t)
  const time = new Float64Array(n)
  let idle = 0
  for (let i = 0; i < n; i++) {
    if (idleTotal > 0) idle += (idleWeight[i]! / idleTotal) * idleMs
    time[i] = Math.floor(start + activeTime[i]! + idle)
  }
  return { session, time, parent, workspace, synced }
}

interface CacheMeta extends GeneratedMeta {
  readonly events: number
  readonly sessions: number
  readonly parts: number
  readonly oldestEvent: number
  readonly newestEvent: number
}

const generate = (path: string): CacheMeta => {
  const t0 = Date.now()
  const end = t0 - 60_000
  const random = rng(20_261_201)
  const id = idMaker(random)
  const plan = layout(EVENTS, SESSIONS, end, random)
  const pool = Array.from({ length: 20_000 }, () => WORDS[Math.floor(random() * WORDS.length)]).join(" ")
  const text = (size: number): string => {
    const from = Math.floor(random() * (pool.length - size - 1))
    return pool.slice(from, from + size)
  }

  rmSync(path, { force: true })
  const db = new Database(path)
  db.pragma("journal_mode = WAL")
  db.pragma("synchronous = OFF")
  db.pragma("cache_size = -262144")
  db.exec(SCHEMA)
  db.prepare("INSERT INTO project (id, worktree, time_created, time_updated, sandboxes) VALUES ('global', '/', 0, 0, '[]')").run()
  db.prepare("INSERT INTO workspace (id, type, project_id, time_used) VALUES ('wrk_bench', 'local', 'global', 0)").run()

  // First and last event of every session, and the session ids (descending, from the first event).
  const first = new Float64Array(SESSIONS).fill(Infinity)
  const last = new Float64Array(SESSIONS).fill(-Infinity)
  const count = new Int32Array(SESSIONS)
  for (let i = 0; i < EVENTS; i++) {
    const s = plan.session[i]!
    if (first[s] === Infinity) first[s] = plan.time[i]!
    last[s] = plan.time[i]!
    count[s]!++
  }
  const created = Array.from({ length: SESSIONS }, (_, s) => (first[s] === Infinity ? end - 40 * DAY : first[s]! - 1 - Math.floor(random() * 500)))
  const order = Array.from({ length: SESSIONS }, (_, s) => s).sort((a, b) => created[a]! - created[b]!)
  const sessionId = new Array<string>(SESSIONS)
  for (const s of order) sessionId[s] = id("ses", created[s]!, true)

  const insertSession = db.prepare(
    `INSERT INTO session (id, project_id, workspace_id, parent_id, slug, directory, title, version, time_created, time_updated)
     VALUES (?, 'global', ?, ?, ?, ?, ?, '1.18.33', ?, ?)`
  )
  const insertSequence = db.prepare("INSERT INTO event_sequence (aggregate_id, seq, owner_id) VALUES (?, ?, ?)")
  const insertEvent = db.prepare("INSERT INTO event (id, aggregate_id, seq, type, data) VALUES (?, ?, ?, ?, ?)")
  const insertMessage = db.prepare("INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)")
  const insertPart = db.prepare("INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)")

  db.transaction(() => {
    for (const s of order) {
      const updated = last[s] === -Infinity ? created[s]! : last[s]! + 1
      const dir = `/home/dev/projects/app-${s % 7}`
      insertSession.run(sessionId[s], plan.workspace[s] ? "wrk_bench" : null, plan.parent[s]! >= 0 ? sessionId[plan.parent[s]!] : null, `slug-${s}`, dir, `Bench session ${s}`, created[s], updated)
      insertSequence.run(sessionId[s], Math.max(0, count[s]! - 1), plan.synced[s] ? "own_bench" : null)
    }
  })()

  // Events in time order, as opencode appends them; a message (with its parts) every ~count/10 events.
  const seq = new Int32Array(SESSIONS)
  const messages = Math.max(1, Math.round(PARTS / 5))
  const messageId = new Array<string>(SESSIONS).fill("")
  const partsLeft = new Int32Array(SESSIONS).fill(PARTS)
  const TYPES = ["message.part.updated.1", "message.part.updated.1", "message.part.updated.1", "message.part.updated.1", "message.part.updated.1", "message.part.updated.1", "message.updated.1", "message.updated.1", "session.updated.1", "session.status.1"]
  const BATCH = 20_000
  for (let from = 0; from < EVENTS; from += BATCH) {
    db.transaction(() => {
      for (let i = from; i < Math.min(EVENTS, from + BATCH); i++) {
        const s = plan.session[i]!
        const at = plan.time[i]!
        const sid = sessionId[s]!
        const k = seq[s]!
        const every = Math.max(1, Math.floor(count[s]! / messages))
        if (messageId[s] === "" || (k % every === 0 && partsLeft[s]! > 0)) {
          messageId[s] = id("msg", at)
          insertMessage.run(messageId[s], sid, at, at, `{"role":"${k % 2 === 0 ? "user" : "assistant"}","time":{"created":${at}},"agent":"build","model":{"providerID":"zen","modelID":"alpha"},"summary":{"title":"${text(60)}"}}`)
          for (let p = 0; p < 5 && partsLeft[s]! > 0; p++, partsLeft[s]!--) {
            insertPart.run(id("prt", at), messageId[s], sid, at, at, `{"type":"text","text":"${text(textSize(random))}","time":{"start":${at}}}`)
          }
        }
        const type = TYPES[Math.floor(random() * TYPES.length)]!
        const data = `{"sessionID":"${sid}","part":{"id":"prt_${k}","messageID":"${messageId[s]}","sessionID":"${sid}","type":"text","text":"${text(textSize(random))}","time":{"start":${at}}}}`
        insertEvent.run(id("evt", at), sid, k, type, data)
        seq[s] = k + 1
      }
    })()
    if ((from / BATCH) % 10 === 0) process.stderr.write(`\rgenerating: ${from.toLocaleString("en-US")} / ${EVENTS.toLocaleString("en-US")} events`)
  }
  // Sessions whose events ran out before their parts did (or that have no event) get their remaining parts now.
  db.transaction(() => {
    for (let s = 0; s < SESSIONS; s++) {
      while (partsLeft[s]! > 0) {
        const at = last[s] === -Infinity ? created[s]! : last[s]!
        const mid = id("msg", at)
        insertMessage.run(mid, sessionId[s], at, at, `{"role":"assistant","time":{"created":${at}}}`)
        for (let p = 0; p < 5 && partsLeft[s]! > 0; p++, partsLeft[s]!--) insertPart.run(id("prt", at), mid, sessionId[s], at, at, `{"type":"text","text":"${text(textSize(random))}"}`)
      }
    }
  })()
  process.stderr.write("\n")
  db.pragma("wal_checkpoint(TRUNCATE)")
  db.close()
  return {
    version: GENERATOR_VERSION,
    events: EVENTS,
    sessions: SESSIONS,
    parts: PARTS,
    generatedAt: t0,
    bytes: statSync(path).size,
    generateMs: Date.now() - t0,
    oldestEvent: plan.time[0] ?? end,
    newestEvent: plan.time[EVENTS - 1] ?? end
  }
}

const cachedSweepDatabase = () => cachedDatabase(`sweep-v${GENERATOR_VERSION}-${EVENTS}e-${SESSIONS}s-${PARTS}p`, GENERATOR_VERSION, CACHE_MAX_AGE_MS, generate)

// ---------------------------------------------------------------------------------------------------
// Measurements

/** A copy of the cached database, flushed to disk so no write-back of the copy lands on a clock. */
const copyOf = (source: string, target: string): string => {
  copyFileSync(source, target)
  const fd = openSync(target, "r+")
  fsyncSync(fd)
  closeSync(fd)
  return target
}

interface Timed {
  readonly ms: number
  readonly rows: number
}

/**
 * The ids a swept copy lost, into a side database `doomed.db` (table `doomed`, id primary key,
 * WITHOUT ROWID): `pristine EXCEPT swept`. Untimed; the references delete exactly these rows.
 */
const doomedIds = (pristine: string, swept: string, out: string, table: "event" | "session"): number => {
  rmSync(out, { force: true })
  const db = new Database(out)
  db.exec(`ATTACH '${pristine.replaceAll("'", "''")}' AS p; ATTACH '${swept.replaceAll("'", "''")}' AS s;`)
  db.exec(`CREATE TABLE doomed (id TEXT PRIMARY KEY) WITHOUT ROWID; INSERT INTO doomed SELECT id FROM p.${table} EXCEPT SELECT id FROM s.${table};`)
  const n = (db.prepare("SELECT count(*) AS n FROM doomed").get() as { n: number }).n
  db.close()
  return n
}

/** The same connection settings as the sweep (SPEC §11.1, and synchronous = NORMAL in WAL mode). */
const openLikeTheSweep = (path: string): Database.Database => {
  const db = new Database(path)
  db.pragma("busy_timeout = 5000")
  db.pragma("foreign_keys = ON")
  if (String(db.pragma("journal_mode", { simple: true })).toLowerCase() === "wal") db.pragma("synchronous = NORMAL")
  return db
}

/** Child: one `DELETE … WHERE id IN (SELECT id FROM doomed)` in one transaction; prints `{ms, rows}`. */
const referenceEvents = (path: string, doomed: string): Timed => {
  const db = openLikeTheSweep(path)
  db.exec(`ATTACH '${doomed.replaceAll("'", "''")}' AS d`)
  const del = db.prepare("DELETE FROM event WHERE id IN (SELECT id FROM d.doomed)")
  const t0 = process.hrtime.bigint()
  const rows = del.run().changes
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  db.close()
  return { ms, rows }
}

/**
 * Child: the same trees as `sweep sessions` in one transaction, the same table order (every table with
 * a `session_id` column, tables referencing another one first; then event, event_sequence, session).
 */
const referenceSessions = (path: string, doomed: string): Timed => {
  const db = openLikeTheSweep(path)
  db.exec(`ATTACH '${doomed.replaceAll("'", "''")}' AS d`)
  const tables = (
    db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT IN ('session', 'event', 'event_sequence') ORDER BY name").all() as Array<{ name: string }>
  )
    .map((t) => t.name)
    .filter((name) => (db.prepare("SELECT name FROM pragma_table_info(?)").all(name) as Array<{ name: string }>).some((c) => c.name === "session_id"))
  const refs = (name: string) => (db.prepare('SELECT "table" AS t FROM pragma_foreign_key_list(?)').all(name) as Array<{ t: string }>).map((r) => r.t)
  const ordered = [...tables].sort((a, b) => (refs(a).includes(b) ? -1 : refs(b).includes(a) ? 1 : 0))
  const statements = [
    ...ordered.map((t) => `DELETE FROM "${t}" WHERE session_id IN (SELECT id FROM d.doomed)`),
    "DELETE FROM event WHERE aggregate_id IN (SELECT id FROM d.doomed)",
    "DELETE FROM event_sequence WHERE aggregate_id IN (SELECT id FROM d.doomed)",
    "DELETE FROM session WHERE id IN (SELECT id FROM d.doomed)"
  ].map((s) => db.prepare(s))
  const t0 = process.hrtime.bigint()
  let rows = 0
  db.transaction(() => {
    for (const s of statements) rows += s.run().changes
  })()
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  db.close()
  return { ms, rows }
}

/**
 * Child: a writer like opencode's (`busy_timeout = 5000`, SQLite's own busy handler): every 5 ms a
 * `BEGIN IMMEDIATE`, one small write (a project row's `time_updated`, as opencode touches rows), `COMMIT`,
 * until `stop` exists. Prints how long each waited for the write lock.
 */
const probeWriter = (path: string, ready: string, stop: string): WriterWaits => {
  const db = new Database(path)
  db.pragma("busy_timeout = 5000")
  const touch = db.prepare("UPDATE project SET time_updated = ? WHERE rowid = (SELECT min(rowid) FROM project)")
  const pause = new Int32Array(new SharedArrayBuffer(4))
  const waits: Array<number> = []
  writeFileSync(ready, "")
  while (!existsSync(stop)) {
    const t0 = process.hrtime.bigint()
    db.exec("BEGIN IMMEDIATE")
    waits.push(Number(process.hrtime.bigint() - t0) / 1e6)
    touch.run(Date.now())
    db.exec("COMMIT")
    Atomics.wait(pause, 0, 0, 5)
  }
  db.close()
  waits.sort((a, b) => a - b)
  const q = (p: number): number => Math.round((waits[Math.min(waits.length - 1, Math.floor(p * waits.length))] ?? 0) * 10) / 10
  return { writes: waits.length, p50Ms: q(0.5), p99Ms: q(0.99), maxMs: q(1), over100Ms: waits.filter((w) => w > 100).length }
}

interface WriterWaits {
  readonly writes: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly maxMs: number
  readonly over100Ms: number
}

/** `sweep events` on a copy while the probe writer runs next to it (a separate run, not one of the timed rounds). */
const sweepWithWriter = async (path: string, dataHome: string, work: string): Promise<{ readonly sweep: EventReport; readonly writer: WriterWaits }> => {
  const ready = join(work, "probe.ready")
  const stop = join(work, "probe.stop")
  rmSync(ready, { force: true })
  rmSync(stop, { force: true })
  const probe = spawn(process.execPath, [process.argv[1]!, "--child", "probe", "--db", path, "--ready", ready, "--stop", stop], { stdio: ["ignore", "pipe", "inherit"] })
  let out = ""
  probe.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")))
  const exited = new Promise<number | null>((resolve) => probe.on("exit", resolve))
  while (!existsSync(ready)) await new Promise((r) => setTimeout(r, 10))
  await new Promise((r) => setTimeout(r, 200))
  try {
    const sweep = runCli<EventReport>(["sweep", "events", "--db", path], dataHome).report
    writeFileSync(stop, "")
    if ((await exited) !== 0) throw new Error("the probe writer failed")
    return { sweep, writer: JSON.parse(out) as WriterWaits }
  } finally {
    writeFileSync(stop, "")
  }
}

interface CliRun<R> {
  readonly report: R
  readonly wallMs: number
}

/** The built CLI in a fresh process, its run logs under a temp XDG_DATA_HOME. */
const runCli = <R>(args: ReadonlyArray<string>, dataHome: string): CliRun<R> => {
  const t0 = process.hrtime.bigint()
  const r = spawnSync(process.execPath, [CLI, ...args, "--json"], { encoding: "utf8", maxBuffer: 1 << 24, env: { ...process.env, XDG_DATA_HOME: dataHome } })
  const wallMs = Number(process.hrtime.bigint() - t0) / 1e6
  if (r.status !== 0) throw new Error(`ocpool ${args.join(" ")} exited ${r.status}: ${r.stderr}`)
  return { report: JSON.parse(r.stdout) as R, wallMs }
}

const child = (kind: string, path: string, doomed: string): Timed =>
  JSON.parse(execFileSync(process.execPath, [process.argv[1]!, "--child", kind, "--db", path, "--doomed", doomed], { encoding: "utf8" })) as Timed

interface EventReport {
  readonly candidates: number
  readonly rows: number
  readonly bytes: number
  readonly chunks: number
  readonly longestTransactionMs: number
  readonly politePauses: number
  readonly elapsedMs: number
  readonly remaining: number
  readonly stoppedBy: string | null
}

interface SessionReport {
  readonly roots: number
  readonly sessions: number
  readonly protected: number
  readonly rows: Readonly<Record<string, number>>
  readonly elapsedMs: number
  readonly stoppedBy: string | null
}

const perSec = (rows: number, ms: number): number => Math.round((rows / ms) * 1000)
const n = (x: number): string => x.toLocaleString("en-US")

const main = async (): Promise<void> => {
  if (!existsSync(join(ROOT, "dist/cli.js"))) throw new Error("dist/cli.js is missing: run `node scripts/build.mjs` first (npm run bench:sweep does)")
  const cache = cachedSweepDatabase()
  const work = mkdtempSync(join(tmpdir(), "ocpool-bench-sweep-"))
  const dataHome = join(work, "data")
  try {
    const rounds: Array<{ sweep: EventReport; wallMs: number; reference: Timed }> = []
    for (let r = 0; r < ROUNDS; r++) {
      const swept = copyOf(cache.path, join(work, "swept.db"))
      const sweep = runCli<EventReport>(["sweep", "events", "--db", swept], dataHome)
      if (sweep.report.stoppedBy !== null || sweep.report.remaining !== 0) throw new Error(`sweep events did not finish: ${JSON.stringify(sweep.report)}`)
      const doomed = join(work, "doomed.db")
      const ids = doomedIds(cache.path, swept, doomed, "event")
      if (ids !== sweep.report.rows) throw new Error(`the swept copy lost ${ids} events, the report says ${sweep.report.rows}`)
      rmSync(swept, { force: true })
      const ref = copyOf(cache.path, join(work, "reference.db"))
      const reference = child("events", ref, doomed)
      if (reference.rows !== sweep.report.rows) throw new Error(`the reference deleted ${reference.rows} rows, the sweep ${sweep.report.rows}`)
      rmSync(ref, { force: true })
      rounds.push({ sweep: sweep.report, wallMs: sweep.wallMs, reference })
      process.stderr.write(
        `round ${r + 1}: sweep ${n(sweep.report.rows)} rows in ${sweep.report.elapsedMs} ms (wall ${sweep.wallMs.toFixed(0)} ms, ${sweep.report.chunks} chunks, longest ${sweep.report.longestTransactionMs} ms); reference ${reference.ms.toFixed(0)} ms\n`
      )
    }

    // sweep sessions, once, for information.
    const swept = copyOf(cache.path, join(work, "swept.db"))
    const sessions = runCli<SessionReport>(["sweep", "sessions", "--db", swept], dataHome)
    const doomed = join(work, "doomed.db")
    const retired = doomedIds(cache.path, swept, doomed, "session")
    if (retired !== sessions.report.sessions) throw new Error(`the swept copy lost ${retired} sessions, the report says ${sessions.report.sessions}`)
    rmSync(swept, { force: true })
    const ref = copyOf(cache.path, join(work, "reference.db"))
    const sessionRef = child("sessions", ref, doomed)
    rmSync(ref, { force: true })
    const sessionRows = Object.values(sessions.report.rows).reduce((a, b) => a + b, 0)
    if (sessionRef.rows !== sessionRows) throw new Error(`the sessions reference deleted ${sessionRef.rows} rows, the sweep ${sessionRows}`)

    // How long a concurrent writer waits for the lock during a sweep, for information.
    const probed = flag("no-probe") ? undefined : await sweepWithWriter(copyOf(cache.path, join(work, "probed.db")), dataHome, work)
    rmSync(join(work, "probed.db"), { force: true })

    const rows = rounds[0]!.sweep.rows
    const sweepRates = rounds.map((x) => perSec(x.sweep.rows, x.sweep.elapsedMs))
    const wallRates = rounds.map((x) => perSec(x.sweep.rows, x.wallMs))
    const refRates = rounds.map((x) => perSec(x.reference.rows, x.reference.ms))
    const ratios = rounds.map((x) => x.reference.ms / x.sweep.elapsedMs)
    const wallRatios = rounds.map((x) => x.reference.ms / x.wallMs)
    const longest = Math.max(...rounds.map((x) => x.sweep.longestTransactionMs))
    const ratio = median(ratios)
    const result = {
      bench: "sweep",
      node: process.version,
      database: {
        events: EVENTS,
        sessions: SESSIONS,
        partsPerSession: PARTS,
        bytes: cache.meta.bytes,
        cached: !cache.fresh,
        generatedAt: new Date(cache.meta.generatedAt).toISOString(),
        generateMs: cache.meta.generateMs
      },
      events: {
        rounds: ROUNDS,
        candidates: rounds[0]!.sweep.candidates,
        rows,
        bytes: rounds[0]!.sweep.bytes,
        sweep: {
          rowsPerSec: median(sweepRates),
          elapsedMs: rounds.map((x) => x.sweep.elapsedMs),
          wallMs: rounds.map((x) => Math.round(x.wallMs)),
          wallRowsPerSec: median(wallRates),
          chunks: rounds.map((x) => x.sweep.chunks),
          longestTransactionMs: rounds.map((x) => x.sweep.longestTransactionMs)
        },
        reference: { rowsPerSec: median(refRates), ms: rounds.map((x) => Math.round(x.reference.ms)) },
        ratio: Math.round(ratio * 100) / 100,
        ratioWall: Math.round(median(wallRatios) * 100) / 100,
        longestTransactionMs: longest,
        targets: { ratio: 0.5, longestTransactionMs: 100 },
        pass: ratio >= 0.5 && longest <= 100
      },
      sessions: {
        roots: sessions.report.roots,
        sessions: sessions.report.sessions,
        protected: sessions.report.protected,
        rows: sessions.report.rows,
        sweep: { elapsedMs: sessions.report.elapsedMs, wallMs: Math.round(sessions.wallMs), rowsPerSec: perSec(sessionRows, sessions.report.elapsedMs), sessionsPerSec: perSec(sessions.report.sessions, sessions.report.elapsedMs) },
        reference: { ms: Math.round(sessionRef.ms), rowsPerSec: perSec(sessionRows, sessionRef.ms) },
        ratio: Math.round((sessionRef.ms / sessions.report.elapsedMs) * 100) / 100
      },
      writer:
        probed === undefined
          ? null
          : { sweepElapsedMs: probed.sweep.elapsedMs, sweepLongestTransactionMs: probed.sweep.longestTransactionMs, sweepChunks: probed.sweep.chunks, sweepPolitePauses: probed.sweep.politePauses, waits: probed.writer }
    }

    const e = result.events
    console.log(
      `sweep bench: ${n(EVENTS)} events, ${n(SESSIONS)} sessions x ${PARTS} parts, ${(cache.meta.bytes / 1e6).toFixed(0)} MB (${cache.fresh ? `generated in ${(cache.meta.generateMs / 1000).toFixed(0)} s` : `cached, generated ${new Date(cache.meta.generatedAt).toISOString()}`}), ${ROUNDS} rounds, node ${process.version}`
    )
    console.log(`sweep events (CLI, --days 7 --grace-hours 1): ${n(e.rows)} of ${n(EVENTS)} rows, ${(e.bytes / 1e6).toFixed(0)} MB of data, chunks ${e.sweep.chunks.join(", ")}`)
    console.log(`  sweep:     ${n(e.sweep.rowsPerSec)} rows/s (median; elapsedMs ${e.sweep.elapsedMs.join(", ")}; process wall ${e.sweep.wallMs.join(", ")} ms = ${n(e.sweep.wallRowsPerSec)} rows/s)`)
    console.log(`  reference: ${n(e.reference.rowsPerSec)} rows/s (median; one DELETE ... IN (SELECT id FROM doomed): ${e.reference.ms.join(", ")} ms)`)
    console.log(
      `ratio sweep/reference: ${e.ratio.toFixed(2)} (median of per-round ratios; target >= 0.50; on process wall ${e.ratioWall.toFixed(2)})  longest transaction: ${longest} ms (rounds ${e.sweep.longestTransactionMs.join(", ")}; target <= 100)  ${e.pass ? "PASS" : "FAIL"}`
    )
    const s = result.sessions
    console.log(
      `sweep sessions (CLI, --days 30 --grace-hours 24, for information): ${n(s.roots)} trees, ${n(s.sessions)} sessions, ${n(Object.values(s.rows).reduce((a, b) => a + b, 0))} rows in ${s.sweep.elapsedMs} ms (${n(s.sweep.sessionsPerSec)} sessions/s, ${n(s.sweep.rowsPerSec)} rows/s); one-transaction reference ${s.reference.ms} ms (${n(s.reference.rowsPerSec)} rows/s); ratio ${s.ratio.toFixed(2)}`
    )
    if (result.writer !== null) {
      const w = result.writer
      console.log(
        `writer next to sweep events (a one-row write transaction every 5 ms, busy_timeout 5000, for information): ${n(w.waits.writes)} writes, lock wait p50 ${w.waits.p50Ms} ms, p99 ${w.waits.p99Ms} ms, max ${w.waits.maxMs} ms, ${w.waits.over100Ms} waits > 100 ms; that sweep: ${w.sweepElapsedMs} ms, longest transaction ${w.sweepLongestTransactionMs} ms, ${w.sweepPolitePauses} of ${w.sweepChunks} chunks followed by a pause`
      )
    }
    console.log(JSON.stringify(result))
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

const childIndex = process.argv.indexOf("--child")
if (childIndex >= 0) {
  const kind = process.argv[childIndex + 1]
  const db = argValue("db")!
  const result =
    kind === "probe" ? probeWriter(db, argValue("ready")!, argValue("stop")!) : kind === "sessions" ? referenceSessions(db, argValue("doomed")!) : referenceEvents(db, argValue("doomed")!)
  process.stdout.write(JSON.stringify(result))
} else await main()
