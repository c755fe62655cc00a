/**
 * A stand-in for a running opencode, for test/retention/concurrency.test.ts. Run as
 * `node --import tsx test/retention/writer.ts '<json options>'`.
 *
 * Opens the database as opencode does (WAL, busy_timeout 5000) and loops over short write transactions
 * (BEGIN IMMEDIATE, held `holdMs` by a busy wait) on a live session: a few events (advancing its
 * `event_sequence`), a message with a part, `time_updated` moved to now. Prints `ready` once the first
 * transaction committed. On the stdin line `revive` it brings old sessions back in one transaction (a new
 * message and `time_updated` now, or a new child session), each only if the session is still there,
 * after holding the write lock `reviveHoldMs` first. When
 * stdin ends it prints one JSON line with everything it committed and exits.
 */
import Database from "better-sqlite3"
import { createInterface } from "node:readline"
import { makeId, seeded } from "./opencodeDb.js"

export interface WriterOptions {
  readonly db: string
  readonly live: string
  readonly holdMs: readonly [number, number]
  readonly gapMs: readonly [number, number]
  readonly revive?: ReadonlyArray<{ readonly session: string; readonly how: "touch" | "child" }>
  /** The revive transaction holds the write lock this long before it changes anything (a sweep plans meanwhile, then waits). */
  readonly reviveHoldMs?: number
  readonly seed?: number
}

export interface Revived {
  readonly session: string
  readonly how: "touch" | "child"
  /** The session was still there, and the change committed. */
  readonly applied: boolean
  /** The new message (touch) or the new child session (child). */
  readonly row: string | null
}

export interface WriterReport {
  readonly transactions: number
  /** Commit times (ms since the epoch), one per transaction. */
  readonly commits: ReadonlyArray<number>
  readonly events: ReadonlyArray<string>
  readonly messages: ReadonlyArray<string>
  readonly parts: ReadonlyArray<string>
  readonly revived: ReadonlyArray<Revived>
  /** The longest wait for the write lock (BEGIN IMMEDIATE). */
  readonly maxLockWaitMs: number
  readonly errors: ReadonlyArray<string>
}

const options = JSON.parse(process.argv[2] ?? "{}") as WriterOptions
const random = seeded(options.seed ?? 5)
const between = ([lo, hi]: readonly [number, number]) => lo + Math.floor(random() * (hi - lo + 1))
let counter = 0
const id = (prefix: string, descending = false) => makeId(prefix, Date.now(), ++counter % 4096, random, descending)

const db = new Database(options.db)
db.pragma("journal_mode = WAL")
db.pragma("busy_timeout = 5000")
db.pragma("synchronous = NORMAL")

const pause = new Int32Array(new SharedArrayBuffer(4))
const hold = (ms: number) => Atomics.wait(pause, 0, 0, ms)

const nextSeq = db.prepare("UPDATE event_sequence SET seq = seq + 1 WHERE aggregate_id = ? RETURNING seq").pluck()
const insertEvent = db.prepare("INSERT INTO event (id, aggregate_id, seq, type, data) VALUES (?, ?, ?, 'message.part.updated.1', ?)")
const insertMessage = db.prepare("INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, '{\"role\":\"assistant\"}')")
const insertPart = db.prepare("INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, '{\"type\":\"text\",\"text\":\"…\"}')")
const touch = db.prepare("UPDATE session SET time_updated = ? WHERE id = ?")
const addChild = db.prepare(
  `INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, time_created, time_updated)
   SELECT ?, project_id, id, 'child', directory, 'resumed child', '1.18.33', ?, ? FROM session WHERE id = ?`
)

const report = {
  transactions: 0,
  commits: [] as Array<number>,
  events: [] as Array<string>,
  messages: [] as Array<string>,
  parts: [] as Array<string>,
  revived: [] as Array<Revived>,
  maxLockWaitMs: 0,
  errors: [] as Array<string>
}
let stopping = false
let reviveNow = false

const step = () => {
  const asked = Date.now()
  const events: Array<string> = []
  const messages: Array<string> = []
  const parts: Array<string> = []
  const revived: Array<Revived> = []
  const body = db.transaction(() => {
    report.maxLockWaitMs = Math.max(report.maxLockWaitMs, Date.now() - asked)
    const now = Date.now()
    for (let i = 0; i < 3; i++) {
      const seq = nextSeq.get(options.live) as number
      const e = id("evt")
      insertEvent.run(e, options.live, seq, `{"type":"live","n":${seq}}`)
      events.push(e)
    }
    const m = id("msg")
    insertMessage.run(m, options.live, now, now)
    messages.push(m)
    const p = id("prt")
    insertPart.run(p, m, options.live, now, now)
    parts.push(p)
    touch.run(now, options.live)
    if (reviveNow) {
      hold(options.reviveHoldMs ?? 0)
      for (const r of options.revive ?? []) {
        if (r.how === "touch") {
          const applied = touch.run(now, r.session).changes === 1
          const row = applied ? id("msg") : null
          if (row !== null) insertMessage.run(row, r.session, now, now)
          revived.push({ session: r.session, how: r.how, applied, row })
        } else {
          const child = id("ses", true)
          const applied = addChild.run(child, now, now, r.session).changes === 1
          revived.push({ session: r.session, how: r.how, applied, row: applied ? child : null })
        }
      }
    }
    hold(between(options.holdMs))
  })
  try {
    body.immediate()
    report.transactions++
    report.commits.push(Date.now())
    report.events.push(...events)
    report.messages.push(...messages)
    report.parts.push(...parts)
    if (reviveNow) {
      report.revived.push(...revived)
      reviveNow = false
      process.stdout.write("revived\n")
    }
  } catch (e) {
    report.errors.push(String((e as Error).message ?? e))
  }
}

createInterface({ input: process.stdin })
  .on("line", (line) => {
    if (line.trim() === "revive") reviveNow = true
  })
  .on("close", () => {
    stopping = true
  })

let ready = false
const loop = () => {
  step()
  if (!ready && report.transactions > 0) {
    ready = true
    process.stdout.write("ready\n")
  }
  if (stopping) {
    db.close()
    process.stdout.write(`${JSON.stringify(report satisfies WriterReport)}\n`)
    return
  }
  setTimeout(loop, between(options.gapMs))
}
loop()
