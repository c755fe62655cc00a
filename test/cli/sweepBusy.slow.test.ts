/**
 * `ocpool sweep` against a database another connection holds (SPEC §11.1): exit 75 after the real
 * busy back-off (about 40 s of waiting), so it runs with the slow cases (`npm run test:stress`), not
 * in `npm test`.
 */
import { describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { execFileSync, spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeAll } from "vitest"
import { OpencodeDb } from "../retention/opencodeDb.js"

const root = new URL("../../", import.meta.url).pathname
const cli = join(root, "bin/ocpool.js")
const DAY = 86_400_000

beforeAll(() => {
  if (!existsSync(join(root, "dist/cli.js"))) execFileSync(process.execPath, [join(root, "scripts/build.mjs")], { cwd: root })
})

const dirs: Array<string> = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

/** A temp home: an opencode database with one old session (3 events) and one fresh one, and a data dir. */
const setup = () => {
  const dir = mkdtempSync(join(tmpdir(), "ocpool-sweep-busy-"))
  dirs.push(dir)
  const dataHome = join(dir, "data")
  mkdirSync(join(dataHome, "opencode"), { recursive: true })
  const db = join(dataHome, "opencode", "opencode.db")
  const o = new OpencodeDb(db)
  const now = Date.now()
  const old = o.session({ created: now - 40 * DAY, title: "old" })
  o.message(old, now - 40 * DAY)
  o.events(old, [now - 40 * DAY, now - 39 * DAY, now - 38 * DAY])
  const fresh = o.session({ created: now - DAY })
  o.events(fresh, [now - DAY])
  o.db.pragma("wal_checkpoint(TRUNCATE)")
  o.close()
  return { dir, dataHome, db, old, fresh }
}

const bytes = (path: string) => readFileSync(path)

describe("ocpool sweep: a busy database (SPEC §11.1, §12.1)", () => {
  it("US-32 US-33 a database another connection has locked is busy: exit 75 after the back-off, a message that says so, nothing changed", async () => {
    const s = setup()
    const db = new Database(s.db)
    // A database in rollback-journal mode: a writer's EXCLUSIVE lock shuts readers out too.
    expect(db.pragma("journal_mode = DELETE", { simple: true })).toBe("delete")
    // Read before the lock: closing any descriptor of the file would drop this process's POSIX locks on it.
    const before = bytes(s.db)
    db.exec("BEGIN EXCLUSIVE")
    try {
      // Both sweeps at once: each waits out busy_timeout (5 s) per try and the 7.75 s back-off.
      const run = (command: string) =>
        new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
          const child = spawn(process.execPath, [cli, "sweep", command, "--db", s.db], { env: { ...process.env, OPENCODE_DB: "", XDG_DATA_HOME: s.dataHome } })
          let stdout = ""
          let stderr = ""
          child.stdout.on("data", (b: Buffer) => (stdout += b.toString()))
          child.stderr.on("data", (b: Buffer) => (stderr += b.toString()))
          child.on("close", (code) => done({ code, stdout, stderr }))
        })
      const started = Date.now()
      const [sessions, events] = await Promise.all([run("sessions"), run("events")])
      for (const r of [sessions, events]) {
        expect(r.code, r.stderr + r.stdout).toBe(75)
        expect(r.stderr).toBe(`ocpool: database ${s.db} is busy (database is locked): another connection held its lock through 5 retries; nothing changed, try again later\n`)
        expect(r.stdout).toBe("")
      }
      expect(Date.now() - started).toBeGreaterThanOrEqual(7_750)
    } finally {
      db.exec("ROLLBACK")
      db.close()
    }
    expect(bytes(s.db).equals(before)).toBe(true)
    expect(existsSync(join(s.dataHome, "opencode-pool"))).toBe(false)
  }, 90_000)

})
