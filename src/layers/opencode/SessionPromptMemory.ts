import { Duration, Effect, Layer } from "effect"
import { PromptFailed, SessionPrompt, type PromptTarget } from "../../services/opencode/SessionPrompt.js"
import { spanned } from "../hotPath.js"

export interface PromptCall {
  readonly session: string
  readonly model: PromptTarget
  readonly agent: string | undefined
  readonly text: string
}

/**
 * A recording session prompter for tests: `whenIdle` takes `busyMs` on the test's clock; `failWith`
 * makes every prompt fail with that reason; `create` records the title in `created` and answers
 * `ses_created_<n>` (or fails with `createFails`).
 */
export const SessionPromptMemory = (
  calls: Array<PromptCall>,
  options: { readonly busyMs?: number; readonly failWith?: string; readonly created?: Array<string>; readonly createFails?: string } = {}
) =>
  Layer.succeed(SessionPrompt, {
    create: (title) =>
      Effect.suspend(() => {
        if (options.createFails !== undefined) return Effect.fail(new PromptFailed({ problem: "other", detail: options.createFails }))
        const created = options.created ?? []
        created.push(title)
        return Effect.succeed(`ses_created_${created.length}`)
      }).pipe(spanned("SessionPrompt.create")),
    whenIdle: () => spanned((options.busyMs ?? 0) > 0 ? Effect.sleep(Duration.millis(options.busyMs!)) : Effect.void, "SessionPrompt.whenIdle"),
    prompt: (session, model, agent, text) =>
      Effect.suspend(() => {
        if (options.failWith !== undefined) return Effect.fail(new PromptFailed({ problem: "other", sessionId: session, detail: options.failWith }))
        calls.push({ session, model, agent, text })
        return Effect.void
      }).pipe(spanned("SessionPrompt.prompt"))
  })
