/**
 * The engine's shell: each event, holding the engine's memory (one at a time), is decided by the core
 * (`engineStep`), in a `SharedState` transaction when it writes shared state; its lines and decisions
 * are recorded, its logs written, and each effect handed to its feature's runner (engineRunners.ts).
 * The layer registers the engine in the shared state (issue 33), starts the reaper and the pool-file
 * watcher in its scope, and its finalizer stops every write and removes the claims and registration.
 */
import { Clock, Duration, Effect, FiberMap, FiberSet, Layer } from "effect"
import { causeLine } from "../../core/causeLine.js"
import type { PoolSnapshot } from "../../core/engine/snapshot.js"
import { initialEngineState, type EngineState } from "../../core/engine/state.js"
import { failureAbout, failureLabel } from "../../core/engine/decisionLog.js"
import { engineStep, needsOf, NO_COMMIT, type Applied, type EngineEvent, type EventNeeds } from "../../core/engine/step.js"
import type { EngineCommit } from "../../core/engine/events.js"
import { COUNTS_EVERY_MS, countsDue, NO_HELD_COUNTS, type HeldCounts } from "../../core/metrics/engineCounts.js"
import type { Settings } from "../../core/options.js"
import type { ResolvedPool } from "../../core/source.js"
import { VERSION } from "../../core/version.js"
import { needsLog } from "../../services/opencode/AppLog.js"
import { PoolConfig } from "../../services/pool/PoolConfig.js"
import { PoolEngine, VariantRefused, type EngineConfig, type PoolEngineService } from "../../services/pool/PoolEngine.js"
import { TraceRecorder } from "../../services/pool/TraceRecorder.js"
import { problemText, SharedState, type Needs } from "../../services/state/SharedState.js"
import { CONTEXT_INPUT_EVENT, contextRoot, engineContext, loadContext, withContextInput } from "../context/engineContext.js"
import { makePriceAdvice } from "../cost/priceAdvice.js"
import { logLine } from "../opencode/LoggerAppLog.js"
import { makeSerialRef, spanned, traced } from "../hotPath.js"
import { makeStatusText } from "../view/statusText.js"
import { makeConfigInjection } from "./configInjection.js"
import { makeRunners, runEffects } from "./engineRunners.js"
import { startTimers } from "./watchPool.js"

/** The engine's memory between events: its state, and whether it was disposed. */
type EngineMemory = { readonly state: EngineState; readonly closed: boolean }

type Given = { readonly now: number; readonly snapshot: PoolSnapshot }

/** The records a decision reads: cooldowns, peers' claims only when it routes or shows load, the learned budgets when a request's outcome counts (a spawn never reads quota records). */
const recordsFor = (needs: EventNeeds): Needs => (needs.learned === true ? { claims: needs.peers, cooldowns: true, learned: true } : { claims: needs.peers, cooldowns: true })

/** The engine over whatever store, clients and recorder the context provides. Scoped: closing the scope disposes it. */
export const makeEngine = (config: EngineConfig) =>
  Effect.gen(function* () {
    yield* needsLog
    const store = yield* SharedState
    const recorder = yield* TraceRecorder
    const fibers = yield* FiberMap.make<string, void, never>()
    const context = yield* engineContext(config.refresh)
    const memory = yield* makeSerialRef<EngineMemory>({ state: initialEngineState(config.timing, config.metrics ?? true), closed: false })
    const stateNow = Effect.map(memory.get, (m) => m.state)
    const withInput = withContextInput(context)
    // a view's read (without the lock); kinds that could not be read are logged, as a transaction logs them
    const readLogged = (now: number, needs: Needs) => Effect.tap(store.read(now, needs), (s) => Effect.forEach(s.problems, (p) => Effect.logWarning(problemText(p)), { discard: true }))
    const link = { apply: (event: EngineEvent) => apply(event), fork: (key: string, effect: Effect.Effect<void>) => Effect.asVoid(FiberMap.run(fibers, key, Effect.interruptible(effect))) }
    const runners = yield* makeRunners(link, context)
    // the counts held for a later commit (at most one write a second, core/metrics/engineCounts.ts), one event at
    // a time: `next` is what the event's commit leaves held, kept once the store took the commit (a transaction
    // may decide twice, on PostgreSQL and then on the state directory: each time from the same `held`)
    let held: HeldCounts = NO_HELD_COUNTS
    let next: HeldCounts = held
    const withCounts = (c: EngineCommit, now: number, writes: boolean): EngineCommit => {
      next = held
      if (c.counts === undefined && held.counts.length === 0) return c
      const due = countsDue(held, c.counts, now, writes)
      next = due.held
      return due.write === c.counts ? c : { ...c, counts: due.write }
    }
    // counts held after the last event are written a second after the last write, in a commit of their own, so
    // an engine that went quiet shows what it did (a scrape sees it within a second or two); at most one timer
    // at a time, on a fiber set of its own (`settle` does not wait for it), interrupted when the engine closes
    const timers = yield* FiberSet.make<void, never>()
    let flushing = false
    const writeHeld = Effect.suspend(() =>
      held.counts.length === 0
        ? Effect.void
        : Effect.flatMap(Clock.currentTimeMillis, (now) => {
            const counts = held.counts
            held = { counts: [], writtenAt: now }
            return store.commit(now, { cool: [], uncool: [], counts })
          })
    )
    const flushLater = (now: number) => {
      flushing = true
      const wait = Math.max(1, held.writtenAt + COUNTS_EVERY_MS - now)
      // forked inside the event's uninterruptible turn: its sleep is made interruptible (closing the engine
      // interrupts it, and the finalizer writes what is held), its write is not
      const flush = Effect.zipRight(
        Effect.interruptible(Effect.sleep(Duration.millis(wait))),
        memory.updateEffect((m) => (m.closed ? Effect.succeed(m) : Effect.as(writeHeld, m)))
      ).pipe(Effect.ensuring(Effect.sync(() => void (flushing = false))))
      return Effect.asVoid(FiberSet.run(timers, flush))
    }

    /** One event: decided (in a transaction when it writes shared state), recorded, logged, its effects run. */
    const decide = Effect.fnUntraced(function* (m: EngineMemory, given0: EngineEvent, given?: Given) {
      if (m.closed) return [undefined, m] as const
      const now = given?.now ?? (yield* Clock.currentTimeMillis)
      const event = given0.type === CONTEXT_INPUT_EVENT ? yield* withInput(given0) : given0
      const state = m.state
      const needs = needsOf(state, event)
      let out: Applied
      const applied = (snapshot?: PoolSnapshot): Applied => {
        const o = engineStep(state, event, now, snapshot)
        // a step with what it declared always applies; the guard keeps the types honest
        return o._tag === "Applied" ? o : { _tag: "Applied", state, lines: [], decisions: [], logs: [], effects: [], commit: NO_COMMIT }
      }
      if (needs.shared === "read") {
        out = applied(given?.snapshot ?? (yield* readLogged(now, recordsFor(needs))))
        withCounts(out.commit, now, false)
      } else if (needs.shared === "none") {
        out = applied()
        yield* store.commit(now, withCounts(out.commit, now, true))
      } else
        out = yield* store.transact(now, recordsFor(needs), (snapshot) => {
          const o = applied(snapshot)
          return { value: o, commit: withCounts(o.commit, now, true) }
        })
      held = next
      if (held.counts.length > 0 && !flushing) yield* flushLater(now)
      yield* recorder.record(out.lines, out.decisions)
      for (const l of out.logs) yield* logLine(l)
      yield* runEffects(runners, { out, now })
      return [out, { state: out.state, closed: false }] as const
    })

    const apply: (event: EngineEvent, given?: Given) => Effect.Effect<Applied | undefined> = traced("PoolEngine.apply")((event: EngineEvent, given?: Given) =>
      memory.modifyEffect((m) => Effect.uninterruptible(decide(m, event, given))).pipe(Effect.catchAllCause((cause) => Effect.as(logLine({ level: "error", message: `${failureLabel(event)}: ${causeLine(cause)}`, annotations: failureAbout(event) }), undefined)))
    )
    const applyPool = traced("PoolEngine.applyPool")((pool: ResolvedPool) =>
      Effect.asVoid(apply({ type: "pool", slots: pool.slots, origin: pool.origin, warnings: pool.warnings, fallbacks: config.fallbacks }))
    )
    const prices = yield* makePriceAdvice
    const injection = yield* makeConfigInjection({ stateNow, applyPool, advise: prices.advise, delegate: config.delegate ?? true, contextMap: config.contextMap ?? true })

    const service: PoolEngineService = {
      apply,
      loadContext: loadContext(context, apply).pipe(spanned("PoolEngine.loadContext")),
      applyPool,
      beforeTask: traced("PoolEngine.beforeTask")(function* (session: string, call: string, args: Record<string, unknown>) {
        const name = args.subagent_type
        if (typeof name !== "string") return
        const out = yield* apply({ type: "spawn", owner: session, call, base: name, taskId: typeof args.task_id === "string" ? args.task_id : undefined })
        for (const e of out?.effects ?? []) {
          if (e._tag === "Refuse") return yield* Effect.fail(new VariantRefused(e.requested, e.base))
          if (e._tag === "Route") args.subagent_type = e.agent
        }
      }),
      sweep: spanned(Effect.asVoid(apply({ type: "sweep" })), "PoolEngine.sweep"),
      configure: injection.configure,
      reload: injection.reload,
      statusText: yield* makeStatusText({ apply, stateNow, read: readLogged, reapMs: config.reapMs }),
      state: spanned(stateNow, "PoolEngine.state"),
      settle: spanned(Effect.zipRight(prices.settle, FiberMap.awaitEmpty(fibers)), "PoolEngine.settle"),
      aborting: spanned(FiberMap.size(fibers), "PoolEngine.aborting")
    }

    // dispose: the effects' fibers are interrupted by the FiberMap's own finalizer (registered first, so
    // run last); this one runs before it: no event is applied after it, and the claims go.
    // the counts still held are written first (a restart adds to them)
    yield* Effect.addFinalizer(() => memory.updateEffect((m) => Effect.as(Effect.zipRight(writeHeld, store.removeOwn), { ...m, closed: true })))
    return service
  })

/** The engine for one opencode instance: boot (warnings, pool), the reaper and the watcher in its scope. */
export const PoolEngineShell = (settings: Settings, warnings: ReadonlyArray<string>, directory?: string) =>
  Layer.scoped(
    PoolEngine,
    Effect.gen(function* () {
      const refresh = settings.contextMap.enabled && directory !== undefined ? { root: contextRoot(directory), maxBytes: settings.contextMap.maxBytes } : undefined
      const { fallbackModels: fallbacks, delegate, reapMs, metrics } = settings
      const timing = { hangMinAgeMs: settings.hangMinAgeMs, hangSilenceMs: settings.hangSilenceMs, firstTokenMs: settings.firstTokenMs }
      const engine = yield* makeEngine({ timing, reapMs, delegate, contextMap: settings.contextMap.enabled, fallbacks, refresh, metrics })
      // registered once, here (no write per spawn); the engine's finalizer removes it with the claims (`removeOwn`)
      const since = yield* Clock.currentTimeMillis
      yield* Effect.flatMap(SharedState, (store) => store.commit(since, { cool: [], uncool: [], engine: { version: VERSION, since, backend: settings.state.backend } }))
      for (const w of warnings) yield* Effect.logWarning(w)
      const poolConfig = yield* PoolConfig
      yield* engine.applyPool(yield* poolConfig.load)
      yield* engine.loadContext
      yield* startTimers(engine, settings, poolConfig.watched)
      return engine
    })
  )
