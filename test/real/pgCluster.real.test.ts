/**
 * Self-test of the throwaway PostgreSQL cluster of the real-dependency harness (test/real/pgCluster.ts):
 * a real server on 127.0.0.1 with a password, data kept across a restart, nothing left after stop().
 * Run with `npm run test:real` (Debian packages: scripts/ci-real-deps.sh).
 */
import { execFile } from "node:child_process"
import { existsSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { startPgCluster } from "./pgCluster.js"
import { tcpOpen } from "./procs.js"

interface Ran {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** psql over TCP; never throws on a non-zero exit. */
const psqlTcp = (args: ReadonlyArray<string>, password: string | undefined): Promise<Ran> =>
  new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, PGCONNECT_TIMEOUT: "5" }
    delete env["PGPASSWORD"]
    if (password !== undefined) env["PGPASSWORD"] = password
    execFile("psql", ["-X", "-At", "-w", "-v", "ON_ERROR_STOP=1", ...args], { env, timeout: 20_000, encoding: "utf8" }, (error, stdout, stderr) => {
      if (error !== null && typeof error.code !== "number") return reject(error)
      resolve({ code: error === null ? 0 : (error.code as number), stdout, stderr })
    })
  })

describe("throwaway PostgreSQL cluster (test/real/pgCluster.ts)", () => {
  it("US-52 a throwaway cluster starts on 127.0.0.1, keeps data across a restart and is removed on stop", async () => {
    const t0 = Date.now()
    const pg = await startPgCluster()
    const started = Date.now() - t0
    try {
      expect(await pg.psql("select 1")).toBe("1\n")
      expect(pg.url).toBe(`postgres://ocpool:s3cret-pw@127.0.0.1:${pg.port}/ocpool`)

      // over TCP on 127.0.0.1: the password is needed, and it works
      const tcp = ["-h", "127.0.0.1", "-p", String(pg.port), "-U", "ocpool", "-d", "ocpool"]
      const ok = await psqlTcp([...tcp, "-c", "select current_user || '@' || host(inet_server_addr())"], "s3cret-pw")
      expect(ok.stderr).toBe("")
      expect(ok.stdout).toBe("ocpool@127.0.0.1\n")
      expect((await psqlTcp([...tcp, "-c", "select 1"], "wrong")).code).not.toBe(0)
      expect((await psqlTcp([...tcp, "-c", "select 1"], undefined)).code).not.toBe(0)
      expect((await psqlTcp([pg.url, "-c", "select 2"], undefined)).stdout).toBe("2\n")
      // listening only on 127.0.0.1
      expect(await pg.psql("show listen_addresses")).toBe("127.0.0.1\n")
      expect(await pg.psql("show fsync")).toBe("off\n")
      expect(await pg.psql("show max_connections")).toBe("200\n")

      await pg.psql("create table kept (id int primary key, note text); insert into kept values (1, 'before restart')")
      const t1 = Date.now()
      await pg.restart()
      const restarted = Date.now() - t1
      expect(await pg.psql("select note from kept where id = 1")).toBe("before restart\n")

      await pg.stopOnly()
      expect(await tcpOpen("127.0.0.1", pg.port, 1_000)).toBe(false)
      expect(existsSync(pg.dir)).toBe(true)
      await pg.start()
      expect(await pg.psql("select count(*) from kept")).toBe("1\n")
      expect(pg.log()).toContain("database system is ready to accept connections")
      console.log(`US-52 pg cluster: start ${started} ms, restart ${restarted} ms`)
    } catch (e) {
      throw new Error(`${String(e)}\n--- server log ---\n${pg.log()}`)
    } finally {
      await pg.stop()
    }
    expect(existsSync(pg.dir)).toBe(false)
    expect(await tcpOpen("127.0.0.1", pg.port, 1_000)).toBe(false)
  }, 60_000)

  it("US-52 several clusters start in parallel on distinct ports and dirs", async () => {
    const all = await Promise.all([startPgCluster({ password: "p1" }), startPgCluster({ password: "it's p2" }), startPgCluster()])
    try {
      expect(new Set(all.map((c) => c.port)).size).toBe(3)
      expect(new Set(all.map((c) => c.dir)).size).toBe(3)
      for (const c of all) expect(await c.psql("select current_database()")).toBe("ocpool\n")
      expect(all[1]?.url).toContain(encodeURIComponent("it's p2"))
      expect((await psqlTcp(["-h", "127.0.0.1", "-p", String(all[1]?.port), "-U", "ocpool", "-d", "ocpool", "-c", "select 3"], "it's p2")).stdout).toBe("3\n")
    } finally {
      await Promise.all(all.map((c) => c.stop()))
    }
    for (const c of all) expect(existsSync(c.dir)).toBe(false)
  }, 60_000)
})
