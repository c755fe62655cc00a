/** Session lookups for tests: answered from a map (a missing id fails), each call recorded. */
import { Effect, Layer } from "effect"
import { LookupFailed, SessionLookup, type SessionFacts } from "../../services/opencode/SessionLookup.js"
import { spanned } from "../hotPath.js"

export const SessionLookupMemory = (sessions: ReadonlyMap<string, SessionFacts> = new Map(), calls: Array<string> = []) =>
  Layer.succeed(SessionLookup, {
    lookup: (id) =>
      Effect.suspend(() => {
        calls.push(id)
        const facts = sessions.get(id)
        return facts === undefined ? Effect.fail(new LookupFailed({ problem: "not-found", sessionId: id }, true)) : Effect.succeed(facts)
      }).pipe(spanned("SessionLookup.lookup"))
  })
