/** Reading one session's place in its tree from opencode (SPEC §10.1: `session.get` when the root is not known). */
import { Context, Data, type Effect } from "effect"
import type { SessionFacts } from "../../core/session/facts.js"

export type { SessionFacts } from "../../core/session/facts.js"

export class LookupFailed extends Data.TaggedError("LookupFailed")<{ readonly reason: string }> {}

export interface SessionLookupService {
  readonly lookup: (id: string) => Effect.Effect<SessionFacts, LookupFailed>
}

export class SessionLookup extends Context.Tag("opencode-pool/SessionLookup")<SessionLookup, SessionLookupService>() {}
