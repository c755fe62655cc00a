/**
 * Aborts through the opencode SDK client the plugin receives (it carries the instance's directory):
 * `POST /session/<id>/abort` with a 10 s timeout, then the confirmation reads of `GET /session/status`
 * (SPEC §8.3; core/session/running.ts): opencode answers `200 true` even for unknown sessions, so only
 * the status proves it.
 */
import { Duration, Effect, Layer } from "effect"
import { ABORT_CONFIRM_POLL, isRunning, pollReads } from "../../core/session/running.js"
import { AbortClient, AbortFailed } from "../../services/opencode/AbortClient.js"
import { failedStatus, sdkCall, type SdkResult } from "./sdkCall.js"

export const ABORT_TIMEOUT_MS = 10_000

export interface SessionClient {
  readonly session: {
    readonly abort: (options: { path: { id: string }; query?: { directory?: string } }) => Promise<SdkResult>
    readonly status: (options?: { query?: { directory?: string } }) => Promise<SdkResult>
  }
}

const call = (f: () => Promise<SdkResult>, what: string) => sdkCall(f, what, ABORT_TIMEOUT_MS, (reason) => new AbortFailed({ reason }))

export const AbortClientSdk = (client: SessionClient | undefined, directory: string | undefined) =>
  Layer.succeed(AbortClient, {
    abort: (id) =>
      Effect.gen(function* () {
        if (client === undefined) return yield* new AbortFailed({ reason: "no server url" })
        const query = directory === undefined ? {} : { query: { directory } }
        const r = yield* call(() => client.session.abort({ path: { id }, ...query }), "abort")
        const bad = failedStatus(r)
        if (bad !== undefined) return yield* new AbortFailed({ reason: `HTTP ${bad}` })
        if (r.data === false) return yield* new AbortFailed({ reason: "server says session was not aborted" })
        for (let read = 0; read < pollReads(ABORT_CONFIRM_POLL); read++) {
          if (read > 0) yield* Effect.sleep(Duration.millis(ABORT_CONFIRM_POLL.everyMs))
          const s = yield* call(() => client.session.status(query), "status")
          if (!isRunning(s.data, id)) return
        }
        return yield* new AbortFailed({ reason: "session still running after abort" })
      })
  })
