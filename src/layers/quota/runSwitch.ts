/**
 * The `Switch` effect (US-50): a root session moved to a fallback model, forked: opencode's retries
 * aborted (or the idle after an error it does not retry waited for), then "continue" prompted on the
 * fallback once the session no longer runs. Its outcome is the next event for that session (`switched`).
 */
import { Effect, Option } from "effect"
import type { SwitchEffect, SwitchOrder } from "../../core/engine/effects.js"
import { AbortClient } from "../../services/opencode/AbortClient.js"
import { promptTarget, SessionPrompt } from "../../services/opencode/SessionPrompt.js"
import type { EngineLink, StepDone } from "../pool/runner.js"

/** What a root session switched to a fallback is sent, on the fallback model (US-50). */
export const CONTINUE_TEXT = "continue"

export const switchRunner = (link: EngineLink) =>
  Effect.gen(function* () {
    const aborter = yield* AbortClient
    const prompter = yield* Effect.serviceOption(SessionPrompt)
    const carryOut = Effect.fnUntraced(function* (sw: SwitchOrder) {
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
    })
    const run = (sw: SwitchOrder): Effect.Effect<void> =>
      carryOut(sw).pipe(
        Effect.catchAllDefect((d) => Effect.succeed({ ok: false, reason: d instanceof Error ? d.message : String(d) })),
        Effect.flatMap((o) => link.apply({ type: "switched", session: sw.session, to: sw.to, ok: o.ok, reason: o.reason })),
        Effect.asVoid
      )
    return (e: SwitchEffect, _step: StepDone): Effect.Effect<void> => link.fork(`switch:${e.order.session}`, run(e.order))
  })
