/**
 * Budgets a provider will tell when asked (issue 35, US-48): the providers whose API offers an endpoint
 * that states a request budget of the account, one entry each, and what their answers say. Pure: the
 * shell does the GET (layers/quota/KeyEndpointHttp.ts) and hands the answer's JSON here.
 *
 * OpenRouter: `GET https://openrouter.ai/api/v1/key` with the key as a bearer token answers
 * `{"data":{…,"free_model_daily_requests":{"limit","remaining","used"}}}`: the daily count of requests
 * to `:free` models, shared by every `:free` model of the account, reset at 00:00 UTC
 * (https://openrouter.ai/docs/client-sdks/typescript/models/freemodeldailyrequests.md,
 * https://openrouter.ai/docs/api/api-reference/api-keys/get-current-key). The per-minute limit of
 * `:free` models (20 a minute) is not in the answer.
 */
import { Either, ParseResult, Schema } from "effect"
import { DAY_MS } from "../constants.js"
import { isRecord, type JsonRecord } from "../json.js"

/** A budget an endpoint stated: requests left of `limit` until `resetAt` (epoch ms). */
export interface StatedBudget {
  readonly remaining: number
  readonly limit: number
  readonly resetAt: number
}

/** What one answer says: a budget, no budget at all (a key the budget does not apply to), or nothing usable. */
export type KeyReading =
  | { readonly _tag: "Budget"; readonly budget: StatedBudget }
  | { readonly _tag: "NoBudget" }
  | { readonly _tag: "Malformed"; readonly reason: string }

/** One provider that states a budget when asked. */
export interface KeyEndpoint {
  /** opencode's provider id (the slot's text before the first `/`). */
  readonly provider: string
  /** The endpoint, read with `GET` and the key as a bearer token. */
  readonly url: string
  /** Where opencode finds the key in the environment, in order (after `provider.<id>.options.apiKey`). */
  readonly env: ReadonlyArray<string>
  /** Which of the provider's models draw on the stated budget (their slots cool with it). */
  readonly covers: (model: string) => boolean
  /** What the budget is called in log lines. */
  readonly budgetName: string
  /** The answer's JSON (already parsed), read at `now`. */
  readonly read: (answer: unknown, now: number) => KeyReading
}

/** The next 00:00 UTC strictly after `now`. */
export const nextUtcMidnight = (now: number): number => Math.floor(now / DAY_MS) * DAY_MS + DAY_MS

/** A count: a whole number from 0 to 2^53 − 1. */
const Count = Schema.Number.pipe(Schema.int(), Schema.between(0, Number.MAX_SAFE_INTEGER))

/** OpenRouter's `free_model_daily_requests`: `limit` is required and above 0; `remaining`, else `limit − used`. */
const FreeDaily = Schema.Struct({
  limit: Count.pipe(Schema.positive()),
  remaining: Schema.optional(Count),
  used: Schema.optional(Count)
})

const decodeFreeDaily = Schema.decodeUnknownEither(FreeDaily)

/** OpenRouter's answer: `data.free_model_daily_requests`, absent or null when the key states none. */
export const readOpenRouterKey = (answer: unknown, now: number): KeyReading => {
  if (!isRecord(answer) || !isRecord(answer.data)) return { _tag: "Malformed", reason: "no data object" }
  const daily = answer.data.free_model_daily_requests
  if (daily === undefined || daily === null) return { _tag: "NoBudget" }
  const decoded = decodeFreeDaily(daily)
  if (Either.isLeft(decoded)) return { _tag: "Malformed", reason: `free_model_daily_requests: ${firstIssue(decoded.left)}` }
  const { limit, remaining, used } = decoded.right
  const left = remaining ?? (used === undefined ? undefined : Math.max(0, limit - used))
  if (left === undefined) return { _tag: "Malformed", reason: "free_model_daily_requests has neither remaining nor used" }
  return { _tag: "Budget", budget: { remaining: Math.min(left, limit), limit, resetAt: nextUtcMidnight(now) } }
}

/** The first line of a decode failure, cut: log lines stay short. */
const firstIssue = (e: ParseResult.ParseError): string => {
  const text = ParseResult.TreeFormatter.formatErrorSync(e).split("\n").map((l) => l.trim()).filter((l) => l !== "")
  const line = text[text.length - 1] ?? "unreadable"
  return line.length > 120 ? `${line.slice(0, 120)}…` : line
}

/** The providers that state a budget when asked: adding one is one entry. */
export const KEY_ENDPOINTS: ReadonlyArray<KeyEndpoint> = [
  {
    provider: "openrouter",
    url: "https://openrouter.ai/api/v1/key",
    env: ["OPENROUTER_API_KEY"],
    covers: (model) => model.endsWith(":free"),
    budgetName: ":free requests today",
    read: readOpenRouterKey
  }
]

/**
 * The key opencode uses for `endpoint.provider`: `provider.<id>.options.apiKey` of its config (opencode
 * has already put `{env:NAME}` values in), else the first of the endpoint's environment variables that
 * is set. Never logged, never shown.
 */
export const apiKeyOf = (endpoint: KeyEndpoint, config: JsonRecord | undefined, env: Readonly<Record<string, string | undefined>>): string | undefined => {
  const providers = config !== undefined && isRecord(config.provider) ? config.provider : undefined
  const block = providers?.[endpoint.provider]
  const options = isRecord(block) ? block.options : undefined
  const key = isRecord(options) ? options.apiKey : undefined
  if (typeof key === "string" && key.trim() !== "") return key.trim()
  for (const name of endpoint.env) {
    const v = env[name]
    if (v !== undefined && v.trim() !== "") return v.trim()
  }
  return undefined
}
