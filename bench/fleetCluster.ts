/**
 * bench:fleet's throwaway PostgreSQL (the minimal part of test/real/pgCluster.ts; bench/ imports nothing
 * from test/): `initdb` into a temp dir, `pg_ctl start` on 127.0.0.1 at a free port with fsync,
 * synchronous_commit and full_page_writes off. As root every server command runs as the `postgres`
 * user (runuser). `stopOnly()` stops the server and keeps the data; `stop()` also removes the dir. If
 * this process exits without `stop()`, the postmaster (by its pid) is killed and the dir removed.
 */
import { execFile } from "node:child_process"
import { appendFileSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { delimiter, join } from "node:path"

export interface BenchCluster {
  /** postgres://ocpool:<password>@127.0.0.1:<port>/ocpool */
  readonly url: string
  readonly port: number
  /** Stops the server, keeping the data dir (the port is closed afterwards). */
  stopOnly(): Promise<void>
  /** Stops the server (if running) and removes the temp dir. */
  stop(): Promise<void>
}

const USER = "ocpool"
const DB = "ocpool"
const PASSWORD = "bench-pw"
export const MISSING = "PostgreSQL server not found (initdb, pg_ctl): install it with apt-get install -y postgresql, or set OCPOOL_BENCH_PG_URL"

const run = (file: string, args: ReadonlyArray<string>, cwd: string): Promise<string> =>
  new Promise((resolve, reject) => {
    execFile(file, args, { cwd, timeout: 60_000, encoding: "utf8" }, (error, stdout, stderr) => {
      if (error === null) return resolve(stdout)
      const out = (stderr.trim() !== "" ? stderr : stdout).trim()
      reject(new Error(`${file} ${args[0] ?? ""} failed: ${(out !== "" ? out : error.message).split("\n")[0]}`))
    })
  })

/** /usr/lib/postgresql/<highest>/bin, then PATH: the dir holding initdb and pg_ctl. */
const findBinDir = (): string | undefined => {
  let versions: Array<string> = []
  try {
    versions = readdirSync("/usr/lib/postgresql")
      .filter((v) => /^\d+(\.\d+)?$/.test(v))
      .sort((a, b) => Number(b) - Number(a))
      .map((v) => `/usr/lib/postgresql/${v}/bin`)
  } catch {
    // not Debian's layout
  }
  return [...versions, ...(process.env["PATH"] ?? "").split(delimiter).filter((d) => d !== "")].find((d) => existsSync(join(d, "initdb")) && existsSync(join(d, "pg_ctl")))
}

/** A TCP port on 127.0.0.1 that was free a moment ago (and is closed now). */
export const closedPort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once("error", reject)
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address()
      const port = typeof addr === "object" && addr !== null ? addr.port : 0
      srv.close(() => (port > 0 ? resolve(port) : reject(new Error("no free port"))))
    })
  })

export const startBenchCluster = async (): Promise<BenchCluster> => {
  const bin = findBinDir()
  if (bin === undefined) throw new Error(MISSING)
  const root = process.getuid?.() === 0
  const runuser = ["/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser"].find(existsSync)
  if (root && runuser === undefined) throw new Error("running as root but runuser is missing: PostgreSQL refuses to run as root")
  const asServer = (tool: string, args: ReadonlyArray<string>, cwd: string) =>
    root ? run(runuser!, ["-u", "postgres", "--", join(bin, tool), ...args], cwd) : run(join(bin, tool), args, cwd)

  const dir = mkdtempSync(join(tmpdir(), "ocpool-bench-pg-"))
  const data = join(dir, "data")
  const sock = join(dir, "sock")
  const logFile = join(dir, "server.log")
  const pwFile = join(dir, "pwfile")
  let pid: number | undefined
  const cleanup = (): void => {
    if (pid !== undefined) {
      try {
        process.kill(pid, "SIGKILL")
      } catch {
        // gone
      }
    }
    rmSync(dir, { recursive: true, force: true })
  }
  process.on("exit", cleanup)
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => process.exit(130))
  try {
    mkdirSync(sock, { mode: 0o700 })
    writeFileSync(pwFile, `${PASSWORD}\n`, { mode: 0o600 })
    writeFileSync(logFile, "", { mode: 0o600 })
    if (root) {
      const uid = Number((await run("id", ["-u", "postgres"], dir)).trim())
      const gid = Number((await run("id", ["-g", "postgres"], dir)).trim())
      for (const p of [dir, sock, pwFile, logFile]) chownSync(p, uid, gid)
    }
    await asServer("initdb", ["-D", data, "-U", USER, `--pwfile=${pwFile}`, "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--no-locale", "--no-sync"], dir)
    rmSync(pwFile, { force: true })
    let port = 0
    for (let attempt = 0; ; attempt++) {
      port = await closedPort()
      const conf = [`listen_addresses = '127.0.0.1'`, `port = ${port}`, `unix_socket_directories = '${sock}'`, "fsync = off", "synchronous_commit = off", "full_page_writes = off", "max_connections = 100"]
      appendFileSync(join(data, "postgresql.conf"), `\n# bench/fleetCluster.ts\n${conf.join("\n")}\n`)
      try {
        await asServer("pg_ctl", ["-D", data, "start", "-w", "-t", "60", "-l", logFile], dir)
        break
      } catch (e) {
        // lost the race for the port: once more on another one
        if (attempt > 0 || !/could not bind|already in use|could not create any TCP/i.test(readFileSync(logFile, "utf8"))) throw e
      }
    }
    pid = Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0])
    const psql = existsSync(join(bin, "psql")) ? join(bin, "psql") : "psql"
    await run(psql, ["-X", "-At", "-v", "ON_ERROR_STOP=1", "-h", sock, "-p", String(port), "-U", USER, "-d", "postgres", "-c", `create database ${DB}`], dir)
    const stopOnly = async (): Promise<void> => {
      if (pid === undefined) return
      await asServer("pg_ctl", ["-D", data, "stop", "-m", "fast", "-w", "-t", "60"], dir)
      pid = undefined
    }
    return {
      url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${DB}`,
      port,
      stopOnly,
      stop: async () => {
        await stopOnly().catch(() => undefined)
        cleanup()
        process.off("exit", cleanup)
      }
    }
  } catch (e) {
    cleanup()
    process.off("exit", cleanup)
    throw e
  }
}
