/**
 * Continuing a session through the opencode SDK client the plugin receives (issue 12, US-50):
 * `GET /session/status` polled until the session is not listed as running (IDLE_WAIT_POLL of
 * core/session/running.ts: every 250 ms, at most 60 s), and `POST /session/<id>/prompt_async` with
 * the model, the agent and the text. opencode drops a prompt sent while it still runs or retries the
 * session, hence the wait.
 */
import { Effect, Layer } from "effect"
import { IDLE_WAIT_POLL, isRunning } from "../../core/session/running.js"
import { PromptFailed, SessionPrompt } from "../../services/opencode/SessionPrompt.js"
import { failedStatus, sdkCall, type SdkResult } from "./sdkCall.js"
import { stillRunningAfter } from "./untilIdle.js"
import { traced } from "../hotPath.js"

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

const call = (f: () => Promise<SdkResult>, what: string, sessionId?: string) =>
  sdkCall(f, what, PROMPT_TIMEOUT_MS, (failure) => new PromptFailed(sessionId === undefined ? failure : { ...failure, sessionId }))

export const SessionPromptSdk = (client: PromptClient | undefined, directory: string | undefined) => {
  const query = directory === undefined ? {} : { query: { directory } }
  return Layer.succeed(SessionPrompt, {
    whenIdle: traced("SessionPrompt.whenIdle")(function* (id) {
      if (client === undefined) return yield* new PromptFailed({ problem: "no-client", sessionId: id })
      const running = Effect.flatMap(call(() => client.session.status(query), "status", id), (s) => {
        const bad = failedStatus(s)
        return bad === undefined ? Effect.succeed(isRunning(s.data, id)) : Effect.fail(new PromptFailed({ problem: "http", sessionId: id, call: "status", status: bad }))
      })
      if (yield* stillRunningAfter(running, IDLE_WAIT_POLL)) return yield* new PromptFailed({ problem: "still-running", sessionId: id, ms: IDLE_WAIT_POLL.forMs })
    }),
    create: traced("SessionPrompt.create")(function* (title) {
      if (client === undefined) return yield* new PromptFailed({ problem: "no-client" })
      const r = yield* call(() => client.session.create({ body: { title }, ...query }), "create")
      const bad = failedStatus(r)
      if (bad !== undefined) return yield* new PromptFailed({ problem: "http", call: "create", status: bad })
      const id = createdId(r.data)
      if (id === undefined) return yield* new PromptFailed({ problem: "no-session-id", call: "create" })
      return id
    }),
    prompt: traced("SessionPrompt.prompt")(function* (id, model, agent, text) {
      if (client === undefined) return yield* new PromptFailed({ problem: "no-client", sessionId: id })
      const body = { model, ...(agent === undefined ? {} : { agent }), parts: [{ type: "text" as const, text }] }
      const r = yield* call(() => client.session.promptAsync({ path: { id }, body, ...query }), "prompt", id)
      const bad = failedStatus(r)
      if (bad !== undefined) return yield* new PromptFailed({ problem: "http", sessionId: id, call: "prompt", status: bad })
    })
  })
}
