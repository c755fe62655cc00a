/** `ocpool doctor [--probe] [--json] [--state-dir DIR]` (SPEC §12.2): checks the setup, one line per check. */
import { Command, Options } from "@effect/cli"
import { Cause, Console, Effect, Either, Option } from "effect"
import { accessSync, closeSync, constants, existsSync, lstatSync, statSync } from "node:fs"
import { hostname } from "node:os"
import { isAbsolute, join } from "node:path"
import { isLive } from "../core/claims.js"
import { printable, printableJson } from "../core/printable.js"
import { isCooling } from "../core/cooldown.js"
import { describeSlots } from "../core/pool.js"
import { DESKTOP_ALIAS, hopHost, isRemote, NO_HOST_REASON, type Selected } from "../core/notify/channel.js"
import { shortHostname } from "../core/notify/content.js"
import { resolveDbPath } from "../core/retention/dbPath.js"
import { entryFile, looksLikeOurPath, pluginListing } from "../core/opencodeConfig.js"
import { isOurEntryName } from "../layers/install/pluginEntry.js"
import { dirReason } from "../layers/fs/dirs.js"
import { occupied, openRegular, readTextFile } from "../layers/fs/safeRead.js"
import { configDir } from "../layers/pool/PoolConfigFile.js"
import { inspectStateDir, type StateDirChoice } from "../layers/state/StateDirFile.js"
import { homeDir, noHomeReason, xdgDir } from "../layers/fs/xdg.js"
import { FADE_UNSUPPORTED_MAC } from "../layers/notify/NotifierDesktop.js"
import { makeNotifier, readSshConfig, selectNotifier } from "../layers/notify/NotifierSelect.js"
import { probeHop, type HopProbe } from "../layers/notify/NotifierSsh.js"
import { FORCED_COMMAND_ADVICE } from "../core/notify/hopToken.js"
import { which } from "../layers/process/runArgv.js"
import { ocpoolLine } from "../layers/install/installation.js"
import { testNotification } from "./notify.js"
import { ChecksFailed } from "./errors.js"
import { opencodeGlobalDir } from "./install.js"
import { cliPool, readState, stateDirFor } from "./stateView.js"
import { stateDirOption } from "./status.js"
import { availableParallelism } from "node:os"
import { budgetsJson } from "../core/permits/view.js"
import { readMachineFacts } from "../layers/permits/MachineFactsProc.js"
import { machineText } from "./permits.js"
import { cliBudgets, cliPermitWarnings } from "./shared/budgets.js"
import { cliBackend, rawUrl, readFleet, scrubPassword, type CliBackend } from "./shared/backend.js"
import { fleetBackendText, fleetEntry, type FleetFacts } from "../core/status.js"
import { backendLabel, SCHEMA_VERSION } from "../core/state/fleet.js"
import { STATE_DB } from "../core/stateTrust.js"
import { isoTimeOr } from "../core/time.js"
import { leftoversIn, stateDbFacts } from "../layers/state/stateDbFacts.js"
import { sessionBusMissing } from "./receive.js"
import { pluginLoadedCheck } from "./doctorEngines.js"
import { modelsCheck } from "./doctorModels.js"

export type CheckStatus = "ok" | "warn" | "fail"
export interface Check {
  readonly id: string
  readonly status: CheckStatus
  readonly detail: string
}

/** The facts the notification checks read: the environment (PATH, SSH_*, OCPOOL_NOTIFY_HOST), the platform and the home directory. */
export interface NotifyFacts {
  readonly env: NodeJS.ProcessEnv
  readonly platform: string
  readonly home: string | undefined
}

const liveFacts = (): NotifyFacts => ({ env: process.env, platform: process.platform, home: homeDir() })

const selectionOptions = (f: NotifyFacts, fade: boolean) => ({ via: "auto" as const, notifyHost: undefined, fade, env: f.env, platform: f.platform, home: f.home })

/** A `none` selection's reason followed by what it means. */
const noChannel = (reason: string): string => `${reason}${reason.includes(":") ? ";" : ":"} no notification channel exists`

/** `ocpool <args>` as a hint writes it when how ocpool runs from here is not asked (layers/install/installation.ts `ocpoolLine`). */
const bareOcpool = (args: string): string => `ocpool ${args}`

/**
 * Which channel `auto` would use here (SPEC §10.5), as the plugin selects it: its name (`ssh to <host>`
 * for the hop), or `warn` with the reason when it is `none`.
 */
export const notifierDetail = (selected: Selected, busMissing?: string, ocpool: (args: string) => string = bareOcpool): Check => {
  switch (selected.channel) {
    case "none":
      return { id: "notifier", status: "warn", detail: noChannel(selected.reason) }
    case "ssh":
      return { id: "notifier", status: "ok", detail: `ssh to ${selected.host} (this is an SSH session)` }
    case "notify-send":
      // notify-send is installed, but without a session bus it has no daemon to show anything
      return busMissing === undefined
        ? { id: "notifier", status: "ok", detail: selected.channel }
        : { id: "notifier", status: "warn", detail: `notify-send, but ${busMissing}: nothing would show (${ocpool("doctor --probe")} tries)` }
    default:
      return { id: "notifier", status: "ok", detail: selected.channel }
  }
}

/** Where the hop host comes from (SPEC §10.5): `OCPOOL_NOTIFY_HOST`, then `Host ocpool-desktop` in ~/.ssh/config. */
export const sshHopCheck = (f: NotifyFacts): Check => {
  const fromEnv = f.env.OCPOOL_NOTIFY_HOST?.trim() ?? ""
  const remote = isRemote(f.env)
  if (fromEnv !== "") return { id: "ssh-hop", status: "ok", detail: `host ${fromEnv} (from OCPOOL_NOTIFY_HOST)${remote ? "" : "; used only when opencode runs in an SSH session"}` }
  const config = readSshConfig(f.home)
  if (config !== undefined && hopHost(undefined, undefined, config) !== undefined) {
    return { id: "ssh-hop", status: "ok", detail: `host ${DESKTOP_ALIAS} (from ~/.ssh/config)${remote ? "" : "; used only when opencode runs in an SSH session"}` }
  }
  return remote
    ? { id: "ssh-hop", status: "warn", detail: `not configured, and this is an SSH session: notifications from here go nowhere (${NO_HOST_REASON})` }
    : { id: "ssh-hop", status: "ok", detail: "not configured (only needed when opencode runs in an SSH session)" }
}

/** Whether popups can be closed by fade (SPEC §10.8): gdbus on Linux; unsupported on macOS. */
export const fadeCheck = (f: NotifyFacts): Check => {
  if (f.platform === "darwin") return { id: "fade", status: "warn", detail: FADE_UNSUPPORTED_MAC }
  if (f.platform !== "linux") return { id: "fade", status: "warn", detail: `fade is unsupported on ${f.platform}` }
  const gdbus = which("gdbus", f.env)
  return gdbus !== undefined ? { id: "fade", status: "ok", detail: `gdbus (${gdbus})` } : { id: "fade", status: "warn", detail: "gdbus is not on PATH: popups stay until dismissed" }
}

/** The title of the `--probe` notification. */
export const PROBE_TITLE = "opencode — ocpool doctor --probe"

/** `--probe`: a test notification through the channel `auto` selects, and whether it was delivered. */
export const probeCheck = (f: NotifyFacts, hostName: string = hostname()): Effect.Effect<Check> =>
  Effect.gen(function* () {
    const notifier = makeNotifier({ ...selectionOptions(f, false), hostname: hostName })
    const d = yield* notifier.send(testNotification(PROBE_TITLE, shortHostname(hostName)), "")
    return d.ok
      ? { id: "probe", status: "ok" as const, detail: `test notification delivered via ${d.channel}` }
      : { id: "probe", status: "fail" as const, detail: `test notification not delivered via ${d.channel}: ${d.reason ?? "no reason given"}` }
  })

/** The hop host the checks name: `OCPOOL_NOTIFY_HOST`, then the alias `ocpool-desktop` of ~/.ssh/config (SPEC §10.5). */
const configuredHopHost = (f: NotifyFacts): string | undefined => hopHost(f.env.OCPOOL_NOTIFY_HOST, undefined, readSshConfig(f.home))

/** The `hop-command` check from what answered the probe (see `hopCommandCheck`). */
export const hopCommandDetail = (host: string, p: HopProbe): Check => {
  switch (p.answer._tag) {
    case "Receiver":
      return { id: "hop-command", status: "ok", detail: `${host} answers with its forced command: ocpool receive read the probe` }
    case "Shell":
      return {
        id: "hop-command",
        status: "warn",
        detail: `${host} ran the probe in a login shell, not the forced command ocpool receive (${p.answer.line}): ${FORCED_COMMAND_ADVICE}; otherwise notification text reaches a shell there`
      }
    case "OldReceiver":
      return {
        id: "hop-command",
        status: "warn",
        detail: `${host} answers with an ocpool receive older than the hop token: it would show every notification as an unrecognised message; update opencode-pool on the desktop`
      }
    case "NoAnswer":
      return p.failure === undefined
        ? { id: "hop-command", status: "warn", detail: `${host} did not answer the probe as ocpool receive does (ssh exited 0): is the forced command of its key ocpool receive?` }
        : { id: "hop-command", status: "warn", detail: `${host} could not be probed: ${p.failure}` }
  }
}

/**
 * `--probe`, when a hop host is configured: whether that host runs `ocpool receive` as the forced
 * command of the hop key. It is sent the probe payload as a hop token (one word a shell cannot act
 * on; `ocpool receive` shows nothing and answers a fixed line), within HOP_KILL_MS. A login shell that
 * answers instead (an ordinary ssh host, a key without `command="ocpool receive"`) is a warning.
 */
export const hopCommandCheck = (f: NotifyFacts): Effect.Effect<ReadonlyArray<Check>> => {
  const host = configuredHopHost(f)
  return host === undefined ? Effect.succeed([]) : probeHop(host, f.env).pipe(Effect.map((p) => [hopCommandDetail(host, p)]))
}

/** One line of whatever was thrown, bounded: a check that throws reports this as its failure. */
const oneLine = (e: unknown): string => {
  try {
    const text = e instanceof Error ? `${e.name}: ${e.message}` : typeof e === "object" && e !== null && "message" in e ? String((e as { message: unknown }).message) : String(e)
    const line = text.split("\n")[0] ?? ""
    return line.length > 200 ? `${line.slice(0, 200)}…` : line
  } catch {
    return "unknown error"
  }
}

/** Runs one check; anything it throws becomes that check's failure, so the report is always printed whole. */
const guarded = (id: string, run: () => Check | ReadonlyArray<Check>): Effect.Effect<ReadonlyArray<Check>> =>
  Effect.try({
    try: () => {
      const out = run()
      return Array.isArray(out) ? (out as ReadonlyArray<Check>) : [out as Check]
    },
    catch: (e) => e
  }).pipe(Effect.catchAllCause((cause) => Effect.succeed([{ id, status: "fail" as const, detail: `the check itself failed: ${oneLine(Cause.squash(cause))}` }])))

/**
 * Why a pool file in the config directory is there but cannot be opened (a symbolic link loop, a
 * dangling link, a FIFO, a directory, no permission), or `undefined` when it is absent or openable. Opens
 * without blocking and reads nothing.
 */
export const poolFileProblem = (path: string): string | undefined => {
  const opened = openRegular(path)
  if (opened._tag === "Missing") return undefined // nothing there: the chain goes on
  if (opened._tag === "Refused") return opened.reason
  closeSync(opened.fd)
  return undefined
}

const poolCheck = (): Check => {
  const pool = cliPool(undefined)
  const dir = configDir()
  const problems = dir === undefined ? [] : ["pool.txt", "pool.json"].flatMap((n) => {
    const why = poolFileProblem(join(dir, n))
    return why === undefined ? [] : [`${join(dir, n)}: ${why}`]
  })
  const notes = [...problems, ...pool.warnings, ...(dir === undefined ? [`user config directory not read: ${noHomeReason("XDG_CONFIG_HOME")}`] : [])]
  const broken = problems.length > 0 || pool.warnings.some((w) => w.includes("unusable") || w.includes("unreadable"))
  return { id: "pool", status: broken ? "fail" : notes.length > 0 ? "warn" : "ok", detail: `${pool.origin}: ${describeSlots(pool.slots)}${notes.length > 0 ? `; ${notes.join("; ")}` : ""}` }
}

const stateDirCheck = (choice: StateDirChoice): Check => {
  if (choice._tag === "NoHome") return { id: "state-dir", status: "fail", detail: choice.reason }
  const dir = choice.dir
  let st
  try {
    st = lstatSync(dir)
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    if (code === "ENOENT") return { id: "state-dir", status: "ok", detail: `${dir} (not created yet; the plugin creates it with mode 700)` }
    return { id: "state-dir", status: "fail", detail: `${dir}: ${dirReason(code ?? oneLine(e))}` }
  }
  let target = st
  if (st.isSymbolicLink()) {
    try {
      target = statSync(dir)
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code
      return { id: "state-dir", status: "fail", detail: `${dir}: ${code === "ENOENT" ? "a dangling symbolic link" : dirReason(code ?? oneLine(e))}` }
    }
  }
  if (!target.isDirectory()) return { id: "state-dir", status: "fail", detail: `${dir}: not a directory` }
  const m = target.mode & 0o777
  const writable = (() => {
    try {
      accessSync(dir, constants.W_OK | constants.X_OK)
      return true
    } catch {
      return false
    }
  })()
  const trust = inspectStateDir(dir)
  const notes = [
    ...(writable ? [] : ["not writable: the plugin would keep its state in memory"]),
    ...(trust.trusted ? [] : [`not trusted (${trust.reason}): read, never cleaned`])
  ]
  return { id: "state-dir", status: notes.length > 0 ? "warn" : "ok", detail: `${dir} mode ${m.toString(8)}${notes.length > 0 ? `; ${notes.join("; ")}` : ""}` }
}

/**
 * Which shared-state backend the CLI (and, with the same OCPOOL_STATE_URL, the plugin) uses (issue 22):
 * the files, or PostgreSQL with its URL masked, schema, round trip and schema version. A server that
 * does not answer is a warning (the plugin then decides on the state directory), as is a schema
 * migrated by a newer ocpool or an OCPOOL_STATE_URL that cannot be used.
 */
export const backendCheck = (backend: CliBackend, fleet: FleetFacts | undefined, ocpool: (args: string) => string = bareOcpool): Check => {
  const id = "state-backend"
  if (backend.state.backend === "sqlite" || fleet === undefined) {
    return backend.warnings.length > 0 ? { id, status: "warn", detail: backend.warnings.join("; ") } : { id, status: "ok", detail: backendLabel(backend.state) }
  }
  const f = fleetEntry(fleet)
  if (!f.reachable) return { id, status: "warn", detail: `${fleetBackendText(f)} did not answer (${f.reason}): the plugin decides on the state directory until it does` }
  const live = f.hosts.filter((h) => h.live).length
  const version =
    f.schemaVersion > SCHEMA_VERSION
      ? ": migrated by a newer ocpool; update opencode-pool on this host"
      : f.schemaVersion < SCHEMA_VERSION
        ? `: not migrated (${ocpool("fleet init")} creates the schema)`
        : ""
  const detail = `${fleetBackendText(f)}; round trip ${f.roundTripMs} ms; schema version ${f.schemaVersion} (expected ${SCHEMA_VERSION})${version}; host ${f.host}; ${f.hosts.length} host${f.hosts.length === 1 ? "" : "s"} on record, ${live} live`
  return { id, status: version === "" ? "ok" : "warn", detail }
}

/** Where opencode's config files are (global, project, `OPENCODE_CONFIG`); the global ones are skipped without a home. */
export const opencodeConfigs = (env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): ReadonlyArray<string> => {
  const global = opencodeGlobalDir(env)
  const explicit = env.OPENCODE_CONFIG !== undefined && env.OPENCODE_CONFIG !== "" ? [isAbsolute(env.OPENCODE_CONFIG) ? env.OPENCODE_CONFIG : join(cwd, env.OPENCODE_CONFIG)] : []
  return [
    ...(global === undefined ? [] : [join(global, "opencode.json"), join(global, "opencode.jsonc")]),
    join(cwd, "opencode.json"),
    join(cwd, "opencode.jsonc"),
    ...explicit
  ]
}

/** Largest opencode config file the plugin check reads. */
const CONFIG_MAX_BYTES = 1 << 20

/**
 * Which opencode config files exist (opencode reads them all), whether one lists this plugin, and
 * whether each listed entry that names a file (a `file://` URL or a path) points to one that can be
 * read: a moved checkout or a removed global install is a failure, not a silent non-load.
 */
export const pluginCheck = (env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): Check => {
  const invalid: Array<string> = []
  const read: Array<string> = []
  const listed: Array<string> = []
  const broken: Array<string> = []
  const stale: Array<string> = []
  const ocpool = (args: string) => ocpoolLine(args, env, cwd)
  for (const path of opencodeConfigs(env, cwd)) {
    // non-blocking, capped, regular files only: a FIFO swapped in after any check cannot block the doctor
    const file = readTextFile(path, CONFIG_MAX_BYTES)
    if (file._tag === "Missing") continue
    if (file._tag === "Refused") {
      invalid.push(file.tooLarge === true ? `${path}: larger than 1 MiB, not read` : `${path}: ${file.reason}`)
      continue
    }
    read.push(path)
    const listing = pluginListing(file.text, isOurEntryName)
    if (listing._tag === "Invalid") invalid.push(`${path}: not valid JSONC (${listing.reason})`)
    // an entry whose file is gone from a path named opencode-pool (a moved checkout): not ours to edit, but named
    const gone = pluginListing(file.text, (name) => {
      const target = entryFile(name)
      return target !== undefined && looksLikeOurPath(target) && !occupied(target)
    })
    if (gone._tag === "Listed") for (const entry of gone.entries) stale.push(`${entry} in ${path}: no such file (delete that entry by hand)`)
    if (listing._tag !== "Listed") continue
    for (const entry of listing.entries) {
      const target = entryFile(entry)
      const opened = target === undefined ? undefined : readTextFile(target, 64 << 20)
      if (opened !== undefined && opened._tag !== "Text") broken.push(`${entry} in ${path}: ${opened._tag === "Missing" ? "no such file" : opened.reason}`)
      else listed.push(`${path} (${entry})`)
    }
  }
  const reads = read.length === 0 ? "opencode reads no config file here" : `opencode reads ${read.join(", ")}`
  const problems = [...broken, ...stale, ...invalid]
  const more = [...stale, ...invalid]
  if (broken.length > 0 || (stale.length > 0 && listed.length === 0)) return { id: "plugin", status: "fail", detail: `${reads}; the plugin entry does not load: ${problems.join("; ")}; run ${ocpool("init --global")} again` }
  if (listed.length > 0) return { id: "plugin", status: stale.length > 0 ? "warn" : "ok", detail: `listed in ${listed.join(", ")}; ${reads}${more.length > 0 ? `; ${more.join("; ")}` : ""}` }
  return { id: "plugin", status: "warn", detail: `no opencode config lists opencode-pool (run ${ocpool("init --global")}); ${reads}${invalid.length > 0 ? `; ${invalid.join("; ")}` : ""}` }
}

const mib = (bytes: number): string => (bytes < 1 << 20 ? `${Math.max(1, Math.round(bytes / 1024))} KiB` : `${(bytes / (1 << 20)).toFixed(1)} MiB`)

/** state.db (issue 32): its size, its WAL's, its schema version and `PRAGMA quick_check`. */
export const databaseCheck = (dir: string): Check => {
  const id = "database"
  const f = stateDbFacts(dir)
  if (f._tag === "Missing") return { id, status: "ok", detail: `no ${STATE_DB} yet in ${dir} (the first process that writes makes it)` }
  if (f._tag === "Unreadable") return { id, status: "fail", detail: `${join(dir, STATE_DB)}: ${f.reason}` }
  const version =
    f.schemaVersion > SCHEMA_VERSION ? " (migrated by a newer ocpool; update opencode-pool)" : f.schemaVersion < SCHEMA_VERSION ? " (older: the next process that writes migrates it)" : ""
  const detail = `${join(dir, STATE_DB)}: ${mib(f.bytes)}, WAL ${mib(f.walBytes)}, schema version ${f.schemaVersion} (expected ${SCHEMA_VERSION})${version}; quick_check ${f.quickCheck}`
  return { id, status: f.quickCheck !== "ok" ? "fail" : f.schemaVersion > SCHEMA_VERSION ? "warn" : "ok", detail }
}

/** The files an earlier version left: to be imported by the plugin's next start, or never read again (safe to delete). */
export const leftoversCheck = (dir: string): ReadonlyArray<Check> => {
  const { toImport, unused } = leftoversIn(dir)
  const shown = (names: ReadonlyArray<string>) => `${names.slice(0, 5).join(", ")}${names.length > 5 ? ` and ${names.length - 5} more` : ""}`
  const parts = [
    ...(toImport.length > 0 ? [`${toImport.length} record file(s) of an earlier version, imported into ${STATE_DB} when the plugin next starts (${shown(toImport)})`] : []),
    ...(unused.length > 0 ? [`${unused.length} file(s) of an earlier version that nothing reads any more, safe to delete (${shown(unused)})`] : [])
  ]
  return parts.length === 0 ? [] : [{ id: "leftovers", status: "warn", detail: parts.join("; ") }]
}

/** The checks that read the state directory, each on its own; a state that cannot be read fails `claims`. */
const stateChecks = (stateFlag: string | undefined): Effect.Effect<ReadonlyArray<Check>> =>
  Effect.gen(function* () {
    const state = yield* readState(stateFlag).pipe(
      Effect.either,
      Effect.catchAllDefect((d) => Effect.succeed(Either.left({ dir: "state dir", reason: oneLine(d) })))
    )
    if (Either.isLeft(state)) return [{ id: "claims", status: "fail" as const, detail: `${state.left.dir}: ${state.left.reason}` }]
    const s = state.right
    const checks: Array<ReadonlyArray<Check>> = []
    checks.push(
      yield* guarded("claims", () => {
        const live = s.processes.reduce((n, p) => n + p.claims.filter((c) => isLive(c, s.now)).length, 0)
        return { id: "claims", status: "ok", detail: `${s.processes.length} live process(es) with claims, ${live} live claim(s)` }
      })
    )
    checks.push(yield* guarded("plugin-loaded", () => pluginLoadedCheck(s.engines ?? [], s.now)))
    checks.push(
      yield* guarded("cooldowns", () => {
        const cooling = [...s.cooldowns.values()].filter((c) => isCooling(c, s.now))
        return { id: "cooldowns", status: "ok", detail: cooling.length === 0 ? "no model cooling" : cooling.map((c) => `${c.model} ${c.reason} until ${isoTimeOr(c.until)}`).join("; ") }
      })
    )
    checks.push(yield* guarded("database", () => databaseCheck(s.dir)))
    checks.push(
      yield* guarded("permits", () => {
        // heavy-work budgets (issue 21): what is held and waited for; a holder gone is freed by the next permit step
        const budgets = budgetsJson(cliBudgets(), s.permits)
        const gone = s.permits.filter((e) => e.gone).length
        const detail = budgets
          .map((b) => `${b.name} ${b.used}/${b.capacity ?? "?"} used, ${b.queue.length} waiting${b.source === null ? "" : ` (capacity ${b.source})`}`)
          .join("; ")
        const settings = cliPermitWarnings()
        const notes = [...settings, ...(gone > 0 ? [`${gone} entr${gone === 1 ? "y" : "ies"} of a gone holder (freed at the next permit step, or '${ocpoolLine("permits release ID")}')`] : [])]
        return { id: "permits", status: notes.length > 0 ? "warn" : "ok", detail: [detail, ...notes].join("; ") }
      })
    )
    checks.push(yield* guarded("leftovers", () => leftoversCheck(s.dir)))
    return checks.flat()
  })

export const runChecks = (stateFlag: string | undefined, probe = false, facts: NotifyFacts = liveFacts()) =>
  Effect.gen(function* () {
    const groups: Array<ReadonlyArray<Check>> = []
    groups.push(yield* guarded("pool", poolCheck))
    groups.push(yield* guarded("models", () => modelsCheck(cliPool(undefined).slots, opencodeConfigs())))
    groups.push(yield* guarded("state-dir", () => stateDirCheck(stateDirFor(stateFlag))))
    const backend = cliBackend()
    groups.push(
      yield* readFleet(backend).pipe(
        Effect.map((fleet) => [backendCheck(backend, fleet, (args) => ocpoolLine(args))]),
        Effect.catchAllCause((cause) => Effect.succeed([{ id: "state-backend", status: "fail" as const, detail: scrubPassword(`the check itself failed: ${oneLine(Cause.squash(cause))}`, rawUrl(backend)) }]))
      )
    )
    groups.push(yield* stateChecks(stateFlag))
    groups.push(yield* guarded("opencode-db", opencodeDbCheck))
    groups.push(yield* guarded("notifier", () => notifierDetail(selectNotifier(selectionOptions(facts, true)), sessionBusMissing(facts.env, facts.platform, process.getuid?.()), (args) => ocpoolLine(args, facts.env))))
    groups.push(yield* guarded("ssh-hop", () => sshHopCheck(facts)))
    groups.push(yield* guarded("fade", () => fadeCheck(facts)))
    groups.push(yield* guarded("plugin", pluginCheck))
    groups.push(yield* guarded("machine", machineCheck))
    groups.push(
      yield* guarded("runtime", () => {
        const [major, minor] = process.versions.node.split(".").map(Number)
        return { id: "runtime", status: major! > 20 || (major === 20 && minor! >= 19) ? "ok" : "fail", detail: `node ${process.versions.node} (needs >= 20.19)` }
      })
    )
    if (probe) {
      const failed = (id: string) => (cause: Cause.Cause<unknown>) => Effect.succeed([{ id, status: "fail" as const, detail: `the check itself failed: ${oneLine(Cause.squash(cause))}` }])
      // both within HOP_KILL_MS, side by side: an unreachable host costs one timeout, not two
      const [hop, sent] = yield* Effect.all(
        [
          Effect.suspend(() => hopCommandCheck(facts)).pipe(Effect.catchAllCause(failed("hop-command"))),
          probeCheck(facts).pipe(
            Effect.map((c) => [c]),
            Effect.catchAllCause(failed("probe"))
          )
        ],
        { concurrency: "unbounded" }
      )
      groups.push(hop, sent)
    }
    return groups.flat()
  })

export const doctorCommand = Command.make(
  "doctor",
  {
    probe: Options.boolean("probe").pipe(
      Options.withDescription(
        `Also send a test notification ('${PROBE_TITLE}') through the channel the plugin would use (the ssh hop in an SSH session) and report it as the check 'probe': fail when not delivered. When a hop host is configured, also send it an inert probe (one token word; ocpool receive shows nothing for it) and report as 'hop-command' whether the host answers with the forced command ocpool receive: warn when a login shell answers (the host must use the forced-command key written by ocpool tunnel setup)`
      )
    ),
    json: Options.boolean("json").pipe(Options.withDescription('{"checks":[{id,status,detail}],"ok":bool} on stdout')),
    stateDir: stateDirOption
  },
  (args) =>
    Effect.gen(function* () {
      const checks = yield* runChecks(Option.getOrUndefined(args.stateDir), args.probe)
      const ok = checks.every((c) => c.status !== "fail")
      // details carry text from files (models, paths): no escape sequence reaches the terminal
      if (args.json) yield* Console.log(printableJson(JSON.stringify({ checks, ok })))
      else for (const c of checks) yield* Console.log(`${c.status.padEnd(4)} ${c.id.padEnd(12)} ${printable(c.detail)}`)
      if (!ok) return yield* new ChecksFailed({ failed: checks.filter((c) => c.status === "fail").map((c) => c.id) })
    })
).pipe(Command.withDescription(
    "Check the pool source, the slot models (known to opencode's model catalog or config, their providers' credentials), state directory, shared-state backend (state.db, or with OCPOOL_STATE_URL the PostgreSQL server: URL masked, round trip, schema version), claims, whether a running opencode has the plugin loaded, cooldowns, the state database (size, WAL, schema version, quick_check), heavy-work permits, an earlier version's leftover files, opencode database, notifier (the channel the plugin would use), ssh hop (its host and where it comes from), fade (gdbus), plugin listing, the machine (effective CPUs and memory with their cgroup limits, pressure) and runtime; with --probe, also send a test notification, and probe the hop host for its forced command (hop-command). Exit 0; 1 if a check fails."
  ))

/** The machine's facts heavy-work capacity `auto` is read from (issue 21): effective CPUs, memory, pressure. */
const machineCheck = (): Check => {
  const facts = readMachineFacts("/", availableParallelism())
  return { id: "machine", status: "ok", detail: machineText(facts).replace(/^machine: /, "") }
}

/** Where opencode's database is (the sweeps' resolution, SPEC §11.1) and how big it has grown. */
const opencodeDbCheck = (): Check => {
  const dataHome = xdgDir("XDG_DATA_HOME")
  if (dataHome === undefined && !isAbsolute(process.env.OPENCODE_DB ?? "")) return { id: "opencode-db", status: "warn", detail: noHomeReason("XDG_DATA_HOME") }
  const resolved = resolveDbPath({ env: process.env.OPENCODE_DB, dataHome: dataHome ?? "/", cwd: process.cwd() })
  if (resolved._tag === "Problem") return { id: "opencode-db", status: "warn", detail: resolved.reason }
  const db = resolved.path
  if (!existsSync(db)) return { id: "opencode-db", status: "warn", detail: `${db} not found` }
  const size = (p: string) => (existsSync(p) ? statSync(p).size : 0)
  const bytes = size(db) + size(`${db}-wal`)
  const mb = (bytes / 1e6).toFixed(1)
  return bytes > 1e9
    ? { id: "opencode-db", status: "warn", detail: `${db} ${mb} MB: prune it with '${ocpoolLine("sweep events")}' (and '${ocpoolLine("sweep sessions")}')` }
    : { id: "opencode-db", status: "ok", detail: `${db} ${mb} MB` }
}
