/**
 * `ocpool doctor`'s state checks: the state directory (`state-dir`), the shared-state backend
 * (`state-backend`), and what the port says (issue 34: asked through `SharedState.read` and
 * `SharedState.inspect`, one port for the lot): `claims`, `plugin-loaded`, `cooldowns`, `database`
 * (the backend's store), `permits` and `leftovers` (an earlier version's files).
 */
import { Clock, Effect, Either } from "effect"
import { accessSync, constants, lstatSync, statSync } from "node:fs"
import { join } from "node:path"
import { liveLoadOf } from "../../core/pool/slotStatus.js"
import { isCooling } from "../../core/pool/cooldown.js"
import { fleetBackendText, fleetEntry, type FleetFacts } from "../../core/status.js"
import { backendLabel, SCHEMA_VERSION } from "../../core/state/fleet.js"
import { STATE_DB } from "../../core/stateTrust.js"
import { dirReason } from "../../layers/fs/dirs.js"
import { ocpoolLine } from "../../layers/install/installation.js"
import { inspectStateDir, type StateDirChoice } from "../../layers/state/StateDirFile.js"
import { SharedState, type Leftovers, type StateInspection, type StoreHealth } from "../../services/state/SharedState.js"
import type { MachineFacts } from "../../services/permits/MachineFacts.js"
import { StateUnreadable } from "../errors.js"
import { cliBackend, fleetFacts, rawUrl, readFleet, scrubPassword, type CliBackend } from "../shared/backend.js"
import { openState, portOf, stateDirFor, stateOf, VIEW_RECORDS, type StateSnapshot } from "../stateView.js"
import { bareOcpool, failedItself, guarded, oneLine, type Check } from "./check.js"
import { isoTimeOr } from "../../core/time.js"
import { permitsCheck } from "./permits.js"
import { pluginLoadedCheck } from "./plugin.js"

/** `state-dir`: where the state directory is (`--state-dir`, OCPOOL_STATE_DIR, the default), its mode, whether it is writable and trusted. */
export const stateDirCheck = (flag: string | undefined): Check => directoryCheck(stateDirFor(flag))

const directoryCheck = (choice: StateDirChoice): Check => {
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

const mib = (bytes: number): string => (bytes < 1 << 20 ? `${Math.max(1, Math.round(bytes / 1024))} KiB` : `${(bytes / (1 << 20)).toFixed(1)} MiB`)


/** `database`: the store the backend decides on (issue 32: state.db's size, its WAL's, its schema version and `PRAGMA quick_check`), as the port says. */
export const databaseCheck = (dir: string, store: StoreHealth): Check => {
  const id = "database"
  const f = store
  if (f._tag === "Missing") return { id, status: "ok", detail: `no ${STATE_DB} yet in ${dir} (the first process that writes makes it)` }
  if (f._tag === "Unreadable") return { id, status: "fail", detail: `${join(dir, STATE_DB)}: ${f.reason}` }
  if (f._tag === "InMemory") return { id, status: "ok", detail: "shared state in memory (this process only)" }
  const version =
    f.schemaVersion > SCHEMA_VERSION ? " (migrated by a newer ocpool; update opencode-pool)" : f.schemaVersion < SCHEMA_VERSION ? " (older: the next process that writes migrates it)" : ""
  const detail = `${join(dir, STATE_DB)}: ${mib(f.bytes)}, WAL ${mib(f.walBytes)}, schema version ${f.schemaVersion} (expected ${SCHEMA_VERSION})${version}; quick_check ${f.quickCheck}`
  return { id, status: f.quickCheck !== "ok" ? "fail" : f.schemaVersion > SCHEMA_VERSION ? "warn" : "ok", detail }
}

/** `leftovers`: the files an earlier version left: to be imported by the plugin's next start, or never read again (safe to delete). */
export const leftoversCheck = ({ toImport, unused }: Leftovers): ReadonlyArray<Check> => {
  const shown = (names: ReadonlyArray<string>) => `${names.slice(0, 5).join(", ")}${names.length > 5 ? ` and ${names.length - 5} more` : ""}`
  const parts = [
    ...(toImport.length > 0 ? [`${toImport.length} record file(s) of an earlier version, imported into ${STATE_DB} when the plugin next starts (${shown(toImport)})`] : []),
    ...(unused.length > 0 ? [`${unused.length} file(s) of an earlier version that nothing reads any more, safe to delete (${shown(unused)})`] : [])
  ]
  return parts.length === 0 ? [] : [{ id: "leftovers", status: "warn", detail: parts.join("; ") }]
}

/** What the state checks read: every record kind, and what the backend says of itself, through one port. */
interface Inspected {
  readonly state: StateSnapshot
  readonly inspection: StateInspection
  /** The fleet as the views show it (fleet mode), the password scrubbed. */
  readonly fleet: FleetFacts | undefined
}

/**
 * One port over the state directory (and in fleet mode PostgreSQL): first what the backend says of
 * itself (its store, leftovers and, in fleet mode, the server: a host whose lease ran out is shown once
 * as expired, as `status` shows it), then every record without the lock. A kind that cannot be read is
 * StateUnreadable.
 */
const inspectState = (flag: string | undefined) =>
  Effect.gen(function* () {
    const opened = yield* openState(flag)
    const now = yield* Clock.currentTimeMillis
    const { inspection, snapshot, fallbacks } = yield* Effect.gen(function* () {
      const port = yield* SharedState
      const inspection = yield* port.inspect(now)
      const snapshot = yield* port.read(now, VIEW_RECORDS)
      const fallbacks = (yield* port.stats).fallbacks ?? 0
      return { inspection, snapshot, fallbacks }
    }).pipe(Effect.provide(portOf(opened)), Effect.scoped)
    const fleet = fleetFacts(inspection.fleet, fallbacks, rawUrl(opened.backend))
    const state = stateOf(opened, { now, snapshot, ...(fleet === undefined ? {} : { fleet }) }, true)
    return state instanceof StateUnreadable ? yield* state : ({ state, inspection, fleet } satisfies Inspected)
  })

/** `state-backend`, from the fleet the state checks read; without a state directory to read, from a port of its own. */
const backendChecks = (backend: CliBackend, read: Either.Either<Inspected, unknown>): Effect.Effect<ReadonlyArray<Check>> =>
  (Either.isRight(read) ? Effect.succeed(read.right.fleet) : readFleet(backend)).pipe(
    Effect.map((fleet) => [backendCheck(backend, fleet, (args) => ocpoolLine(args))]),
    Effect.catchAllCause((cause) => Effect.map(failedItself("state-backend")(cause), (checks) => checks.map((c) => ({ ...c, detail: scrubPassword(c.detail, rawUrl(backend)) }))))
  )

/**
 * The checks that read shared state, each on its own, in the report's order: `state-backend`, then
 * `claims`, `plugin-loaded`, `cooldowns`, `database`, `permits`, `leftovers`. A state that cannot be
 * read fails `claims`.
 */
export const stateChecks = (stateFlag: string | undefined): Effect.Effect<ReadonlyArray<Check>, never, MachineFacts> =>
  Effect.gen(function* () {
    const backend = cliBackend()
    const read = yield* inspectState(stateFlag).pipe(
      Effect.either,
      Effect.catchAllDefect((d) => Effect.succeed(Either.left({ dir: "state dir", reason: oneLine(d) })))
    )
    const checks: Array<ReadonlyArray<Check>> = [yield* backendChecks(backend, read)]
    if (Either.isLeft(read)) return [...checks.flat(), { id: "claims", status: "fail" as const, detail: `${read.left.dir}: ${read.left.reason}` }]
    const { inspection, state: s } = read.right
    checks.push(
      yield* guarded("claims", () => {
        const live = [...liveLoadOf(s.processes, s.now).values()].reduce((n, k) => n + k, 0)
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
    checks.push(yield* guarded("database", () => databaseCheck(s.dir, inspection.store)))
    checks.push(yield* permitsCheck(s.permits))
    checks.push(yield* guarded("leftovers", () => leftoversCheck(inspection.leftovers)))
    return checks.flat()
  })
