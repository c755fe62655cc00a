/** Reading one session's place in its tree from opencode (SPEC §10.1: `session.get` when the root is not known). */
import { Context, Data, type Effect } from "effect"

export class LookupFailed extends Data.TaggedError("LookupFailed")<{ readonly reason: string }> {}

/** What the notification rules need of a session. */
export interface SessionFacts {
  readonly id: string
  readonly parent?: string | undefined
  readonly title?: string | undefined
  readonly agent?: string | undefined
  readonly compacting?: boolean | undefined
}

export interface SessionLookupService {
  readonly lookup: (id: string) => Effect.Effect<SessionFacts, LookupFailed>
}

export class SessionLookup extends Context.Tag("opencode-pool/SessionLookup")<SessionLookup, SessionLookupService>() {}
