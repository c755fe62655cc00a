import { Duration, Effect, Layer } from "effect"
import { AbortClient, AbortFailed } from "../../services/opencode/AbortClient.js"
import { spanned } from "../hotPath.js"

/**
 * A scripted abort client for tests: outcomes are taken in order (then the last repeats); calls are
 * recorded; each call takes `latencyMs` (on the test's clock) before its outcome.
 */
export const AbortClientMemory = (outcomes: Array<"ok" | string>, calls: Array<string>, latencyMs = 0) =>
  Layer.succeed(AbortClient, {
    abort: (id) =>
      Effect.suspend(() => {
        calls.push(id)
        const next = outcomes.length > 1 ? outcomes.shift()! : (outcomes[0] ?? "ok")
        const outcome = next === "ok" ? Effect.void : Effect.fail(new AbortFailed({ problem: "other", sessionId: id, detail: next }, true))
        return latencyMs > 0 ? Effect.zipRight(Effect.sleep(Duration.millis(latencyMs)), outcome) : outcome
      }).pipe(spanned("AbortClient.abort"))
  })
