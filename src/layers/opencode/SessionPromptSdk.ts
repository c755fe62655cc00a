/**
 * Continuing a session through the opencode SDK client the plugin receives (issue 12, US-50):
 * `GET /session/status` polled until the session is not listed as running (IDLE_WAIT_POLL of
 * core/session/running.ts: every 250 ms, at most 60 s), and `POST /session/<id>/prompt_async` with
 * the model, the agent and the text. opencode drops a prompt sent while it still runs or retries the
 * session, hence the wait.
 */
import { Duration, Effect, Layer } from "effect"
import { IDLE_WAIT_POLL, isRunning, pollReads } from "../../core/session/running.js"
import { PromptFailed, SessionPrompt } from "../../services/opencode/SessionPrompt.js"
import { failedStatus, sdkCall, type SdkResult } from "./sdkCall.js"

export const PROMPT_TIMEOUT_MS = 10_000

export interface PromptClient {
  readonly session: {
    readonly status: (options?: { query?: { directory?: string } }) => Promise<SdkResult>
    readonly promptAsync: (options: {
      path: { id: string }
      body: { model: { providerID: string; modelID: string }; agent?: string; parts: Array<{ type: "text"; text: string }> }
      query?: { directory?: string }
    }) => Promise<SdkResult>
  }
}

const call = (f: () => Promise<SdkResult>, what: string) => sdkCall(f, what, PROMPT_TIMEOUT_MS, (reason) => new PromptFailed({ reason }))

export const SessionPromptSdk = (client: PromptClient | undefined, directory: string | undefined) => {
  const query = directory === undefined ? {} : { query: { directory } }
  return Layer.succeed(SessionPrompt, {
    whenIdle: (id) =>
      Effect.gen(function* () {
        if (client === undefined) return yield* new PromptFailed({ reason: "no server url" })
        for (let read = 0; read < pollReads(IDLE_WAIT_POLL); read++) {
          if (read > 0) yield* Effect.sleep(Duration.millis(IDLE_WAIT_POLL.everyMs))
          const s = yield* call(() => client.session.status(query), "status")
          const bad = failedStatus(s)
          if (bad !== undefined) return yield* new PromptFailed({ reason: `status: HTTP ${bad}` })
          if (!isRunning(s.data, id)) return
        }
        return yield* new PromptFailed({ reason: `session still running after ${IDLE_WAIT_POLL.forMs / 1000}s` })
      }),
    prompt: (id, model, agent, text) =>
      Effect.gen(function* () {
        if (client === undefined) return yield* new PromptFailed({ reason: "no server url" })
        const body = { model, ...(agent === undefined ? {} : { agent }), parts: [{ type: "text" as const, text }] }
        const r = yield* call(() => client.session.promptAsync({ path: { id }, body, ...query }), "prompt")
        const bad = failedStatus(r)
        if (bad !== undefined) return yield* new PromptFailed({ reason: `prompt: HTTP ${bad}` })
      })
  })
}
