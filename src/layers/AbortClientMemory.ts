import { Effect, Layer } from "effect"
import { AbortClient, AbortFailed } from "../services/AbortClient.js"

/** A scripted abort client for tests: outcomes are taken in order (then the last repeats); calls are recorded. */
export const AbortClientMemory = (outcomes: Array<"ok" | string>, calls: Array<string>) =>
  Layer.succeed(AbortClient, {
    abort: (id) =>
      Effect.suspend(() => {
        calls.push(id)
        const next = outcomes.length > 1 ? outcomes.shift()! : (outcomes[0] ?? "ok")
        return next === "ok" ? Effect.void : Effect.fail(new AbortFailed({ reason: next }))
      })
  })
