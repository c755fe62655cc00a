/**
 * `ocpool sweep` against a database another connection holds (SPEC §11.1): exit 75 after the real
 * busy back-off (about 40 s of waiting), so it runs with the slow cases (`npm run test:stress`), not
 * in `npm test`.
 */
import { describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { join } from "node:path"
import { bytes, cli, setup, sweepHomes } from "./sweepHome.js"

sweepHomes()

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
