/**
 * Session lookups through the opencode SDK client the plugin receives (`GET /session/<id>`, scoped to
 * the instance's directory), bounded by a timeout; the answer is read as untrusted data.
 */
import { Duration, Effect, Layer } from "effect"
import { LookupFailed, SessionLookup } from "../../services/opencode/SessionLookup.js"
import { sessionFacts } from "../../core/session/facts.js"
import { traced } from "../hotPath.js"

export const LOOKUP_TIMEOUT_MS = 5_000

interface SdkResult {
  readonly data?: unknown
  readonly error?: unknown
}

export interface SessionGetClient {
  readonly session: {
    readonly get: (options: { path: { id: string }; query?: { directory?: string } }) => Promise<SdkResult>
  }
}

const reasonOf = (e: unknown): string => (e instanceof Error ? e.message : typeof e === "string" ? e : "request failed")

export const SessionLookupSdk = (client: SessionGetClient | undefined, directory: string | undefined) =>
  Layer.succeed(SessionLookup, {
    lookup: traced("SessionLookup.lookup")(function* (id) {
      if (client === undefined) return yield* new LookupFailed({ problem: "no-client", sessionId: id }, true)
      const query = directory === undefined ? {} : { query: { directory } }
      const r = yield* Effect.tryPromise({
        try: () => client.session.get({ path: { id }, ...query }),
        catch: (e) => new LookupFailed({ problem: "threw", sessionId: id, detail: reasonOf(e) }, true)
      }).pipe(Effect.timeoutFail({ duration: Duration.millis(LOOKUP_TIMEOUT_MS), onTimeout: () => new LookupFailed({ problem: "timeout", sessionId: id, ms: LOOKUP_TIMEOUT_MS }, true) }))
      const facts = yield* Effect.try({
        try: () => (r.error === undefined ? sessionFacts(r.data) : undefined),
        catch: () => new LookupFailed({ problem: "unreadable", sessionId: id }, true)
      })
      if (facts === undefined || facts.id !== id) return yield* new LookupFailed({ problem: "not-found", sessionId: id }, true)
      return facts
    })
  })
