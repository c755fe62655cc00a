/**
 * The classification rules as data (issue 19, docs/CLASSIFICATION.md): ordered rows, the first whose
 * conditions all hold wins. SPEC §7.3 is the baseline (its eight rows are here, marked `§7.3`); the
 * other rows extend it from the providers' real payloads (test/fixtures/provider-errors/). Adding a
 * provider's new wording is one row here and one case in the corpus. Pure data.
 */
import type { Family, Zone } from "./providerFamily.js"

/** `entitlement` (issue 35): the provider refuses this client a tier it offers elsewhere (opencode's free tier outside opencode). */
export type LimitClass = "context_limit" | "auth" | "unavailable" | "entitlement" | "quota" | "rate_limit" | "outage"

/**
 * What a limit cools: `model` the attributed model; `provider` every slot of its provider; `free`
 * every `:free` slot of its provider (OpenRouter's shared free-model counters) and the attributed model;
 * `upstream` (issue 35) every slot of the gateway that routes to the upstream the error names
 * (`metadata.provider_name`), and the attributed model.
 */
export type RuleScope = "model" | "provider" | "free" | "upstream"

export interface LimitRule {
  readonly id: string
  readonly cls: LimitClass
  /** Where absent: `auth` and credit rows cool the provider, others follow SPEC §7.4. */
  readonly scope?: RuleScope
  /** Money, not a rate: the provider's account is out of credit (long escalating windows, a warning). */
  readonly credit?: true
  /** Only requests to these families. */
  readonly families?: ReadonlyArray<Family>
  /** Only these HTTP statuses. */
  readonly statuses?: ReadonlyArray<number>
  /** Any field value (`type`, `code`, `status`, `reason`, quota id …) equal to one of these (lower case). */
  readonly values?: ReadonlyArray<string>
  /** Any phrase (SPEC §7.2) in the view's text. With `values`, either suffices. */
  readonly phrases?: ReadonlyArray<string>
  /** The text contains the attributed model's id. */
  readonly namesModel?: true
  /** The text states a per-minute budget smaller than the request alone (`Limit 7000, Used 0, Requested 12903`). */
  readonly overBudget?: true
  /** A Google `QuotaFailure` quota id names a per-day (`PerDay`) or per-minute (`PerMinute`, `PerSecond`) quota (issue 35). */
  readonly quotaWindow?: "day" | "minute"
  /** The text does not state a request bigger than the budget (the `overBudget` numbers do not hold). */
  readonly fits?: true
  /** A gateway relayed the error of an upstream it names (`metadata.provider_name` beside `metadata.raw`). */
  readonly relayed?: true
  /** Without a stated reset, or with an earlier one, the window ends at the next midnight of this zone. */
  readonly dayEnd?: Zone
  /** Why the row exists (shown in docs/CLASSIFICATION.md). */
  readonly why: string
}

/** Wordings and values of an account out of money (the `credit` row, and a gateway's upstream out of it). */
const CREDIT_PHRASES: ReadonlyArray<string> = [
  "insufficient credit",
  "insufficient balance",
  "insufficient funds",
  "insufficient account balance",
  "credit balance is too low",
  "out of credits",
  "used all available credits",
  "spending limit",
  "billing hard limit",
  "exceeded current quota error",
  "account balance",
  "in arrears",
  "account is in good standing"
]
const CREDIT_VALUES: ReadonlyArray<string> = ["insufficient_quota", "insufficient_balance", "billing_hard_limit_reached", "payment_required", "exceeded_current_quota_error", "arrearage"]

export const LIMIT_RULES: ReadonlyArray<LimitRule> = [
  {
    id: "quota-id-per-day",
    cls: "quota",
    quotaWindow: "day",
    fits: true,
    dayEnd: "America/Los_Angeles",
    why: "A Google `QuotaFailure` naming a per-day quota id (`GenerateRequestsPerDayPerProjectPerModel-FreeTier`) is a daily allowance, until midnight Pacific time, whatever else the text says (its metric `…_input_token_count` is no context limit); only a request stated bigger than the limit never fits."
  },
  {
    id: "quota-id-per-minute",
    cls: "rate_limit",
    quotaWindow: "minute",
    fits: true,
    why: "A Google `QuotaFailure` naming only per-minute quota ids (`GenerateContentInputTokensPerModelPerMinute-FreeTier`) is a rate limit: wait the `RetryInfo` delay. Its metric `…_input_token_count` says which budget ran out, not that the request is too long."
  },
  {
    id: "context",
    cls: "context_limit",
    phrases: ["context limit", "context length", "context window", "maximum context", "prompt is too long", "ContextOverflowError", "input is too long", "maximum prompt length", "too many input tokens", "prompt token count", "input token count", "exceeds the maximum number of tokens"],
    values: ["model_max_prompt_tokens_exceeded"],
    why: "§7.3 row 1, with Bedrock's, Gemini's and Copilot's wordings: the request is too long for the model."
  },
  {
    id: "never-fits",
    cls: "context_limit",
    phrases: ["request too large", "request entity too large", "payload too large", "long context", "reduce your message size"],
    values: ["request_too_large", "string_above_max_length"],
    why: "A request bigger than the whole per-minute budget, or behind a plan gate (long context), can never succeed on this model: waiting does not help, so nothing cools."
  },
  {
    id: "over-budget",
    cls: "context_limit",
    overBudget: true,
    why: "A rate limit whose own numbers say the request alone is bigger than the per-minute budget (Groq's `Limit 7000, Used 0, Requested ~12903`): it can never pass there."
  },
  { id: "too-large-status", cls: "context_limit", statuses: [413], why: "HTTP 413: the request itself is too large." },
  { id: "unauthorized", cls: "auth", statuses: [401], why: "HTTP 401 is bad credentials whatever words follow (opencode's `Request blocked by upstream provider` included)." },
  {
    id: "model-access",
    cls: "unavailable",
    phrases: ["access to the model", "access to this model", "access to model", "not allowed to use this model", "not available for your account", "not currently available for this chatgpt account", "not allowed to use publisher model", "organization must be verified"],
    why: "Access is granted per model (Bedrock model access, a plan without this model): the other models of the provider still answer."
  },
  {
    id: "bad-credentials",
    cls: "auth",
    phrases: [
      "invalid api key",
      "ProviderAuthError",
      "api key not valid",
      "incorrect api key",
      "invalid x-api-key",
      "api key invalid",
      "authentication error",
      "authentication fails",
      "authentication failed",
      "invalid authentication",
      "invalid credentials",
      "credential is only authorized",
      "unauthorized",
      "permission error",
      "permission denied",
      "is not authorized to perform",
      "security token included in the request is invalid",
      "api key expired",
      "api key has expired",
      "token has expired",
      "token expired",
      "missing api key",
      "no api key"
    ],
    values: ["unrecognizedclientexception", "invalidsignatureexception", "api_key_invalid", "invalid_api_key"],
    why: "§7.3 row 2, and bad or unauthorised credentials stated in a 400 or 403 body (Gemini, xAI, Anthropic, Bedrock): every slot on the provider fails the same way."
  },
  {
    id: "withdrawn",
    cls: "unavailable",
    phrases: [
      "model not found",
      "ProviderModelNotFoundError",
      "model is unavailable",
      "no such model",
      "decommissioned",
      "no longer supported",
      "no longer available",
      "has been deprecated",
      "model not supported",
      "model is not supported",
      "unsupported model",
      "not a valid model",
      "invalid model",
      "unknown model",
      "no endpoints found",
      "deployment not found",
      "on-demand throughput",
      "not found for account"
    ],
    values: ["model_not_found", "model_decommissioned", "model_not_supported", "unsupported_model", "deploymentnotfound"],
    why: "§7.3 row 3, and withdrawn or unsupported models named only by the words (Groq, Copilot, Bedrock, OpenRouter, Azure): the model cannot answer, whatever its id in the text."
  },
  {
    id: "free-tier-entitlement",
    cls: "entitlement",
    scope: "provider",
    phrases: ["free tier can only be used", "FreeTierError"],
    values: ["freetiererror"],
    why: "opencode's free tier refuses requests it does not take for opencode's own (`OpenCode's free tier can only be used from within OpenCode`, 403 `FreeTierError`): no rate and no credential fault, the same for every free model of the provider; waiting a minute does not help."
  },
  {
    id: "openrouter-free-per-day",
    cls: "quota",
    scope: "free",
    families: ["openrouter"],
    phrases: ["free-models-per-day"],
    dayEnd: "UTC",
    why: "OpenRouter counts every `:free` model against one daily allowance, reset at 00:00 UTC."
  },
  {
    id: "openrouter-free-per-min",
    cls: "rate_limit",
    scope: "free",
    families: ["openrouter"],
    phrases: ["free-models-per-min"],
    why: "OpenRouter's per-minute allowance is shared by every `:free` model."
  },
  {
    id: "provider-wide-quota",
    cls: "quota",
    scope: "provider",
    phrases: ["FreeUsageLimitError", "GoUsageLimitError", "free usage", "free tier limit"],
    values: ["usage_limit_reached", "freeusagelimiterror", "gousagelimiterror"],
    why: "§7.3 row 4 with §7.4's provider-wide texts, read in `error.type` too: opencode zen's free tier, opencode Go's and a ChatGPT plan's usage limits cover the whole account."
  },
  {
    id: "opencode-plan-limit",
    cls: "quota",
    scope: "provider",
    families: ["opencode"],
    phrases: ["monthly usage", "monthly limit", "weekly usage", "5-hour usage", "5 hour usage", "usage limit reached"],
    why: "opencode Go's and zen's plan limits (`Monthly usage limit reached. It will reset in 10 days 19 hours.`, the weekly and 5-hour forms) cover every model of the plan's provider, also when only opencode's message is left of the error."
  },
  {
    id: "plan-window",
    cls: "quota",
    scope: "provider",
    phrases: ["weekly limit", "weekly usage", "weekly rate limit", "weekly/monthly", "(7-day) usage limit", "5-hour limit", "5 hour limit", "five-hour limit"],
    values: ["user_weekly_rate_limited"],
    why: "A plan's 5-hour or weekly allowance (Copilot, Kimi Code, Z.ai, ChatGPT) covers every model of the account."
  },
  {
    id: "zai-plan-quota",
    cls: "quota",
    scope: "provider",
    families: ["zai"],
    values: ["1308", "1310"],
    why: "Z.ai's coding plan states its 5-hour and weekly usage limits as codes 1308 and 1310: the whole plan, not one model."
  },
  {
    id: "gateway-upstream-credit",
    cls: "quota",
    credit: true,
    scope: "upstream",
    relayed: true,
    phrases: [...CREDIT_PHRASES, "is suspended"],
    values: CREDIT_VALUES,
    why: "A gateway relaying its upstream's account error (`metadata.raw`: `Your account … is suspended due to insufficient balance`, from `provider_name` `Moonshot AI`, often the user's own key, `is_byok`): that upstream's account is out of money, not the gateway's; only the gateway's models routed there fail."
  },
  {
    id: "zai-credit",
    cls: "quota",
    credit: true,
    families: ["zai"],
    values: ["1113"],
    why: "Z.ai code 1113: the account balance is empty."
  },
  {
    id: "credit",
    cls: "quota",
    credit: true,
    phrases: CREDIT_PHRASES,
    values: CREDIT_VALUES,
    why: "No money left on the account (OpenRouter, DeepSeek, Anthropic, xAI, OpenAI's `insufficient_quota`, Moonshot): every model of the provider fails until someone tops up."
  },
  { id: "payment-required", cls: "quota", credit: true, statuses: [402], why: "HTTP 402 Payment Required: out of credit." },
  {
    id: "gemini-per-day",
    cls: "quota",
    families: ["gemini", "vertex"],
    phrases: ["per day", "perday"],
    dayEnd: "America/Los_Angeles",
    why: "Gemini's per-day quotas reset at midnight Pacific time; the `retryDelay` they carry is seconds and would retry all day."
  },
  {
    id: "per-day",
    cls: "quota",
    phrases: ["per day", "(tpd)", "(rpd)"],
    why: "A per-day allowance (OpenAI's and Groq's RPD/TPD) is a quota, whatever the words around it."
  },
  {
    id: "per-minute",
    cls: "rate_limit",
    phrases: ["per minute", "per second", "(tpm)", "(rpm)"],
    why: "A per-minute or per-second budget is a rate limit even when it is called a quota (Gemini's `PerMinute` quota ids, Cerebras's `request_quota_exceeded`)."
  },
  {
    id: "quota",
    cls: "quota",
    phrases: ["quota", "usage limit", "free limit"],
    why: "§7.3 row 4."
  },
  {
    id: "organization-rate",
    cls: "rate_limit",
    scope: "provider",
    phrases: ["organization max", "max organization"],
    why: "Moonshot states organisation-wide request and concurrency caps (`reached organization max RPM`): every model of the key shares them."
  },
  {
    id: "rate",
    cls: "rate_limit",
    phrases: ["rate limit", "too many requests", "limit reached", "rate increased too quickly", "throttl"],
    values: ["rate_limit_exceeded", "too_many_requests", "resource_exhausted"],
    why: "§7.3 row 5 (phrases), with Bedrock's ThrottlingException and Gemini's RESOURCE_EXHAUSTED."
  },
  { id: "rate-status", cls: "rate_limit", statuses: [429], why: "§7.3 row 5: HTTP 429." },
  {
    id: "outage",
    cls: "outage",
    phrases: ["overloaded", "upstream", "temporarily unavailable", "service unavailable", "bad gateway", "gateway timeout", "internal server error", "ServiceUnavailableException", "ModelNotReadyException", "degraded function"],
    values: ["overloaded_error", "api_error", "internal_server_error", "server_error", "unavailable"],
    why: "§7.3 row 6 (phrases), with Anthropic's, OpenAI's and Bedrock's outage types."
  },
  { id: "outage-status", cls: "outage", statuses: [500, 502, 503, 504, 520, 521, 522, 523, 524, 529], why: "§7.3 row 6, with Cloudflare's 52x." },
  { id: "forbidden", cls: "auth", statuses: [403], why: "§7.3 row 7 (401 is caught above)." },
  { id: "not-found-model", cls: "unavailable", statuses: [404], namesModel: true, why: "§7.3 row 8." }
]
