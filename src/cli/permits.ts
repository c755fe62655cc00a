/**
 * `ocpool permits [--json] [--state-dir DIR]` (issue 21, US-51): each budget's capacity and how it was
 * found, what is used, who holds and who waits, then the machine's facts (effective CPUs, memory, pressure).
 * `ocpool permits release ID [--force]` frees a stuck permit: only when its holder is gone, or forced,
 * saying what it found (exit 0 released, 1 not).
 */
import { Args, Command, Options } from "@effect/cli"
import { Console, Context, Effect, Layer, Option } from "effect"
import { formatDuration } from "../core/time.js"
import { printable, printableJson, truncate } from "../core/printable.js"
import type { PermitView } from "../core/permits/types.js"
import { MachineFacts, type MachineFactsView } from "../services/permits/MachineFacts.js"
import { Permits, type BudgetView } from "../services/permits/Permits.js"
import type { StateUnreadable } from "./errors.js"
import { ExitWith } from "./notify.js"
import { fleetEntry, fleetSection, type FleetEntry } from "../core/status.js"
import { ownHostId } from "../layers/state/StateDirFile.js"
import { readFleet } from "./shared/backend.js"
import { permitsCliLayer } from "./shared/permits.js"
import { stateDirOption } from "./status.js"

/**
 * How the permit commands get their services from `--state-dir`: the file backend (shared/permits.ts)
 * by default; tests provide another maker (a fake queue, a temporary directory) around `runCli`.
 */
export class PermitsCliLayer extends Context.Reference<PermitsCliLayer>()("ocpool/PermitsCliLayer", {
  defaultValue: (): ((stateDir: Option.Option<string>) => Layer.Layer<Permits | MachineFacts, StateUnreadable>) => permitsCliLayer
}) {}

/** Runs `self` with the permit services of `stateDir` (an unusable state directory is StateUnreadable: exit 1). */
export const withPermits = <A, E>(stateDir: Option.Option<string>, self: Effect.Effect<A, E, Permits | MachineFacts>): Effect.Effect<A, E | StateUnreadable> =>
  Effect.flatMap(PermitsCliLayer, (make) => Effect.provide(self, make(stateDir)))

const GIB = 1024 ** 3

/** `3.2 GiB`, `512 MiB`. */
const bytes = (n: number): string => (n >= GIB ? `${(n / GIB).toFixed(1)} GiB` : `${Math.round(n / 1024 ** 2)} MiB`)

/** `pid 123 on host h`, and the process group an `ocpool run` holder follows. */
const holderText = (e: PermitView, host: string): string =>
  `pid ${e.holder.pid}${e.holder.host === host ? "" : ` on ${printable(e.holder.host)}`}${e.holder.group === undefined ? "" : ` group ${e.holder.group.pgid}`}`

const entryLine = (e: PermitView, now: number, host: string, position?: number): string => {
  const session = e.holder.session === undefined ? "" : `  session ${printable(e.holder.session)}`
  const time = position === undefined ? `since ${formatDuration(now - (e.grantedAt ?? now))}` : `waiting ${formatDuration(now - e.requestedAt)}`
  const marks = [e.pausedAt !== undefined ? "[paused: client away]" : "", e.gone ? (position === undefined ? "[holder gone]" : "[requester gone]") : ""].filter((m) => m !== "").join(" ")
  return `    ${position === undefined ? "" : `${position}. `}${e.id}  ${holderText(e, host)}${session}  via ${e.holder.via}  weight ${e.weight}  ${time}  ${truncate(printable(e.reason), 120)}${marks === "" ? "" : `  ${marks}`}`
}

/** The lines of one budget: its header, its holders, its queue. */
export const budgetText = (b: BudgetView, now: number, host: string): ReadonlyArray<string> => [
  `${printable(b.name)}: ${b.used}/${b.capacity} used, ${b.holders.length} holder${b.holders.length === 1 ? "" : "s"}, ${b.queue.length} waiting  (capacity ${printable(b.source)})`,
  ...(b.holders.length === 0 ? [] : ["  holders:", ...b.holders.map((e) => entryLine(e, now, host))]),
  ...(b.queue.length === 0 ? [] : ["  queue:", ...b.queue.map((e, i) => entryLine(e, now, host, i + 1))])
]

const pct = (n: number | undefined): string => (n === undefined ? "n/a" : `${n.toFixed(2)}%`)

/** One line: effective CPUs with the limit found, memory with its limit, CPU and memory pressure. */
export const machineText = (m: MachineFactsView): string => {
  const online = m.cpus.source === "online" ? "" : `; ${m.cpus.online} online`
  const cpus = `${Number.isInteger(m.cpus.cpus) ? m.cpus.cpus : m.cpus.cpus.toFixed(2)} CPUs (${printable(m.cpus.source)}${online})`
  const mem = [
    m.memory.availableBytes === undefined ? undefined : `${bytes(m.memory.availableBytes)} available`,
    m.memory.totalBytes === undefined ? undefined : `of ${bytes(m.memory.totalBytes)}`,
    m.memory.limitBytes === undefined ? undefined : `limit ${bytes(m.memory.limitBytes)}${m.memory.limitSource === undefined ? "" : ` (${printable(m.memory.limitSource)})`}`
  ].filter((p) => p !== undefined)
  const pressure = m.pressure.cpu === undefined && m.pressure.memory === undefined ? "pressure n/a" : `pressure cpu ${pct(m.pressure.cpu)} memory ${pct(m.pressure.memory)} (some avg10)`
  return `machine: ${cpus}, memory ${mem.length === 0 ? "n/a" : mem.join(" ")}, ${pressure}, cgroup ${m.cgroup.version}`
}

const entryJson = (e: PermitView, now: number, position?: number) => ({
  id: e.id,
  ...(position === undefined ? {} : { position }),
  pid: e.holder.pid,
  host: e.holder.host,
  session: e.holder.session ?? null,
  via: e.holder.via,
  group: e.holder.group?.pgid ?? null,
  weight: e.weight,
  reason: e.reason,
  requestedAt: e.requestedAt,
  grantedAt: e.grantedAt ?? null,
  ...(position === undefined ? { heldMs: now - (e.grantedAt ?? now) } : { waitingMs: now - e.requestedAt }),
  gone: e.gone,
  paused: e.pausedAt !== undefined
})

/** The machine's facts with every fact the kernel did not give as null (a stable JSON shape). */
const machineJson = (m: MachineFactsView) => ({
  cpus: m.cpus,
  memory: { totalBytes: m.memory.totalBytes ?? null, availableBytes: m.memory.availableBytes ?? null, limitBytes: m.memory.limitBytes ?? null, limitSource: m.memory.limitSource ?? null },
  cgroup: m.cgroup,
  pressure: { cpu: m.pressure.cpu ?? null, memory: m.pressure.memory ?? null }
})

/** `ocpool permits --json`: one object, every budget and the machine's facts; in fleet mode the hosts (issue 22). */
export const permitsJson = (budgets: ReadonlyArray<BudgetView>, machine: MachineFactsView, now: number, fleet?: FleetEntry) => ({
  budgets: budgets.map((b) => ({
    name: b.name,
    capacity: b.capacity,
    source: b.source,
    used: b.used,
    holders: b.holders.map((e) => entryJson(e, now)),
    queue: b.queue.map((e, i) => entryJson(e, now, i + 1))
  })),
  machine: machineJson(machine),
  ...(fleet === undefined ? {} : { fleet })
})

export interface PermitsFlags {
  readonly json: boolean
  readonly stateDir: Option.Option<string>
}

export const permitsRun = (flags: PermitsFlags) =>
  withPermits(
    flags.stateDir,
    Effect.gen(function* () {
      const permits = yield* Permits
      const facts = yield* MachineFacts
      // with OCPOOL_STATE_URL the budgets are the fleet's (the port reads them), and each host is summed up
      const [budgets, machine, seen] = yield* Effect.all([permits.status, facts.read, readFleet()], { concurrency: "unbounded" })
      const now = Date.now()
      const fleet = seen === undefined ? undefined : fleetEntry(seen)
      if (flags.json) return yield* Console.log(printableJson(JSON.stringify(permitsJson(budgets, machine, now, fleet))))
      // entries of another host are marked `on HOST`: this host as the plugin names itself (OCPOOL_HOST_ID, else the hostname)
      const host = ownHostId()
      // every line through the one printable filter: reasons, hosts, sessions and budget names come from peers and clients
      yield* Console.log([...budgets.flatMap((b) => budgetText(b, now, host)), ...(fleet === undefined ? [] : fleetSection(fleet, now)), machineText(machine)].map(printable).join("\n"))
    })
  )

/** What `permits release` found: the line, its JSON, its exit code. */
export const releaseOutcome = (
  id: string,
  force: boolean,
  result: { readonly answer: { readonly state: string; readonly cause?: string; readonly reason?: string }; readonly found: PermitView | undefined }
): { readonly line: string; readonly json: object; readonly code: 0 | 1 } => {
  const { answer, found } = result
  const who = found === undefined ? undefined : found.holder.group === undefined ? `pid ${found.holder.pid}` : `pid ${found.holder.pid} (group ${found.holder.group.pgid})`
  const holder = found === undefined ? null : { pid: found.holder.pid, host: found.holder.host, group: found.holder.group?.pgid ?? null, gone: found.gone }
  const shown = printable(id)
  if (answer.state === "gone" || answer.state === "released") {
    const forcedAlive = answer.cause === "forced" && found !== undefined && !found.gone
    const why = who === undefined ? "" : forcedAlive ? ` (forced; holder ${who} was alive)` : ` (holder ${who} is gone)`
    return { line: `released ${shown}${why}`, json: { id, released: true, forced: answer.cause === "forced", holder }, code: 0 }
  }
  if (answer.state === "refused" && answer.reason === "holder alive" && who !== undefined) {
    const verb = found?.grantedAt === undefined ? "queued by" : "held by"
    return { line: `${shown} is ${verb} ${who} (alive): not released; --force to free it anyway`, json: { id, released: false, forced: force, holder }, code: 1 }
  }
  return { line: `no permit ${shown}`, json: { id, released: false, forced: force, holder: null }, code: 1 }
}

export const releaseRun = (flags: PermitsFlags & { readonly id: string; readonly force: boolean }) =>
  withPermits(
    flags.stateDir,
    Effect.gen(function* () {
      const permits = yield* Permits
      const out = releaseOutcome(flags.id, flags.force, yield* permits.free(flags.id, flags.force))
      yield* Console.log(flags.json ? printableJson(JSON.stringify(out.json)) : out.line)
      if (out.code !== 0) return yield* new ExitWith({ code: out.code })
    })
  )

const jsonFlag = Options.boolean("json").pipe(Options.withDescription("One JSON object on stdout"))

export const permitsReleaseCommand = Command.make(
  "release",
  {
    id: Args.text({ name: "ID" }).pipe(Args.withDescription("The permit's id, as `ocpool permits` shows it (p-…)")),
    force: Options.boolean("force").pipe(Options.withDescription("Free it even though its holder is alive")),
    json: jsonFlag,
    stateDir: stateDirOption
  },
  (a) => releaseRun({ id: a.id, force: a.force, json: a.json, stateDir: a.stateDir })
).pipe(
  Command.withDescription(
    "Free a stuck permit (held or queued): only when its holder is gone, or with --force. Says what it found: `released p-3 (holder pid 123 is gone)` exit 0; held by a live process, or no such permit: exit 1."
  )
)

export const permitsCommand = Command.make("permits", { json: jsonFlag, stateDir: stateDirOption }, (a) => permitsRun({ json: a.json, stateDir: a.stateDir })).pipe(
  Command.withDescription(
    "Show the heavy-work permits: each budget's capacity and how it was found, units used, the holders (pid, host, session, weight, reason, since) and the queue in order, then the machine's effective CPUs, memory and pressure. Exit 0."
  ),
  Command.withSubcommands([permitsReleaseCommand])
)
