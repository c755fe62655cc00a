/**
 * The context map's part of the engine (issue 23): what its events carry in (an idle sees the map as
 * it is and whether a refresh was asked for), the record read at start, and its two effects: `Refresh`
 * (a run's session created, bound to the run's claim, prompted as the routed variant; a failure at
 * either step ends the run as failed) and `SaveContext` (the refresh machine's record saved when its
 * state changed; the CLI's ask taken when a run starts).
 */
import { Effect, Option } from "effect"
import { realpathSync } from "node:fs"
import { loadEvent, recordOf, stampOf } from "../../core/context/load.js"
import type { RefreshEffect, RefreshOrder, SaveContextEffect } from "../../core/engine/effects.js"
import type { EngineEvent } from "../../core/engine/step.js"
import { ContextStore, type ContextStoreService } from "../../services/context/ContextStore.js"
import { promptTarget, SessionPrompt } from "../../services/opencode/SessionPrompt.js"
import { StateDir } from "../../services/state/StateDir.js"
import type { EngineLink, StepDone } from "../pool/runner.js"

/** The context map's refresh, when it is on and has a store: the project root, the map's budget, the store. */
export type EngineContext = { readonly root: string; readonly maxBytes: number; readonly store: ContextStoreService } | undefined

/** The project root the context map is kept for: the directory's real path (as `ocpool context --project` resolves it). */
export const contextRoot = (directory: string): string => {
  try {
    return realpathSync(directory)
  } catch {
    return directory
  }
}

/** The refresh of `config` (absent: off), with the store the context provides (none: off too). */
export const engineContext = (config: { readonly root: string; readonly maxBytes: number } | undefined): Effect.Effect<EngineContext> =>
  Effect.map(Effect.serviceOption(ContextStore), (store) => (config !== undefined && Option.isSome(store) ? { ...config, store: store.value } : undefined))

/** The one event type the context map adds its input to (the shell asks `withContextInput` for no other). */
export const CONTEXT_INPUT_EVENT = "idle"

/** An idle, with the map as it is and whether a refresh was asked for, when the context map is on. */
export const withContextInput = (context: EngineContext) => (event: Extract<EngineEvent, { readonly type: typeof CONTEXT_INPUT_EVENT }>): Effect.Effect<EngineEvent> =>
  context === undefined
    ? Effect.succeed(event)
    : Effect.map(Effect.zip(context.store.mapFacts(context.root), context.store.queued(context.root)), ([facts, queued]) => ({
        ...event,
        context: { map: stampOf(facts), requested: queued !== undefined }
      }))

/** The record the state directory kept, applied at start (nothing when the refresh is off). */
export const loadContext = (context: EngineContext, apply: EngineLink["apply"]): Effect.Effect<void> =>
  context === undefined
    ? Effect.void
    : Effect.flatMap(context.store.load(context.root), (record) => {
        const loaded = loadEvent(context.root, context.maxBytes, record)
        return Effect.zipRight(loaded.note === undefined ? Effect.void : Effect.logWarning(loaded.note), Effect.asVoid(apply(loaded.event)))
      })

/** The runners of `Refresh` and `SaveContext`. */
export const contextRunners = (link: EngineLink, context: EngineContext) =>
  Effect.gen(function* () {
    const self = yield* StateDir
    const prompter = yield* Effect.serviceOption(SessionPrompt)
    let saveWarned = false

    const start = Effect.fnUntraced(function* (order: RefreshOrder) {
      if (Option.isNone(prompter)) return "no session client"
      const p = prompter.value
      const created = yield* Effect.either(p.create(order.title))
      if (created._tag === "Left") return created.left.reason
      const bound = yield* link.apply({ type: "contextBound", run: order.run, session: created.right })
      // the run ended while its session was being created (its claim reaped): nothing to prompt
      if (bound?.state.machine.context.inFlight?.run !== order.run) return undefined
      const sent = yield* Effect.either(p.prompt(created.right, promptTarget(order.model), order.agent, order.prompt))
      return sent._tag === "Left" ? sent.left.reason : undefined
    })
    const run = (order: RefreshOrder): Effect.Effect<void> =>
      start(order).pipe(
        Effect.catchAllDefect((d) => Effect.succeed(d instanceof Error ? d.message : String(d))),
        Effect.flatMap((reason) =>
          reason === undefined || context === undefined
            ? Effect.void
            : Effect.flatMap(context.store.mapFacts(context.root), (facts) => link.apply({ type: "contextEnd", run: order.run, map: stampOf(facts), reason }))
        ),
        Effect.asVoid
      )

    const save = Effect.fnUntraced(function* (e: SaveContextEffect, step: StepDone) {
      if (context === undefined) return
      if (e.started) yield* context.store.takeQueued(context.root)
      const saved = yield* Effect.either(context.store.save(recordOf(step.out.state.machine.context, context.root, step.now, self.host, self.pid)))
      if (saved._tag === "Left" && !saveWarned) {
        saveWarned = true
        yield* Effect.logWarning(`context map: its record could not be saved (${saved.left.path}: ${saved.left.reason}); pending paths live in memory until opencode stops`)
      }
    })

    return {
      refresh: (e: RefreshEffect, _step: StepDone): Effect.Effect<void> => link.fork(`refresh:${e.order.run}`, run(e.order)),
      save
    }
  })
