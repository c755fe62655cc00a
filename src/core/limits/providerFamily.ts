/**
 * Which provider a failed request went to, as a family name the classification rules can key on
 * (docs/CLASSIFICATION.md "Families"), and the time zone a family states wall-clock resets in. The
 * request URL's host decides; without one, the opencode provider id. And (issue 35) which upstream a
 * gateway's model routes to (`vendorOfModel`, `vendorOfName`, at the end). Pure.
 */
import { DAY_MS, HOUR_MS } from "../constants.js"

export type Family =
  | "opencode"
  | "openrouter"
  | "anthropic"
  | "openai"
  | "chatgpt"
  | "gemini"
  | "vertex"
  | "groq"
  | "mistral"
  | "deepseek"
  | "xai"
  | "copilot"
  | "azure"
  | "bedrock"
  | "zai"
  | "moonshot"

/** Host suffix → family, tried in order. */
const HOSTS: ReadonlyArray<readonly [string, Family]> = [
  ["opencode.ai", "opencode"],
  ["openrouter.ai", "openrouter"],
  ["anthropic.com", "anthropic"],
  ["chatgpt.com", "chatgpt"],
  ["openai.azure.com", "azure"],
  ["cognitiveservices.azure.com", "azure"],
  ["services.ai.azure.com", "azure"],
  ["openai.com", "openai"],
  ["generativelanguage.googleapis.com", "gemini"],
  ["aiplatform.googleapis.com", "vertex"],
  ["groq.com", "groq"],
  ["mistral.ai", "mistral"],
  ["deepseek.com", "deepseek"],
  ["x.ai", "xai"],
  ["githubcopilot.com", "copilot"],
  ["amazonaws.com", "bedrock"],
  ["z.ai", "zai"],
  ["bigmodel.cn", "zai"],
  ["moonshot.ai", "moonshot"],
  ["moonshot.cn", "moonshot"],
  ["kimi.com", "moonshot"]
]

/** opencode provider id (exact) → family. */
const IDS: Readonly<Record<string, Family>> = {
  opencode: "opencode",
  "opencode-go": "opencode",
  openrouter: "openrouter",
  anthropic: "anthropic",
  openai: "openai",
  google: "gemini",
  "google-vertex": "vertex",
  "google-vertex-anthropic": "vertex",
  groq: "groq",
  mistral: "mistral",
  deepseek: "deepseek",
  xai: "xai",
  "github-copilot": "copilot",
  "github-copilot-enterprise": "copilot",
  azure: "azure",
  "amazon-bedrock": "bedrock",
  zai: "zai",
  "zai-coding-plan": "zai",
  zhipuai: "zai",
  "zhipuai-coding-plan": "zai",
  moonshotai: "moonshot",
  "moonshotai-cn": "moonshot",
  "kimi-for-coding": "moonshot"
}

/** Vertex AI's regional hosts put the region before a dash: `us-east5-aiplatform.googleapis.com`. */
const REGIONAL = "aiplatform.googleapis.com"

/** `host` is `suffix` or a name under it (or, for Vertex AI, a regional host of it). */
const hostMatches = (host: string, suffix: string): boolean =>
  host === suffix || host.endsWith(`.${suffix}`) || (suffix === REGIONAL && host.endsWith(`-${suffix}`))

/** The family of a request sent to `host` (when known) by opencode provider `provider`. */
export const familyOf = (host: string | undefined, provider: string | undefined): Family | undefined => {
  if (host !== undefined) {
    for (const [suffix, family] of HOSTS) if (hostMatches(host, suffix)) return family
  }
  return provider === undefined ? undefined : IDS[provider.toLowerCase()]
}

/**
 * A time zone the rules use: fixed offsets, and US Pacific time with its daylight-saving rule (second
 * Sunday of March 02:00 to first Sunday of November 02:00, local time).
 */
export type Zone = "UTC" | "+08:00" | "America/Los_Angeles"

/** The zone a family states zone-less wall-clock resets in (docs/CLASSIFICATION.md "Time zones"); UTC otherwise. */
export const FAMILY_ZONES: Readonly<Partial<Record<Family, Zone>>> = {
  // docs.z.ai/devpack/overview states its hours in UTC+8; no other family documents a zone of its own
  zai: "+08:00"
}


/** Epoch ms of 00:00 UTC on the `n`th `weekday` (0 = Sunday) of `month` (0-based) in `year`. */
const nthWeekday = (year: number, month: number, weekday: number, n: number): number => {
  const first = Date.UTC(year, month, 1)
  const offset = (weekday - new Date(first).getUTCDay() + 7) % 7
  return first + (offset + (n - 1) * 7) * DAY_MS
}

/** The zone's offset from UTC, in ms, at the instant `at`. */
export const zoneOffsetMs = (zone: Zone, at: number): number => {
  switch (zone) {
    case "UTC":
      return 0
    case "+08:00":
      return 8 * HOUR_MS
    case "America/Los_Angeles": {
      const year = new Date(at).getUTCFullYear()
      // 02:00 PST = 10:00 UTC; 02:00 PDT = 09:00 UTC
      const start = nthWeekday(year, 2, 0, 2) + 10 * HOUR_MS
      const end = nthWeekday(year, 10, 0, 1) + 9 * HOUR_MS
      return at >= start && at < end ? -7 * HOUR_MS : -8 * HOUR_MS
    }
  }
}

/** The next local midnight of `zone` strictly after `now`, as epoch ms. */
export const nextMidnight = (zone: Zone, now: number): number => {
  const offset = zoneOffsetMs(zone, now)
  let t = Math.floor((now + offset) / DAY_MS) * DAY_MS + DAY_MS - offset
  // a daylight-saving change between now and then moves local midnight by the change
  const later = zoneOffsetMs(zone, t)
  if (later !== offset) t += offset - later
  return t <= now ? t + DAY_MS : t
}

/*
 * Which upstream a gateway's model routes to (issue 35, docs/CLASSIFICATION.md "Scopes"): a gateway
 * (OpenRouter, opencode Go and zen) relays an upstream's account error naming that upstream in
 * `error.metadata.provider_name` (`Moonshot AI`), and only the gateway's models that route there fail
 * the same way. A model's upstream is the vendor prefix of its id after the gateway
 * (`openrouter/anthropic/claude-sonnet-4` → `anthropic`), else the vendor its model name belongs to
 * (`opencode-go/kimi-k2.6` → `moonshot`). Kept here, beside the families, so a 429 executes no more
 * files than before (DECISIONS 268).
 */

/** Names and id prefixes as a gateway spells them (lower case, letters and digits only) → one vendor key. */
const VENDOR_NAMES: ReadonlyArray<readonly [RegExp, string]> = [
  [/^(moonshot|kimi)/, "moonshot"],
  [/^anthropic/, "anthropic"],
  [/^(openai|azure)/, "openai"],
  [/^(google|gemini|vertex)/, "google"],
  [/^(zai|zhipu|bigmodel)/, "zai"],
  [/^deepseek/, "deepseek"],
  [/^(xai|grok)/, "xai"],
  [/^mistral/, "mistral"],
  [/^(alibaba|qwen|dashscope)/, "qwen"],
  [/^minimax/, "minimax"]
]

/** Model-name stems of each vendor, for a gateway model id without a vendor prefix. */
const MODEL_STEMS: ReadonlyArray<readonly [RegExp, string]> = [
  [/^kimi/, "moonshot"],
  [/^claude/, "anthropic"],
  [/^(gpt|o[134](?![a-z])|codex|chatgpt)/, "openai"],
  [/^(gemini|gemma)/, "google"],
  [/^glm/, "zai"],
  [/^deepseek/, "deepseek"],
  [/^grok/, "xai"],
  [/^(mistral|codestral|devstral|magistral|ministral)/, "mistral"],
  [/^qwen/, "qwen"],
  [/^minimax/, "minimax"]
]

const squash = (s: string): string => s.toLowerCase().replace(/[^a-z0-9]/g, "")

/** The vendor key of an upstream as a gateway names it (`Moonshot AI` → `moonshot`); unknown names keep their squashed form. */
export const vendorOfName = (name: string): string | undefined => {
  const s = squash(name.slice(0, 200))
  if (s === "") return undefined
  for (const [re, vendor] of VENDOR_NAMES) if (re.test(s)) return vendor
  return s
}

/**
 * The vendor a gateway model routes to: `gateway/vendor/model` by its vendor prefix, `gateway/model` by
 * its model name's stem, else `undefined` (not known: only the attributed model cools).
 */
export const vendorOfModel = (model: string): string | undefined => {
  const id = model.slice(model.indexOf("/") + 1)
  const slash = id.indexOf("/")
  if (slash > 0) return vendorOfName(id.slice(0, slash))
  const name = id.toLowerCase()
  for (const [re, vendor] of MODEL_STEMS) if (re.test(name)) return vendor
  return undefined
}
