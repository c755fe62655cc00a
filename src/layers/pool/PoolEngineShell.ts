/**
 * The engine's shell: every opencode event goes through `apply`, which, holding the engine's memory (a
 * `SerialRef`: one event at a time), reads the clock, asks the core (`engineStep`) — inside a
 * `SharedState` transaction when the decision reads shared state — and carries out what it returns:
 * the commit (claims, cooldowns, quota and fallback records), the recorded lines and decisions, the
 * logs, and the aborts, each forked into a `FiberMap` whose outcome comes back as an `aborted` event.
 * The layer owns the lifetime: the engine registers itself in the shared state when it starts (issue
 * 33: a view can tell that this opencode has the plugin loaded, idle or not), the reaper and the
 * pool-file watcher run in its scope, and its finalizer stops every write and removes the claims and
 * the registration.
 */
import type { BudgetJson } from "../../core/permits/view.js"
import { Clock, Duration, Effect, FiberMap, FiberSet, Layer, Option, Queue, Ref, Stream } from "effect"
import { realpathSync, statSync, watch, type FSWatcher } from "node:fs"
import { basename, dirname } from "node:path"
import type { PoolSnapshot } from "../../core/engine/snapshot.js"
import { engineStep, needsOf, type Applied, type EngineEvent, type EventNeeds, type SwitchOrder } from "../../core/engine/step.js"
import { initialEngineState, slotsOf, type EngineState } from "../../core/engine/state.js"
import { injectConfig } from "../../core/inject.js"
import type { JsonRecord } from "../../core/json.js"
import type { Settings } from "../../core/options.js"
import { describeSlots, type Slot } from "../../core/pool.js"
import { pricedSlotWarnings } from "../../core/prices.js"
import type { ResolvedPool } from "../../core/source.js"
import { renderStatus, statusView } from "../../core/status.js"
import { compactView, GLANCE } from "../../core/view/live.js"
import { AbortClient } from "../../services/opencode/AbortClient.js"
import { AppLog } from "../../services/opencode/AppLog.js"
import { PoolConfig } from "../../services/pool/PoolConfig.js"
import { PoolEngine, VariantRefused, type PoolEngineService } from "../../services/pool/PoolEngine.js"
import { PriceSnapshot } from "../../services/cost/PriceSnapshot.js"
import { ALL_RECORDS, problemText, SharedState, type Commit, type Needs, type SharedSnapshot } from "../../services/state/SharedState.js"
import { StateDir } from "../../services/state/StateDir.js"
import { promptTarget, SessionPrompt } from "../../services/opencode/SessionPrompt.js"
import { NO_QUOTA_WRITTEN, quotaStep, type QuotaMemo } from "../../core/state/quotaMemo.js"
import { TraceRecorder } from "../../services/pool/TraceRecorder.js"
import { causeLine } from "../../core/causeLine.js"
import { ContextStore } from "../../services/context/ContextStore.js"
import { loadEvent, recordOf, stampOf } from "../../core/context/load.js"
import type { RefreshOrder } from "../../core/engine/events.js"
import { spanned, traced } from "../traced.js"
import { makeSerialRef } from "../exclusive.js"
import { VERSION } from "../../core/version.js"
import { minutesOrSeconds as minutes, wholeSeconds } from "../../core/time.js"

export interface EngineConfig {
  readonly timing: { readonly hangMinAgeMs: number; readonly hangSilenceMs: number }
  readonly reapMs: number
  /** The delegation policy (US-1); `false` leaves `build` and `plan` alone. Default true. */
  readonly delegate?: boolean
  /** The context map (SPEC §13); `false` injects none of its agents, rules and commands. Default true. */
  readonly contextMap?: boolean
  /** The option `fallbackModels` (US-50), validated; none by default. */
  readonly fallbacks?: ReadonlyArray<string>
  /**
   * The context map's automatic refresh (issue 23): the project root and the map's budget. Absent (or
   * without a ContextStore in the context) nothing is collected and no run starts.
   */
  readonly refresh?: { readonly root: string; readonly maxBytes: number } | undefined
}

/** What a root session switched to a fallback is sent, on the fallback model (US-50). */
export const CONTINUE_TEXT = "continue"

export const RELOAD_DEBOUNCE_MS = 250

/** The log line's start when applying an event fails unexpectedly (docs/OPERATIONS.md). */
const failureLabel = (event: EngineEvent): string =>
  event.type === "spawn" ? "routing failed, spawn unchanged" : event.type === "sweep" || event.type === "aborted" ? "reaper failed" : `${event.type} failed`

/** The engine over whatever store, clients and recorder the context provides. Scoped: closing the scope disposes it. */
export const makeEngine = (config: EngineConfig) =>
  Effect.gen(function* () {
    const log = yield* AppLog
    const store = yield* SharedState
    const aborter = yield* AbortClient
    const recorder = yield* TraceRecorder
    const poolConfig = yield* PoolConfig
    const self = yield* StateDir
    const aborts = yield* FiberMap.make<string, void, never>()
    const prices = yield* Effect.serviceOption(PriceSnapshot)
    const prompter = yield* Effect.serviceOption(SessionPrompt)
    const contexts = yield* Effect.serviceOption(ContextStore)
    /** The context map's refresh, when it is on and has a store. */
    const refresh = config.refresh !== undefined && Option.isSome(contexts) ? { ...config.refresh, store: contexts.value } : undefined
    let contextSaveWarned = false
    // the price advisory (US-23) runs off the boot path: reading the snapshot takes tens of milliseconds
    const advice = yield* FiberSet.make<void, never>()
    const warnedPriced = yield* Ref.make<ReadonlySet<string>>(new Set())
    /** What the engine remembers between events; holding it orders every event (one at a time). */
    const memory = yield* makeSerialRef<EngineMemory>({ state: initialEngineState(config.timing), quotaWritten: NO_QUOTA_WRITTEN, closed: false })
    const stateNow = Effect.map(memory.get, (m) => m.state)
    let lastConfig: JsonRecord | undefined

    /** What one decision changes in shared state; the quota record (throttled here, core/state/quotaMemo.ts) goes with it. */
    const commitOf = (out: Applied, now: number, quota: QuotaMemo): { readonly commit: Commit; readonly quotaWritten: QuotaMemo } => {
      const q = quotaStep(quota, out.observed, now)
      const switches = out.switches ?? []
      return {
        commit: {
          claims: out.publish ? { claims: out.state.machine.claims, reaped: out.state.machine.reaped } : undefined,
          cool: out.cool,
          uncool: out.uncool,
          quota: q.write === undefined ? undefined : [q.write],
          fallbacks: switches.length === 0 ? undefined : switches.map((sw) => ({ session: sw.session, original: sw.original, active: sw.to, until: sw.until, at: now })),
          endFallbacks: out.ended === undefined ? undefined : [out.ended]
        },
        quotaWritten: q.memo
      }
    }

    /** A view's read (without the lock); kinds that could not be read are logged, as a transaction logs them. */
    const readLogged = (now: number, needs: Needs) =>
      Effect.tap(store.read(now, needs), (snapshot) => Effect.forEach(snapshot.problems, (p) => log.log("warn", problemText(p)), { discard: true }))

    /** The records a decision reads: cooldowns, and peers' claims only when it routes or shows load (a spawn never reads quota files). */
    const recordsFor = (needs: EventNeeds): Needs => ({ claims: needs.peers, cooldowns: true })

    /** One abort, forked; its outcome is the next event for that claim. */
    const runAbort = (claim: string, session: string): Effect.Effect<void> =>
      aborter.abort(session).pipe(
        Effect.as({ ok: true, reason: "" }),
        Effect.catchAll((e) => Effect.succeed({ ok: false, reason: e.reason })),
        Effect.catchAllDefect((d) => Effect.succeed({ ok: false, reason: d instanceof Error ? d.message : String(d) })),
        Effect.flatMap((o) => apply({ type: "aborted", claim, ok: o.ok, reason: o.reason })),
        Effect.asVoid
      )

    /**
     * One switch to a fallback (US-50), forked: abort opencode's retries (or wait for the idle after an
     * error it does not retry), wait until the session no longer runs, then prompt "continue" on the
     * fallback. Its outcome is the next event for that session.
     */
    const runSwitch = (sw: SwitchOrder): Effect.Effect<void> =>
      Effect.gen(function* () {
        if (Option.isNone(prompter)) return { ok: false, reason: "no session client" }
        const p = prompter.value
        if (sw.via === "abort") {
          const aborted = yield* Effect.either(aborter.abort(sw.session))
          if (aborted._tag === "Left") return { ok: false, reason: `abort: ${aborted.left.reason}` }
        }
        return yield* p.whenIdle(sw.session).pipe(
          Effect.zipRight(p.prompt(sw.session, promptTarget(sw.to), sw.agent, CONTINUE_TEXT)),
          Effect.as({ ok: true, reason: "" }),
          Effect.catchAll((e) => Effect.succeed({ ok: false, reason: e.reason }))
        )
      }).pipe(
        Effect.catchAllDefect((d) => Effect.succeed({ ok: false, reason: d instanceof Error ? d.message : String(d) })),
        Effect.flatMap((o) => apply({ type: "switched", session: sw.session, to: sw.to, ok: o.ok, reason: o.reason })),
        Effect.asVoid
      )

    /**
     * One context map refresh run (issue 23), forked: its session created, bound to the run's claim,
     * then prompted as the routed variant on its model. A failure at either step ends the run as failed.
     */
    const runRefresh = (order: RefreshOrder): Effect.Effect<void> =>
      Effect.gen(function* () {
        if (Option.isNone(prompter)) return "no session client"
        const p = prompter.value
        const created = yield* Effect.either(p.create(order.title))
        if (created._tag === "Left") return created.left.reason
        const bound = yield* apply({ type: "contextBound", run: order.run, session: created.right })
        // the run ended while its session was being created (its claim reaped): nothing to prompt
        if (bound?.state.machine.context.inFlight?.run !== order.run) return undefined
        const sent = yield* Effect.either(p.prompt(created.right, promptTarget(order.model), order.agent, order.prompt))
        return sent._tag === "Left" ? sent.left.reason : undefined
      }).pipe(
        Effect.catchAllDefect((d) => Effect.succeed(d instanceof Error ? d.message : String(d))),
        Effect.flatMap((reason) =>
          reason === undefined || refresh === undefined
            ? Effect.void
            : Effect.flatMap(refresh.store.mapFacts(refresh.root), (facts) => apply({ type: "contextEnd", run: order.run, map: stampOf(facts), reason }))
        ),
        Effect.asVoid
      )

    /** An idle, with the map as it is and whether a refresh was asked for, when the context map is on. */
    const withContext = (event: EngineEvent): Effect.Effect<EngineEvent> =>
      refresh === undefined || event.type !== "idle"
        ? Effect.succeed(event)
        : Effect.map(Effect.zip(refresh.store.mapFacts(refresh.root), refresh.store.queued(refresh.root)), ([facts, queued]) => ({
            ...event,
            context: { map: stampOf(facts), requested: queued !== undefined }
          }))

    /** The refresh machine's record saved when its state changed; the CLI's marker taken when a run starts. */
    const keepContext = Effect.fnUntraced(function* (before: EngineState, out: Applied, now: number) {
        if (refresh === undefined || out.state.machine.context === before.machine.context) return
        if (out.decisions.some((d) => d.type === "context_start")) yield* refresh.store.takeQueued(refresh.root)
        const saved = yield* Effect.either(refresh.store.save(recordOf(out.state.machine.context, refresh.root, now, self.host, self.pid)))
        if (saved._tag === "Left" && !contextSaveWarned) {
          contextSaveWarned = true
          yield* log.log("warn", `context map: its record could not be saved (${saved.left.path}: ${saved.left.reason}); pending paths live in memory until opencode stops`)
        }
      })

    /** `given`: a snapshot the caller read for a read-only event (the status view shows the same one). */
    // generators defined once (not one made per call: docs/PERFORMANCE.md, "Generators")
    const decide = Effect.fnUntraced(function* (m: EngineMemory, given0: EngineEvent, given?: { readonly now: number; readonly snapshot: PoolSnapshot }) {
        if (m.closed) return [undefined, m] as const
        const now = given?.now ?? (yield* Clock.currentTimeMillis)
        const event = yield* withContext(given0)
        const state = m.state
        const needs = needsOf(state, event)
        let out: Applied
        let quotaWritten = m.quotaWritten
        if (needs.shared === "read") {
          // a decision that writes no shared state reads the snapshot without the lock
          const o = engineStep(state, event, now, given?.snapshot ?? (yield* readLogged(now, recordsFor(needs))))
          out = o._tag === "Applied" ? o : { ...emptyApplied, state }
        } else if (needs.shared === "none") {
          // declared up front: a step without shared state always applies; the guard keeps the types honest
          const o = engineStep(state, event, now)
          out = o._tag === "Applied" ? o : { ...emptyApplied, state }
          const c = commitOf(out, now, quotaWritten)
          quotaWritten = c.quotaWritten
          yield* store.commit(now, c.commit)
        } else {
          ;[out, quotaWritten] = yield* store.transact(now, recordsFor(needs), (snapshot) => {
            const o = engineStep(state, event, now, snapshot)
            // with a snapshot the core always applies; the guard keeps the types honest
            const applied: Applied = o._tag === "Applied" ? o : { ...emptyApplied, state }
            const c = commitOf(applied, now, quotaWritten)
            return { value: [applied, c.quotaWritten] as const, commit: c.commit }
          })
        }
        yield* recorder.record(out.lines, out.decisions)
        for (const l of out.logs) yield* log.log(l.level, l.message)
        // forked interruptible, although this region is not: dispose interrupts the aborts still running
        for (const a of out.aborts) yield* FiberMap.run(aborts, a.claim, Effect.interruptible(runAbort(a.claim, a.session)))
        for (const sw of out.switches ?? []) yield* FiberMap.run(aborts, `switch:${sw.session}`, Effect.interruptible(runSwitch(sw)))
        yield* keepContext(state, out, now)
        if (out.refresh !== undefined) yield* FiberMap.run(aborts, `refresh:${out.refresh.run}`, Effect.interruptible(runRefresh(out.refresh)))
        return [out, { state: out.state, quotaWritten, closed: false }] as const
      })

    const apply: (event: EngineEvent, given?: { readonly now: number; readonly snapshot: PoolSnapshot }) => Effect.Effect<Applied | undefined> = traced("PoolEngine.apply")(
      (event: EngineEvent, given?: { readonly now: number; readonly snapshot: PoolSnapshot }) =>
        memory.modifyEffect((m) => Effect.uninterruptible(decide(m, event, given))).pipe(
          Effect.catchAllCause((cause) => Effect.as(log.log("error", `${failureLabel(event)}: ${causeLine(cause)}`), undefined))
        )
    )

    const applyPool = traced("PoolEngine.applyPool")((pool: ResolvedPool) =>
      Effect.asVoid(apply({ type: "pool", slots: pool.slots, origin: pool.origin, warnings: pool.warnings, fallbacks: config.fallbacks }))
    )

    /** One warning per slot model the shipped snapshot prices above zero, once per process (US-23); silent without a snapshot. */
    const advisePrices = (slots: ReadonlyArray<Slot>): Effect.Effect<void> =>
      Option.match(prices, {
        onNone: () => Effect.void,
        onSome: (snapshot) =>
          FiberSet.run(
            advice,
            Effect.gen(function* () {
              const table = yield* snapshot.table
              if (table === undefined) return
              const fresh = yield* Ref.modify(warnedPriced, (warned) => {
                const lines = pricedSlotWarnings(slots, table, warned)
                return [lines, lines.length === 0 ? warned : new Set([...warned, ...lines.map((l) => l.model)])] as const
              })
              for (const l of fresh) yield* log.log("warn", l.line)
            })
          ).pipe(Effect.asVoid)
      })

    const bindVariants = (cfg: JsonRecord, state: EngineState) => {
      const { info, warnings, config: injected } = injectConfig(cfg, slotsOf(state), state.origin, { delegate: config.delegate ?? true, contextMap: config.contextMap ?? true })
      cfg.agent = injected.agent
      if (injected.provider !== undefined) cfg.provider = injected.provider
      if (injected.command !== undefined) cfg.command = injected.command
      return { info, warnings }
    }

    const service: PoolEngineService = {
      apply,
      loadContext: Effect.gen(function* () {
        if (refresh === undefined) return
        const loaded = loadEvent(refresh.root, refresh.maxBytes, yield* refresh.store.load(refresh.root))
        if (loaded.note !== undefined) yield* log.log("warn", loaded.note)
        yield* apply(loaded.event)
      }).pipe(spanned("PoolEngine.loadContext")),
      applyPool,
      beforeTask: traced("PoolEngine.beforeTask")(function* (session: string, call: string, args: Record<string, unknown>) {
        const name = args.subagent_type
        if (typeof name !== "string") return
        const taskId = typeof args.task_id === "string" ? args.task_id : undefined
        const out = yield* apply({ type: "spawn", owner: session, call, base: name, taskId })
        if (out?.refused !== undefined) return yield* Effect.fail(new VariantRefused(out.refused.requested, out.refused.base))
        if (out?.agent !== undefined) args.subagent_type = out.agent
      }),
      sweep: spanned(Effect.asVoid(apply({ type: "sweep" })), "PoolEngine.sweep"),
      configure: traced("PoolEngine.configure")(function* (cfg: JsonRecord) {
        lastConfig = cfg
        const { info, warnings } = bindVariants(cfg, yield* stateNow)
        for (const w of warnings) yield* log.log("warn", w)
        yield* log.log("info", info)
        yield* advisePrices(slotsOf(yield* stateNow))
      }),
      reload: Effect.gen(function* () {
        const pool = yield* poolConfig.load
        yield* applyPool(pool)
        if (lastConfig !== undefined) for (const w of bindVariants(lastConfig, yield* stateNow).warnings) yield* log.log("warn", w)
        yield* log.log("info", `pool reloaded from ${pool.origin}: ${describeSlots(pool.slots)}`)
        yield* advisePrices(pool.slots)
      }).pipe(spanned("PoolEngine.reload")),
      statusText: traced("PoolEngine.statusText")(function* (permits?: ReadonlyArray<BudgetJson>) {
        // one snapshot, and the view shows what the recorded `status` decision says (one status, issue 20)
        const now = yield* Clock.currentTimeMillis
        const snapshot: SharedSnapshot = yield* readLogged(now, ALL_RECORDS)
        const out = yield* apply({ type: "status" }, { now, snapshot })
        const decided = out?.decisions.find((d) => d.type === "status")
        const state = yield* stateNow
        const processes = [{ pid: self.pid, host: self.host, reaped: state.machine.reaped, claims: state.machine.claims, self: true }, ...snapshot.peers]
        const { quota, fallbacks } = snapshot
        const view = statusView({
          origin: state.origin,
          slots: slotsOf(state),
          processes,
          cooldowns: snapshot.cooldowns,
          now,
          warnings: state.poolWarnings,
          quota,
          fallbacks,
          ...(permits === undefined ? {} : { permits }),
          ...(decided?.type === "status" ? { decided } : {})
        })
        const { failOpens, fallbacks: onFiles } = yield* store.stats
        const fleet = onFiles !== undefined && onFiles > 0 ? `\nfleet fallbacks: ${onFiles} (PostgreSQL did not answer; decided on the state directory)` : ""
        // the compact view of the same snapshot last (issue 24): the picture the live view draws
        return `${renderStatus(view, { now, processes, reaper: { intervalMs: config.reapMs, lastSweepAt: state.lastSweepAt } })}${failOpens > 0 ? `\nlock fail-opens: ${failOpens}` : ""}${fleet}${GLANCE}\n${compactView(view, now).join("\n")}`
      }),
      state: spanned(stateNow, "PoolEngine.state"),
      settle: spanned(Effect.zipRight(FiberSet.awaitEmpty(advice), FiberMap.awaitEmpty(aborts)), "PoolEngine.settle"),
      aborting: spanned(FiberMap.size(aborts), "PoolEngine.aborting")
    }

    // dispose: the abort fibers are interrupted by the FiberMap's own finalizer (registered first, so run
    // last); this one runs before it: no event is applied after it, and the claim file goes.
    yield* Effect.addFinalizer(() => memory.updateEffect((m) => Effect.as(store.removeOwn, { ...m, closed: true })))
    return service
  })

/** The engine's memory between events. */
interface EngineMemory {
  readonly state: EngineState
  /** The quota records this process last wrote (the write throttle's reference). */
  readonly quotaWritten: QuotaMemo
  /** Disposed: no event is applied any more. */
  readonly closed: boolean
}

const emptyApplied: Omit<Applied, "state"> = { _tag: "Applied", lines: [], decisions: [], aborts: [], publish: false, cool: [], uncool: [], logs: [] }

/** The reaper (SPEC §8.1): one sweep at start, then one every `reapMs`, until the scope closes. */
export const reaperLoop = (engine: Pick<PoolEngineService, "sweep">, reapMs: number): Effect.Effect<never> =>
  Effect.zipRight(engine.sweep, Effect.forever(Effect.zipRight(Effect.sleep(Duration.millis(reapMs)), engine.sweep)))

/**
 * Pool-file watching for hot reload (SPEC §3.4): each path's directory is watched (a file an editor
 * replaces keeps being seen); changes to the named file are debounced into one reload. The watchers are
 * registered before this returns — node's `fs.watch` directly, as a `Stream`: `@effect/platform`'s
 * `FileSystem.watch` registers only after another asynchronous `stat`, so an edit made just after boot
 * could be missed. A directory that cannot be watched is skipped: the next boot sees it.
 */
export const watchPool = (paths: ReadonlyArray<string>, reload: Effect.Effect<void>) =>
  Effect.gen(function* () {
    const streams: Array<Stream.Stream<void>> = []
    for (const p of paths) {
      const isDir = (() => {
        try {
          return statSync(p).isDirectory()
        } catch {
          return false
        }
      })()
      const dir = isDir ? p : dirname(p)
      const name = isDir ? undefined : basename(p)
      let watcher: FSWatcher
      const changes = yield* Queue.sliding<void>(1)
      try {
        watcher = watch(dir, { persistent: false }, (_event, file) => {
          if (name === undefined || file === null || file === name) Queue.unsafeOffer(changes, undefined)
        })
      } catch {
        continue
      }
      watcher.on("error", () => watcher.close())
      yield* Effect.addFinalizer(() => Effect.sync(() => watcher.close()))
      streams.push(Stream.fromQueue(changes))
    }
    return Stream.mergeAll(streams, { concurrency: "unbounded" }).pipe(Stream.debounce(Duration.millis(RELOAD_DEBOUNCE_MS)), Stream.runForEach(() => reload))
  })

/** The project root the context map is kept for: the directory's real path (as `ocpool context --project` resolves it). */
const realRoot = (directory: string): string => {
  try {
    return realpathSync(directory)
  } catch {
    return directory
  }
}

/** The engine for one opencode instance: boot (warnings, pool), the reaper and the watcher in its scope. */
export const PoolEngineShell = (settings: Settings, warnings: ReadonlyArray<string>, directory?: string) =>
  Layer.scoped(
    PoolEngine,
    Effect.gen(function* () {
      const log = yield* AppLog
      const engine = yield* makeEngine({
        timing: { hangMinAgeMs: settings.hangMinAgeMs, hangSilenceMs: settings.hangSilenceMs },
        reapMs: settings.reapMs,
        delegate: settings.delegate,
        contextMap: settings.contextMap.enabled,
        fallbacks: settings.fallbackModels,
        refresh: settings.contextMap.enabled && directory !== undefined ? { root: realRoot(directory), maxBytes: settings.contextMap.maxBytes } : undefined
      })
      // registered once, here (no write per spawn); the engine's finalizer removes it with the claims (`removeOwn`)
      const since = yield* Clock.currentTimeMillis
      yield* Effect.flatMap(SharedState, (store) => store.commit(since, { cool: [], uncool: [], engine: { version: VERSION, since, backend: settings.state.backend } }))
      for (const w of warnings) yield* log.log("warn", w)
      const poolConfig = yield* PoolConfig
      yield* engine.applyPool(yield* poolConfig.load)
      yield* engine.loadContext
      yield* log.log("info", `reaper armed: every ${wholeSeconds(settings.reapMs)}; hung = older than ${minutes(settings.hangMinAgeMs)} and silent ${minutes(settings.hangSilenceMs)}`)
      // forked into the layer's scope (a plain fork would end with the fiber that builds the layer)
      yield* Effect.forkScoped(reaperLoop(engine, settings.reapMs))
      yield* Effect.forkScoped(yield* watchPool(poolConfig.watched, engine.reload.pipe(Effect.catchAllCause((c) => log.log("error", `pool reload failed: ${causeLine(c)}`)))))
      return engine
    })
  )
