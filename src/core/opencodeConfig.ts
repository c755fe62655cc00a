/**
 * Whether an opencode config file lists this plugin (`ocpool doctor`'s `plugin` check). The file is
 * JSONC (comments, trailing commas); only the top-level `plugin` array counts: a string entry
 * (`"opencode-pool"`, `"opencode-pool@1.2.3"`, a path or `file://` URL with an `opencode-pool` segment)
 * or a `[name, options]` pair with such a name. A mention in a comment or another key does not count.
 */
import { parse, printParseErrorCode, type ParseError } from "jsonc-parser"

export type PluginListing = { readonly _tag: "Listed" } | { readonly _tag: "NotListed" } | { readonly _tag: "Invalid"; readonly reason: string }

const NAME = /^opencode-pool(?:@[^/\\]*)?$|(?:^|[/\\])opencode-pool(?:[/\\@]|$)/

const entryName = (entry: unknown): string | undefined =>
  typeof entry === "string" ? entry : Array.isArray(entry) && typeof entry[0] === "string" ? entry[0] : undefined

export const pluginListing = (text: string): PluginListing => {
  const errors: Array<ParseError> = []
  const config: unknown = parse(text, errors, { allowTrailingComma: true, disallowComments: false, allowEmptyContent: true })
  if (errors.length > 0) {
    const first = errors[0]!
    return { _tag: "Invalid", reason: `${printParseErrorCode(first.error)} at offset ${first.offset}` }
  }
  if (config === null || typeof config !== "object" || Array.isArray(config)) return { _tag: "NotListed" }
  const plugins = (config as Record<string, unknown>).plugin
  if (!Array.isArray(plugins)) return { _tag: "NotListed" }
  return plugins.some((p) => {
    const name = entryName(p)
    return name !== undefined && NAME.test(name)
  })
    ? { _tag: "Listed" }
    : { _tag: "NotListed" }
}
