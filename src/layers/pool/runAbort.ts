/**
 * The `Abort` effect (SPEC §8): a pooled session aborted through opencode's client, forked; its
 * outcome (ok, or why not) is the next event for that claim (`aborted`).
 */
import { Effect } from "effect"
import type { AbortEffect } from "../../core/engine/effects.js"
import { AbortClient } from "../../services/opencode/AbortClient.js"
import type { EngineLink, StepDone } from "./runner.js"

export const abortRunner = (link: EngineLink) =>
  Effect.map(AbortClient, (aborter) => {
    const run = (claim: string, session: string): Effect.Effect<void> =>
      aborter.abort(session).pipe(
        Effect.as({ ok: true, reason: "" }),
        Effect.catchAll((e) => Effect.succeed({ ok: false, reason: e.reason })),
        Effect.catchAllDefect((d) => Effect.succeed({ ok: false, reason: d instanceof Error ? d.message : String(d) })),
        Effect.flatMap((o) => link.apply({ type: "aborted", claim, ok: o.ok, reason: o.reason })),
        Effect.asVoid
      )
    return (e: AbortEffect, _step: StepDone): Effect.Effect<void> => link.fork(e.claim, run(e.claim, e.session))
  })
