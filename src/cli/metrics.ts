/**
 * `ocpool metrics [--listen HOST:PORT] [--once] [--state-dir DIR] [--pool FILE]` (issue 36): a
 * Prometheus exporter. Each GET of `/metrics` reads the shared state afresh without the lock (a scrape
 * never takes a lock a spawn waits for) and serves the stored counters and the gauges of the status
 * view (core/metrics); `/` is a page linking it, other paths 404, other methods 405. `--once` prints
 * one exposition. Bad input (a malformed `--listen`, a port in use, an unreadable state directory) is
 * one line and exit 2; SIGINT/SIGTERM/SIGHUP close the server and exit 0. docs/METRICS.md.
 */
import { Command, Options } from "@effect/cli"
import { Clock, Console, Deferred, Effect, Exit, Layer, Option, Runtime } from "effect"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { authority, DEFAULT_LISTEN, parseListen } from "../core/metrics/listen.js"
import { EXPOSITION_CONTENT_TYPE } from "../core/metrics/exposition.js"
import { scrapeText } from "../core/metrics/scrape.js"
import { budgetsJson, type BudgetInfo } from "../core/permits/view.js"
import { printable } from "../core/printable.js"
import type { ResolvedPool } from "../core/source.js"
import { FLEET_LEASE_MS, maskUrl } from "../core/state/fleet.js"
import { ALL_RECORDS, type Needs } from "../services/state/SharedState.js"
import { BadInput, StateUnreadable } from "./errors.js"
import { CurrentIo, diagnostic, writeOut } from "./output.js"
import { ownSignals } from "./shared/ownSignals.js"
import { cliPool, openState, portOf, readThrough, stateOf, type OpenedState } from "./stateView.js"
import { checkPoolFile, viewBudgets, viewOfState } from "./statusRun.js"
import { stateDirOption } from "./status.js"

export interface MetricsFlags {
  readonly listen: string | undefined
  readonly once: boolean
  readonly stateDir: string | undefined
  readonly pool: string | undefined
}

/** What a scrape reads: every record the status view shows, and the counters. */
export const SCRAPE_RECORDS: Needs = { ...ALL_RECORDS, counters: true }

/** One scrape over a port in context: read (no lock), view, exposition. */
export const scrapeWith = (opened: OpenedState, pool: ResolvedPool, budgets: ReadonlyArray<BudgetInfo>) =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const read = yield* readThrough(opened, SCRAPE_RECORDS, now)
    const state = stateOf(opened, read)
    if (state instanceof StateUnreadable) return yield* state
    const counters = read.snapshot.problems.find((p) => p.kind === "counters")
    if (counters !== undefined) return yield* new StateUnreadable({ dir: opened.dir, reason: counters.reason })
    const leaseMs = opened.backend.state.backend === "postgres" ? opened.backend.state.leaseMs : FLEET_LEASE_MS
    const view = viewOfState(state, pool, budgets)
    return scrapeText({ view, counters: read.snapshot.counters, cooldowns: state.cooldowns, permits: budgetsJson(budgets, state.permits), now, leaseMs })
  })

/** The state as the start line names it: the database's directory, or PostgreSQL (password masked) and its fallback directory. */
const stateLabel = (opened: OpenedState): string => {
  const b = opened.backend.state
  return b.backend === "postgres" ? `postgres ${maskUrl(b.url)} schema ${b.schema}, fallback ${opened.dir}` : `sqlite ${opened.dir}`
}

const unreadable = (e: StateUnreadable): BadInput =>
  new BadInput({ message: `state dir ${printable(e.dir)} unreadable: ${printable(e.reason)} (name a readable directory with --state-dir)`, option: "--state-dir", value: e.dir })

/** A listen failure as one line: which address, what it means, what to do. */
const listenProblem = (e: NodeJS.ErrnoException, host: string, port: number): BadInput => {
  const at = authority(host, port)
  const message =
    e.code === "EADDRINUSE"
      ? `--listen ${at}: port ${port} is in use on ${host} (another ocpool metrics or exporter?); stop it, or choose another port with --listen HOST:PORT`
      : e.code === "EACCES"
        ? `--listen ${at}: permission denied (ports below 1024 need privileges); choose a port of 1024 or above`
        : e.code === "EADDRNOTAVAIL"
          ? `--listen ${at}: ${host} is not an address of this machine`
          : e.code === "ENOTFOUND" || e.code === "EAI_AGAIN"
            ? `--listen ${at}: host ${host} not found`
            : `--listen ${at}: cannot listen (${printable(String(e.code ?? e.message))})`
  return new BadInput({ message, option: "--listen", value: at })
}

const INDEX = '<!doctype html><html><head><title>ocpool metrics</title></head><body><h1>ocpool metrics</h1><p><a href="/metrics">/metrics</a></p></body></html>\n'

const send = (req: IncomingMessage, res: ServerResponse, status: number, type: string, body: string, headers: Record<string, string> = {}) => {
  const bytes = Buffer.from(body, "utf8")
  res.writeHead(status, { "Content-Type": type, "Content-Length": String(bytes.length), ...headers })
  res.end(req.method === "HEAD" ? undefined : bytes)
}

const PLAIN = "text/plain; charset=utf-8"

/** One request: `/metrics` scraped, `/` the index, other paths 404, other methods 405. */
const handle = (scrape: () => Promise<Exit.Exit<string, StateUnreadable>>) => (req: IncomingMessage, res: ServerResponse) => {
  const path = (req.url ?? "/").split("?")[0]
  if (path !== "/metrics" && path !== "/") return send(req, res, 404, PLAIN, "not found: the metrics are at /metrics\n")
  if (req.method !== "GET" && req.method !== "HEAD") return send(req, res, 405, PLAIN, "method not allowed: GET or HEAD\n", { Allow: "GET, HEAD" })
  if (path === "/") return send(req, res, 200, "text/html; charset=utf-8", INDEX)
  void scrape().then(
    (exit) =>
      Exit.isSuccess(exit)
        ? send(req, res, 200, EXPOSITION_CONTENT_TYPE, exit.value)
        : send(req, res, 503, PLAIN, `${Exit.isFailure(exit) && exit.cause._tag === "Fail" ? `state dir ${exit.cause.error.dir} unreadable: ${exit.cause.error.reason}` : "scrape failed"}\n`),
    () => send(req, res, 500, PLAIN, "scrape failed\n")
  )
}

/** Serves `scrape` on `host:port` until a signal; the start line names the address bound (a port 0 resolved). */
const serve = (host: string, port: number, label: string, scrape: Effect.Effect<string, StateUnreadable>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const runtime = yield* Effect.runtime<never>()
      const run = () => Runtime.runPromiseExit(runtime)(scrape)
      const server = createServer(handle(run))
      const bound = yield* Effect.async<AddressInfo, BadInput>((resume) => {
        const onError = (e: NodeJS.ErrnoException) => {
          server.off("listening", onListening)
          resume(Effect.fail(listenProblem(e, host, port)))
        }
        const onListening = () => {
          server.off("error", onError)
          resume(Effect.succeed(server.address() as AddressInfo))
        }
        server.once("error", onError)
        server.once("listening", onListening)
        server.listen(port, host)
      })
      yield* Effect.addFinalizer(() =>
        Effect.async<void>((resume) => {
          server.close(() => resume(Effect.void))
          server.closeAllConnections()
        })
      )
      const done = yield* Deferred.make<void>()
      yield* ownSignals(() => Deferred.unsafeDone(done, Exit.void))
      yield* Console.log(`ocpool metrics: serving http://${authority(host, bound.port)}/metrics (state ${printable(label)})`)
      yield* Deferred.await(done)
    })
  )

export const metricsRun = (args: MetricsFlags) =>
  Effect.gen(function* () {
    const listen = parseListen(args.listen ?? DEFAULT_LISTEN)
    if (listen._tag === "Problem") return yield* new BadInput({ message: listen.message, option: "--listen", value: args.listen ?? DEFAULT_LISTEN })
    yield* checkPoolFile(args.pool)
    const opened = yield* Effect.mapError(openState(args.stateDir), unreadable)
    for (const w of opened.warnings) yield* diagnostic(printable(w))
    const pool = cliPool(args.pool)
    const budgets = yield* viewBudgets
    // a directory that exists keeps one port open (one database connection) for every scrape; one that
    // does not yet is opened afresh at each scrape, so the exporter sees it once a plugin creates it
    const scrapeNow = (o: OpenedState) => scrapeWith(o, pool, budgets).pipe(Effect.provide(portOf(o)), Effect.scoped)
    if (args.once) {
      const text = yield* Effect.mapError(scrapeNow(opened), unreadable)
      return yield* Effect.flatMap(CurrentIo, (io) => writeOut(io, "stdout", text))
    }
    return yield* Effect.scoped(
      Effect.gen(function* () {
        const scrape: Effect.Effect<string, StateUnreadable> = opened.exists
          ? Effect.provide(scrapeWith(opened, pool, budgets), yield* Layer.build(portOf(opened)))
          : Effect.flatMap(openState(args.stateDir), scrapeNow)
        // the first scrape before serving: an unreadable state is bad input now, not a 503 later
        yield* Effect.mapError(scrape, unreadable)
        yield* serve(listen.host, listen.port, stateLabel(opened), scrape)
      })
    )
  })

const pool = Options.text("pool").pipe(Options.withPseudoName("FILE"), Options.withDescription("Pool file whose slots the slot gauges show (default: the user config directory, then the bundled preset)"), Options.optional)

export const metricsCommand = Command.make(
  "metrics",
  {
    listen: Options.text("listen").pipe(Options.withPseudoName("HOST:PORT"), Options.withDescription(`Address to serve on (default ${DEFAULT_LISTEN}; :PORT for every interface; port 0 for any free port)`), Options.optional),
    once: Options.boolean("once").pipe(Options.withDescription("Print one exposition on stdout and exit")),
    stateDir: stateDirOption,
    pool
  },
  (args) => metricsRun({ listen: Option.getOrUndefined(args.listen), once: args.once, stateDir: Option.getOrUndefined(args.stateDir), pool: Option.getOrUndefined(args.pool) })
).pipe(
  Command.withDescription(
    "Serve the pool's counters and gauges for Prometheus on http://HOST:PORT/metrics (text format 0.0.4), read afresh at each scrape without taking the state lock: routes, limit errors, cooldowns, aborts, reaps, permits and their wait histogram, per host; slot load and cap, cooling, quota, permits, fleet leases (docs/METRICS.md). Ends with 0 on SIGINT/SIGTERM. Exit 2: a malformed --listen, a port in use, an unreadable state directory."
  )
)
