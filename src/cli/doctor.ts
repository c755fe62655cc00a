/** `ocpool doctor [--probe] [--json] [--state-dir DIR]` (SPEC §12.2): checks the setup, one line per check. */
import { Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { homedir } from "node:os"
import { delimiter, join } from "node:path"
import { isLive } from "../core/claims.js"
import { isCooling } from "../core/cooldown.js"
import { describeSlots } from "../core/pool.js"
import { resolveDbPath } from "../core/retention/dbPath.js"
import { xdgDir } from "../layers/xdg.js"
import { ChecksFailed } from "./errors.js"
import { cliPool, readState, stateDirFor } from "./stateView.js"
import { stateDirOption } from "./status.js"

export type CheckStatus = "ok" | "warn" | "fail"
export interface Check {
  readonly id: string
  readonly status: CheckStatus
  readonly detail: string
}

const onPath = (bin: string, env: NodeJS.ProcessEnv = process.env): string | undefined => {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue
    const p = join(dir, bin)
    if (existsSync(p)) return p
  }
  return undefined
}


/** Which notifier `auto` would use here (SPEC §10.5). */
export const notifierCheck = (platform: NodeJS.Platform, find: (bin: string) => string | undefined): Check => {
  if (platform === "linux" && find("notify-send") !== undefined) return { id: "notifier", status: "ok", detail: "notify-send" }
  if (platform === "darwin" && find("osascript") !== undefined) return { id: "notifier", status: "ok", detail: "osascript" }
  return { id: "notifier", status: "warn", detail: `no notifier on ${platform}: no notification channel exists` }
}

const mode = (p: string): number => statSync(p).mode & 0o777

export const runChecks = (stateFlag: string | undefined) =>
  Effect.gen(function* () {
    const checks: Array<Check> = []
    const pool = cliPool(undefined)
    const broken = pool.warnings.some((w) => w.includes("unusable") || w.includes("unreadable"))
    checks.push({
      id: "pool",
      status: broken ? "fail" : pool.warnings.length > 0 ? "warn" : "ok",
      detail: `${pool.origin}: ${describeSlots(pool.slots)}${pool.warnings.length > 0 ? `; ${pool.warnings.join("; ")}` : ""}`
    })
    const dir = stateDirFor(stateFlag)
    if (!existsSync(dir)) checks.push({ id: "state-dir", status: "ok", detail: `${dir} (not created yet; the plugin creates it with mode 700)` })
    else {
      const m = mode(dir)
      checks.push({ id: "state-dir", status: (m & 0o077) !== 0 ? "warn" : "ok", detail: `${dir} mode ${m.toString(8)}${(m & 0o077) !== 0 ? " (wider than 700)" : ""}` })
    }
    const state = yield* readState(stateFlag).pipe(Effect.either)
    if (state._tag === "Left") {
      checks.push({ id: "claims", status: "fail", detail: `${state.left.dir}: ${state.left.reason}` })
    } else {
      const s = state.right
      const live = s.processes.reduce((n, p) => n + p.claims.filter((c) => isLive(c, s.now)).length, 0)
      checks.push({ id: "claims", status: "ok", detail: `${s.processes.length} live process file(s), ${live} live claim(s); dead and stale files removed` })
      const cooling = [...s.cooldowns.values()].filter((c) => isCooling(c, s.now))
      checks.push({ id: "cooldowns", status: "ok", detail: cooling.length === 0 ? "no model cooling" : cooling.map((c) => `${c.model} ${c.reason} until ${new Date(c.until).toISOString()}`).join("; ") })
      const lock = join(s.dir, "pool.lock")
      const lockAge = existsSync(lock) ? s.now - statSync(lock).mtimeMs : undefined
      checks.push({ id: "lock", status: lockAge !== undefined && lockAge > 5_000 ? "warn" : "ok", detail: lockAge === undefined ? "free" : `held for ${Math.round(lockAge / 1000)}s${lockAge > 5_000 ? " (stale: the next pick takes it over)" : ""}` })
      const tmps = s.exists ? readdirSync(s.dir).filter((n) => n.endsWith(".tmp")).length : 0
      if (tmps > 0) checks.push({ id: "tmp-files", status: "warn", detail: `${tmps} *.tmp file(s); removed after 60 s by the next reader` })
    }
    checks.push(opencodeDbCheck())
    checks.push(notifierCheck(process.platform, (b) => onPath(b)))
    const sshConfig = join(homedir(), ".ssh", "config")
    const hop = process.env.OCPOOL_NOTIFY_HOST ?? (existsSync(sshConfig) && /^\s*Host\s+ocpool-desktop\s*$/m.test(readFileSync(sshConfig, "utf8")) ? "ocpool-desktop" : undefined)
    checks.push({ id: "ssh-hop", status: "ok", detail: hop === undefined ? "not configured (only needed on remote hosts)" : `host ${hop}` })
    checks.push({ id: "fade", status: process.platform === "linux" && onPath("gdbus") !== undefined ? "ok" : "warn", detail: process.platform === "linux" ? (onPath("gdbus") !== undefined ? "gdbus" : "gdbus not found") : `unsupported on ${process.platform}` })
    const configs = [join(xdgDir("XDG_CONFIG_HOME"), "opencode", "opencode.json"), join(xdgDir("XDG_CONFIG_HOME"), "opencode", "opencode.jsonc"), join(process.cwd(), "opencode.json"), join(process.cwd(), "opencode.jsonc")]
    const listing = configs.find((p) => existsSync(p) && readFileSync(p, "utf8").includes("opencode-pool"))
    checks.push(listing !== undefined ? { id: "plugin", status: "ok", detail: `listed in ${listing}` } : { id: "plugin", status: "warn", detail: `no opencode config lists "opencode-pool" (add "plugin": ["opencode-pool"])` })
    const [major, minor] = process.versions.node.split(".").map(Number)
    checks.push({ id: "runtime", status: major! > 20 || (major === 20 && minor! >= 19) ? "ok" : "fail", detail: `node ${process.versions.node} (needs >= 20.19)` })
    return checks
  })

export const doctorCommand = Command.make(
  "doctor",
  {
    probe: Options.boolean("probe").pipe(Options.withDescription("Also try the ssh hop (not built yet: reported as such)")),
    json: Options.boolean("json").pipe(Options.withDescription('{"checks":[{id,status,detail}],"ok":bool} on stdout')),
    stateDir: stateDirOption
  },
  (args) =>
    Effect.gen(function* () {
      const checks = yield* runChecks(Option.getOrUndefined(args.stateDir))
      const ok = checks.every((c) => c.status !== "fail")
      if (args.json) yield* Console.log(JSON.stringify({ checks, ok }))
      else for (const c of checks) yield* Console.log(`${c.status.padEnd(4)} ${c.id.padEnd(12)} ${c.detail}`)
      if (!ok) return yield* new ChecksFailed({ failed: checks.filter((c) => c.status === "fail").map((c) => c.id) })
    })
).pipe(Command.withDescription("Check the pool source, state directory, claims, cooldowns, lock, opencode database, notifier and runtime. Exit 0; 1 if a check fails."))

/** Where opencode's database is (the sweeps' resolution, SPEC §11.1) and how big it has grown. */
const opencodeDbCheck = (): { id: string; status: "ok" | "warn" | "fail"; detail: string } => {
  const resolved = resolveDbPath({ env: process.env.OPENCODE_DB, dataHome: xdgDir("XDG_DATA_HOME"), cwd: process.cwd() })
  if (resolved._tag === "Problem") return { id: "opencode-db", status: "warn", detail: resolved.reason }
  const db = resolved.path
  if (!existsSync(db)) return { id: "opencode-db", status: "warn", detail: `${db} not found` }
  const size = (p: string) => (existsSync(p) ? statSync(p).size : 0)
  const bytes = size(db) + size(`${db}-wal`)
  const mb = (bytes / 1e6).toFixed(1)
  return bytes > 1e9
    ? { id: "opencode-db", status: "warn", detail: `${db} ${mb} MB: prune it with 'ocpool sweep events' (and 'ocpool sweep sessions')` }
    : { id: "opencode-db", status: "ok", detail: `${db} ${mb} MB` }
}
