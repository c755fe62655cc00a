/**
 * opencode.json builders for e2e tests: two fake providers on the fake LLM, no network anywhere.
 */

export type OpencodeConfig = Record<string, unknown>

const model = (name: string) => ({ name, tool_call: true, limit: { context: 128_000, output: 4_096 } })

/** Model ids served by each fake provider. `fake-<behaviour>` ids always behave that way (see fake-llm.mjs). */
export const FAKE_MODELS = {
  fakeA: ["pool-a", "fake-hang", "fake-429", "fake-empty", "fake-limit"],
  fakeB: ["pool-b", "pool-c", "fake-hang", "fake-429", "fake-empty", "fake-limit"]
} as const

export interface FakeConfigOptions {
  /** The fake's root URL, `http://127.0.0.1:<port>`; provider P gets baseURL `<fakeUrl>/P/v1`. */
  readonly fakeUrl: string
  /** Default `fakeA/pool-a`. */
  readonly model?: string
  /** Default = `model` (so the title generator also hits the fake). */
  readonly smallModel?: string
  /** Agents merged over the default `explore` subagent (fakeB/pool-b). */
  readonly agents?: Record<string, Record<string, unknown>>
  /** Extra top-level keys, merged last (shallow). */
  readonly extra?: OpencodeConfig
}

/**
 * The harness's base config, after the reference `opencode.json.template`: providers `fakeA` and
 * `fakeB` (`@ai-sdk/openai-compatible`, bundled in the binary, so nothing is installed at runtime),
 * `enabled_providers` restricted to them, snapshots/sharing/autoupdate off, and an `explore` subagent
 * on `fakeB/pool-b`.
 */
export const fakeConfig = (options: FakeConfigOptions): OpencodeConfig => {
  const provider = (id: string, name: string, ids: ReadonlyArray<string>) => ({
    npm: "@ai-sdk/openai-compatible",
    name,
    // One path prefix per provider, so the fake's request log says which provider was called.
    options: { baseURL: `${options.fakeUrl.replace(/\/+$/, "")}/${id}/v1`, apiKey: "not-a-secret" },
    models: Object.fromEntries(ids.map((id) => [id, model(id)]))
  })
  const main = options.model ?? "fakeA/pool-a"
  return {
    $schema: "https://opencode.ai/config.json",
    autoupdate: false,
    share: "disabled",
    snapshot: false,
    model: main,
    small_model: options.smallModel ?? main,
    enabled_providers: ["fakeA", "fakeB"],
    provider: {
      fakeA: provider("fakeA", "Fake Provider A", FAKE_MODELS.fakeA),
      fakeB: provider("fakeB", "Fake Provider B", FAKE_MODELS.fakeB)
    },
    agent: {
      explore: {
        mode: "subagent",
        description: "e2e explore subagent",
        model: "fakeB/pool-b",
        prompt: "You are the e2e explore subagent."
      },
      ...options.agents
    },
    permission: { edit: "allow", webfetch: "deny" },
    ...options.extra
  }
}
