/**
 * What an effect's runner is (issue 34): a function of the effect and the step that made it, using the
 * engine only through its link. The runners live in their features' folders; engineRunners.ts
 * registers them.
 */
import type { Effect } from "effect"
import type { EffectOf, EffectTag } from "../../core/engine/effects.js"
import type { Applied, EngineEvent } from "../../core/engine/step.js"

/** What a runner may use of the engine: its `apply` (an outcome comes back as an event) and its fibers. */
export interface EngineLink {
  readonly apply: (event: EngineEvent) => Effect.Effect<Applied | undefined>
  /** Forks `effect` under `key` into the engine's scope, interruptible (dispose interrupts what still runs). */
  readonly fork: (key: string, effect: Effect.Effect<void>) => Effect.Effect<void>
}

/** The step whose effects run: its outcome and the time it was decided at. */
export interface StepDone {
  readonly out: Applied
  readonly now: number
}

export type Runner<T extends EffectTag> = (effect: EffectOf<T>, step: StepDone) => Effect.Effect<void>
export type Runners = { readonly [T in EffectTag]: Runner<T> }
