/**
 * The engine's effects carried out (issue 34): one runner per effect tag, each from its feature's
 * folder, registered in one table; the engine's shell runs `runners[effect._tag]` for each effect of a
 * step, in order. Adding an effect: its type in core/engine/effects.ts, its runner in its feature's
 * folder, one line here (the table's type makes the line required).
 */
import { Effect } from "effect"
import { contextRunners, type EngineContext } from "../context/engineContext.js"
import { announceRunner } from "../notify/runAnnounce.js"
import { learnRunner } from "../quota/runLearn.js"
import { switchRunner } from "../quota/runSwitch.js"
import { abortRunner } from "./runAbort.js"
import type { EngineLink, Runners, StepDone } from "./runner.js"

export type { EngineLink, Runner, Runners, StepDone } from "./runner.js"

/** An effect the hook carries out (it holds opencode's output object): nothing to do in the engine. */
const byTheHook = (): Effect.Effect<void> => Effect.void

/** The table, one line per effect. */
export const makeRunners = (link: EngineLink, context: EngineContext) =>
  Effect.map(
    Effect.all({ abort: abortRunner(link), switch: switchRunner(link), context: contextRunners(link, context), announce: announceRunner }),
    (r): Runners => ({
      Abort: r.abort,
      Switch: r.switch,
      Refresh: r.context.refresh,
      SaveContext: r.context.save,
      Route: byTheHook,
      Refuse: byTheHook,
      Coach: byTheHook,
      Model: byTheHook,
      Announce: r.announce,
      Learn: learnRunner(link)
    })
  )

/** Each effect of a step through its runner, in order. */
export const runEffects = (runners: Runners, step: StepDone): Effect.Effect<void> =>
  step.out.effects.length === 0
    ? Effect.void
    : Effect.forEach(step.out.effects, (e) => (runners[e._tag] as (effect: typeof e, step: StepDone) => Effect.Effect<void>)(e, step), { discard: true })
