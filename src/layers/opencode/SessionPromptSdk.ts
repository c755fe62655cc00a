/**
 * Continuing a session through the opencode SDK client the plugin receives (issue 12, US-50):
 * `GET /session/status` polled until the session is not listed as running (IDLE_WAIT_POLL of
 * core/session/running.ts: every 250 ms, at most 60 s), and `POST /session/<id>/prompt_async` with
 * the model, the agent and the text. opencode drops a prompt sent while it still runs or retries the
 * session, hence the wait.
 */
import { Effect, Layer } from "effect"
import { IDLE_WAIT_POLL, isRunning } from "../../core/session/running.js"
import { wholeSeconds } from "../../core/time.js"
import { PromptFailed, SessionPrompt } from "../../services/opencode/SessionPrompt.js"
import { failedStatus, sdkCall, type SdkResult } from "./sdkCall.js"
import { stillRunningAfter } from "./untilIdle.js"
import { traced } from "../traced.js"

export const PROMPT_TIMEOUT_MS = 10_000

/** The id of the session a create answered with (a bounded string), or undefined. */
const createdId = (data: unknown): string | undefined => {
  const id = typeof data === "object" && data !== null ? (data as { id?: unknown }).id : undefined
  return typeof id === "string" && id.length > 0 && id.length <= 200 ? id : undefined
}

export interface PromptClient {
  readonly session: {
    readonly create: (options: { body: { title: string }; query?: { directory?: string } }) => Promise<SdkResult>
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
    whenIdle: traced("SessionPrompt.whenIdle")(function* (id) {
      if (client === undefined) return yield* new PromptFailed({ reason: "no server url" })
      const running = Effect.flatMap(call(() => client.session.status(query), "status"), (s) => {
        const bad = failedStatus(s)
        return bad === undefined ? Effect.succeed(isRunning(s.data, id)) : Effect.fail(new PromptFailed({ reason: `status: HTTP ${bad}` }))
      })
      if (yield* stillRunningAfter(running, IDLE_WAIT_POLL)) return yield* new PromptFailed({ reason: `session still running after ${wholeSeconds(IDLE_WAIT_POLL.forMs)}` })
    }),
    create: traced("SessionPrompt.create")(function* (title) {
      if (client === undefined) return yield* new PromptFailed({ reason: "no server url" })
      const r = yield* call(() => client.session.create({ body: { title }, ...query }), "create")
      const bad = failedStatus(r)
      if (bad !== undefined) return yield* new PromptFailed({ reason: `create: HTTP ${bad}` })
      const id = createdId(r.data)
      if (id === undefined) return yield* new PromptFailed({ reason: "create: the answer names no session id" })
      return id
    }),
    prompt: traced("SessionPrompt.prompt")(function* (id, model, agent, text) {
      if (client === undefined) return yield* new PromptFailed({ reason: "no server url" })
      const body = { model, ...(agent === undefined ? {} : { agent }), parts: [{ type: "text" as const, text }] }
      const r = yield* call(() => client.session.promptAsync({ path: { id }, body, ...query }), "prompt")
      const bad = failedStatus(r)
      if (bad !== undefined) return yield* new PromptFailed({ reason: `prompt: HTTP ${bad}` })
    })
  })
}
