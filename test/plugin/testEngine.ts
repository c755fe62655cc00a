/**
 * The engine over given layers, for tests: the shared state is the memory backend of one "process"
 * (PoolEngineTest, `engineOn`; `wrap` puts the test's view on its port, a commit counter say); the
 * engine's scope stays open for the test, and every call waits until the aborts it started have come
 * back (an `aborted` event each), so a test reads settled state.
 */
import { Deferred, Effect, Layer, Scope } from "effect"
import type { EngineEvent } from "../../src/core/engine/step.js"
import type { ResolvedPool } from "../../src/core/source.js"
import type { makeEngine } from "../../src/layers/pool/PoolEngineShell.js"
import type { EngineConfig } from "../../src/services/pool/PoolEngine.js"
import { makeTestEngine } from "../../src/layers/pool/PoolEngineTest.js"
import type { MemoryState } from "../../src/layers/state/MemoryState.js"
import type { SharedStateOptions } from "../../src/layers/state/sharedStateLayer.js"
import { AbortClient, type AbortFailed } from "../../src/services/opencode/AbortClient.js"
import type { AppLog } from "../../src/services/opencode/AppLog.js"
import type { PoolConfig } from "../../src/services/pool/PoolConfig.js"
import type { TraceRecorder } from "../../src/services/pool/TraceRecorder.js"

type Engine = Effect.Effect.Success<ReturnType<typeof makeEngine>>

/** The engine of memory process `pid` on `shared` (PoolEngineTest), the rest from `layer`. */
export const engineOn = (
  layer: Layer.Layer<AppLog | AbortClient | TraceRecorder | PoolConfig>,
  config: EngineConfig,
  shared: MemoryState,
  pid: number,
  wrap?: SharedStateOptions["wrap"]
) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const engine = yield* makeTestEngine(config, shared, pid, undefined, wrap).pipe(Effect.provide(layer), Scope.extend(scope))
    return testView(engine, scope)
  })

const testView = (engine: Engine, scope: Scope.CloseableScope) => {
  const settled = <A, E>(eff: Effect.Effect<A, E>) => Effect.zipLeft(eff, engine.settle)
  const apply = (event: EngineEvent) => settled(Effect.asVoid(engine.apply(event)))
  const now = () => Effect.runSync(engine.state)
  const view = {
    get claims() {
      return now().machine.claims
    },
    get reaped() {
      return now().machine.reaped
    },
    get activity() {
      return now().sampled
    },
    /** Child → parent, as the engine's session store links them. */
    get parents(): ReadonlyMap<string, string | undefined> {
      return new Map(Array.from(now().sessions, ([id, record]) => [id, record.parent]))
    },
    get children() {
      return now().children
    },
    get signals() {
      return now().signals
    }
  }
  return {
    raw: engine,
    view,
    scope,
    applyPool: (pool: ResolvedPool) => engine.applyPool(pool),
    beforeTask: (session: string, call: string, args: Record<string, unknown>) => settled(engine.beforeTask(session, call, args)),
    childCreated: (id: string, parent: string, agent: string | undefined, title: string | undefined) => apply({ type: "child", id, parent, agent, title }),
    activity: (session: string) => apply({ type: "activity", session }),
    /** An assistant message of `session` was written (a model request started). */
    assistantMessage: (session: string) => apply({ type: "activity", session, assistant: true }),
    ask: (session: string, id: string, open: boolean) => apply(open ? { type: "ask", session, id } : { type: "answered", session, id }),
    answered: (session: string, id: string) => apply({ type: "answered", session, id }),
    idle: (session: string) => apply({ type: "idle", session }),
    markBusy: (session: string) => apply({ type: "busy", session }),
    modelRequest: (session: string) => apply({ type: "request", session }),
    output: (session: string) => apply({ type: "output", session }),
    onError: (session: string, error: unknown, model: string | undefined) => apply({ type: "error", session, error, model }),
    onRetry: (session: string, message: string, next: number, provider: string | undefined) => apply({ type: "retry", session, message, next, provider }),
    release: (claim: string, ok: boolean) => apply({ type: "taskEnd", claim, ok }),
    sweep: settled(engine.sweep),
    timerSweep: settled(engine.sweep),
    statusText: engine.statusText,
    settle: engine.settle
  }
}

export type TestEngine = ReturnType<typeof testView>

/** An abort client whose calls wait for the test: each call is a Deferred the test completes (ok or failed). */
export const answeredAborts = () => {
  const calls: Array<string> = []
  const pending: Array<Deferred.Deferred<void, AbortFailed>> = []
  const layer = Layer.succeed(AbortClient, {
    abort: (session) =>
      Effect.gen(function* () {
        calls.push(session)
        const done = yield* Deferred.make<void, AbortFailed>()
        pending.push(done)
        yield* Deferred.await(done)
      })
  })
  return { calls, pending, layer }
}

/** Lets forked abort calls reach the client (or deliver their outcome) before the test goes on. */
export const quiesce = Effect.gen(function* () {
  for (let i = 0; i < 20; i++) yield* Effect.yieldNow()
})
