/**
 * Which upstream a gateway's model routes to (issue 35, docs/CLASSIFICATION.md "Scopes"): a gateway
 * (OpenRouter, opencode Go and zen) relays an upstream's account error naming that upstream in
 * `error.metadata.provider_name` (`Moonshot AI`), and only the gateway's models that route there fail
 * the same way. A model's upstream is the vendor prefix of its id after the gateway
 * (`openrouter/anthropic/claude-sonnet-4` → `anthropic`), else the vendor its model name belongs to
 * (`opencode-go/kimi-k2.6` → `moonshot`). Pure.
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
