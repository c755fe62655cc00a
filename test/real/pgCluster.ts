/**
 * A real, throwaway PostgreSQL cluster for tests (fleet mode's PostgreSQL backend): `initdb` into a
 * fresh temp dir, then `pg_ctl start` listening only on 127.0.0.1 at a free port (unix socket inside
 * the temp dir), tuned for speed (fsync, synchronous_commit and full_page_writes off). TCP logins
 * need the password (scram-sha-256); the unix socket is trusted (that is what `psql()` uses).
 *
 * PostgreSQL refuses to run as root: as root every server command (initdb, pg_ctl) runs as the
 * `postgres` system user through `runuser -u postgres --` (or `su postgres -s /bin/sh -c`), and the
 * temp dir is chowned to it; otherwise everything runs as the current user. The postmaster pid and
 * the temp dir are tracked (test/real/procs.ts), with a watchdog, so a crashed run leaves nothing.
 */
import { execFile } from "node:child_process"
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, appendFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, join } from "node:path"
import { freePort, shQuote, sleep, tcpOpen, trackDir, trackPid, untrackDir, untrackPid, watchdog } from "./procs.js"

export interface PgClusterOptions {
  /** Password of the superuser role `ocpool` (default `s3cret-pw`). */
  readonly password?: string
}

export interface PgCluster {
  /** postgres://ocpool:<password>@127.0.0.1:<port>/ocpool */
  readonly url: string
  readonly port: number
  /** The temp dir holding everything (data/, sock/, server.log); removed by stop(). */
  readonly dir: string
  /** Stops the server (pg_ctl stop -m fast) and removes the dir. */
  stop(): Promise<void>
  /** Stops (fast) and starts again on the same port and data: the data survives. */
  restart(): Promise<void>
  /** Stops the server, keeping the data so `start()` can bring it back. */
  stopOnly(): Promise<void>
  /** Starts the server again after `stopOnly()` (no-op while running). */
  start(): Promise<void>
  /** Runs `sql` with `psql -X -At -v ON_ERROR_STOP=1` over the unix socket; resolves with stdout. */
  psql(sql: string): Promise<string>
  /** The server log (for failure messages). */
  log(): string
}

const USER = "ocpool"
const DB = "ocpool"
const MISSING = "PostgreSQL server not found (initdb, pg_ctl): install the Debian package postgresql (apt-get install -y postgresql)"

/** Runs a command; rejects with its stderr (or stdout) on a non-zero exit. */
const run = (file: string, args: ReadonlyArray<string>, cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<string> =>
  new Promise((resolve, reject) => {
    execFile(file, args, { cwd, env, timeout: 60_000, encoding: "utf8" }, (error, stdout, stderr) => {
      if (error === null) return resolve(stdout)
      const out = (stderr.trim() !== "" ? stderr : stdout).trim()
      reject(new Error(`${[file, ...args].join(" ")} failed: ${out !== "" ? out : error.message}`))
    })
  })

const versionDirs = (): Array<string> => {
  try {
    return readdirSync("/usr/lib/postgresql")
      .filter((v) => /^\d+(\.\d+)?$/.test(v))
      .sort((a, b) => Number(b) - Number(a))
      .map((v) => `/usr/lib/postgresql/${v}/bin`)
  } catch {
    return []
  }
}

/** The dir holding initdb and pg_ctl: /usr/lib/postgresql/<highest>/bin, then PATH. */
const findBinDir = (): string | undefined =>
  [...versionDirs(), ...(process.env["PATH"] ?? "").split(delimiter).filter((d) => d !== "")].find(
    (d) => existsSync(join(d, "initdb")) && existsSync(join(d, "pg_ctl"))
  )

/** How to run a server command: directly, or as `postgres` when we are root. */
const runner = (root: boolean): ((file: string, args: ReadonlyArray<string>, cwd: string) => Promise<string>) => {
  if (!root) return (file, args, cwd) => run(file, args, cwd)
  const runuser = ["/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser"].find(existsSync)
  if (runuser !== undefined) return (file, args, cwd) => run(runuser, ["-u", "postgres", "--", file, ...args], cwd)
  return (file, args, cwd) => run("su", ["postgres", "-s", "/bin/sh", "-c", [file, ...args].map(shQuote).join(" ")], cwd)
}

export const startPgCluster = async (options: PgClusterOptions = {}): Promise<PgCluster> => {
  const bin = findBinDir()
  if (bin === undefined) throw new Error(MISSING)
  const psqlBin = existsSync(join(bin, "psql")) ? join(bin, "psql") : "psql"
  const password = options.password ?? "s3cret-pw"
  const root = process.getuid?.() === 0
  const asServer = runner(root)

  const dir = mkdtempSync(join(tmpdir(), "ocpool-pg-")) // mode 0700; /tmp above it is world-traversable
  trackDir(dir)
  const stopDirDog = watchdog([], [dir])
  const data = join(dir, "data")
  const sock = join(dir, "sock")
  const logFile = join(dir, "server.log")
  const pwFile = join(dir, "pwfile")
  mkdirSync(sock, { mode: 0o700 })
  writeFileSync(pwFile, `${password}\n`, { mode: 0o600 })
  writeFileSync(logFile, "", { mode: 0o600 })
  if (root) {
    const uid = Number((await run("id", ["-u", "postgres"], dir)).trim())
    const gid = Number((await run("id", ["-g", "postgres"], dir)).trim())
    for (const p of [dir, sock, pwFile, logFile]) chownSync(p, uid, gid)
  }

  const fail = (e: unknown): never => {
    stopDirDog()
    rmSync(dir, { recursive: true, force: true })
    untrackDir(dir)
    throw e
  }

  const initArgs = ["-D", data, "-U", USER, `--pwfile=${pwFile}`, "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--no-locale", "--no-sync", "--no-instructions"]
  await asServer(join(bin, "initdb"), initArgs, dir).catch(fail)
  rmSync(pwFile, { force: true })

  let port = 0
  const configure = async (): Promise<void> => {
    port = await freePort()
    // appended: the last setting of a name wins, so a retry on a new port just appends again
    const conf = [`listen_addresses = '127.0.0.1'`, `port = ${port}`, `unix_socket_directories = '${sock}'`, "fsync = off", "synchronous_commit = off", "full_page_writes = off", "max_connections = 200"]
    appendFileSync(join(data, "postgresql.conf"), `\n# test/real/pgCluster.ts\n${conf.join("\n")}\n`)
  }

  let pid: number | undefined
  let stopPidDog: (() => void) | undefined
  const pgCtl = (args: ReadonlyArray<string>): Promise<string> => asServer(join(bin, "pg_ctl"), ["-D", data, ...args], dir)
  const readPid = (): number | undefined => {
    try {
      const n = Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0])
      return Number.isInteger(n) && n > 0 ? n : undefined
    } catch {
      return undefined
    }
  }
  const start = async (): Promise<void> => {
    if (pid !== undefined) return
    await pgCtl(["start", "-w", "-t", "60", "-l", logFile])
    pid = readPid()
    trackPid(pid)
    stopPidDog = pid === undefined ? undefined : watchdog([pid])
  }
  const stopOnly = async (): Promise<void> => {
    if (pid === undefined) return
    await pgCtl(["stop", "-m", "fast", "-w", "-t", "60"])
    untrackPid(pid)
    stopPidDog?.()
    stopPidDog = undefined
    pid = undefined
  }
  const log = (): string => {
    try {
      return readFileSync(logFile, "utf8")
    } catch {
      return ""
    }
  }

  await configure().catch(fail)
  try {
    await start()
  } catch (first) {
    // lost the race for the port to someone else: once more on another one
    if (!/could not bind|address already in use|could not create any TCP\/IP sockets/i.test(log())) fail(first)
    await configure().catch(fail)
    await start().catch(fail)
  }

  const psql = (sql: string): Promise<string> =>
    run(psqlBin, ["-X", "-At", "-v", "ON_ERROR_STOP=1", "-h", sock, "-p", String(port), "-U", USER, "-d", DB, "-c", sql], dir, { ...process.env, PGCONNECT_TIMEOUT: "10" })

  // the bootstrap superuser's own database (initdb creates only postgres/template0/template1)
  await run(psqlBin, ["-X", "-At", "-v", "ON_ERROR_STOP=1", "-h", sock, "-p", String(port), "-U", USER, "-d", "postgres", "-c", `create database ${DB}`], dir).catch(async (e: unknown) => {
    await stopOnly().catch(() => undefined)
    fail(e)
  })

  return {
    url: `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${DB}`,
    port,
    dir,
    start,
    stopOnly,
    restart: async () => {
      await stopOnly()
      await start()
    },
    stop: async () => {
      await stopOnly()
      // pg_ctl stop -w waits for postmaster.pid to go; the port is closed by then, but be sure
      for (let i = 0; i < 50 && (await tcpOpen("127.0.0.1", port, 200)); i++) await sleep(100)
      stopDirDog()
      rmSync(dir, { recursive: true, force: true })
      untrackDir(dir)
    },
    psql,
    log
  }
}
