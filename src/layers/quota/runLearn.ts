/**
 * The `Learn` effect (issue 35): what a 429 teaches its models' groups, learned in a turn of its own
 * (the `learn` event), forked so that the 429's own turn ends (and its cooldown is written) first.
 */
import { Effect } from "effect"
import type { LearnEffect } from "../../core/engine/effects.js"
import type { EngineLink, StepDone } from "../pool/runner.js"

export const learnRunner = (link: EngineLink) => {
  let n = 0
  return (e: LearnEffect, _step: StepDone): Effect.Effect<void> =>
    link.fork(`learn:${n++}`, Effect.asVoid(link.apply(e.resetAt === undefined ? { type: "learn", models: e.models } : { type: "learn", models: e.models, resetAt: e.resetAt })))
}
