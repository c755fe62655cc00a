/**
 * Aborts through the opencode SDK client the plugin receives (it carries the instance's directory):
 * `POST /session/<id>/abort` with a 10 s timeout, then the confirmation reads of `GET /session/status`
 * (SPEC §8.3; core/session/running.ts): opencode answers `200 true` even for unknown sessions, so only
 * the status proves it.
 */
import { Effect, Layer } from "effect"
import { ABORT_CONFIRM_POLL, isRunning } from "../../core/session/running.js"
import { AbortClient, AbortFailed } from "../../services/opencode/AbortClient.js"
import { failedStatus, sdkCall, type SdkResult } from "./sdkCall.js"
import { stillRunningAfter } from "./untilIdle.js"
import { traced } from "../hotPath.js"

export const ABORT_TIMEOUT_MS = 10_000

export interface SessionClient {
  readonly session: {
    readonly abort: (options: { path: { id: string }; query?: { directory?: string } }) => Promise<SdkResult>
    readonly status: (options?: { query?: { directory?: string } }) => Promise<SdkResult>
  }
}

const call = (f: () => Promise<SdkResult>, what: string, sessionId: string) =>
  sdkCall(f, what, ABORT_TIMEOUT_MS, (failure) => new AbortFailed({ ...failure, sessionId }, true))

export const AbortClientSdk = (client: SessionClient | undefined, directory: string | undefined) =>
  Layer.succeed(AbortClient, {
    abort: traced("AbortClient.abort")(function* (id) {
      if (client === undefined) return yield* new AbortFailed({ problem: "no-client", sessionId: id }, true)
      const query = directory === undefined ? {} : { query: { directory } }
      const r = yield* call(() => client.session.abort({ path: { id }, ...query }), "abort", id)
      const bad = failedStatus(r)
      if (bad !== undefined) return yield* new AbortFailed({ problem: "http", sessionId: id, call: "abort", status: bad }, true)
      if (r.data === false) return yield* new AbortFailed({ problem: "not-aborted", sessionId: id, call: "abort" }, true)
      const running = Effect.map(call(() => client.session.status(query), "status", id), (s) => isRunning(s.data, id))
      if (yield* stillRunningAfter(running, ABORT_CONFIRM_POLL)) return yield* new AbortFailed({ problem: "still-running", sessionId: id, ms: ABORT_CONFIRM_POLL.forMs }, true)
    })
  })
