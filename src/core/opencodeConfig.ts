/**
 * Whether an opencode config file lists this plugin (`ocpool doctor`'s `plugin` check). The file is
 * JSONC (comments, trailing commas); only the top-level `plugin` array counts: a string entry
 * (`"opencode-pool"`, `"opencode-pool@1.2.3"`, a path or `file://` URL with an `opencode-pool` segment,
 * or ending in this package's `dist/opencode-plugin.js`, as `ocpool init` writes it for a checkout) or a
 * `[name, options]` pair with such a name. A mention in a comment or another key does not count.
 */
import { applyEdits, findNodeAtLocation, getNodeValue, modify, parse, parseTree, printParseErrorCode, type FormattingOptions, type Node, type ParseError } from "jsonc-parser"

export type PluginListing =
  /** `entries`: the names of this plugin's entries, as written (the first element of a `[name, options]` pair). */
  | { readonly _tag: "Listed"; readonly entries: ReadonlyArray<string> }
  | { readonly _tag: "NotListed" }
  | { readonly _tag: "Invalid"; readonly reason: string }

const NAME = /^opencode-pool(?:@[^/\\]*)?$|(?:^|[/\\])opencode-pool(?:[/\\@]|$)|[/\\]dist[/\\]opencode-plugin\.js$/

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
  const entries = plugins.flatMap((p) => {
    const name = entryName(p)
    return name !== undefined && NAME.test(name) ? [name] : []
  })
  return entries.length > 0 ? { _tag: "Listed", entries } : { _tag: "NotListed" }
}

/**
 * The file a plugin entry loads when it names one: a `file://` URL or an absolute path. `undefined` for a
 * package name (opencode installs and resolves those itself).
 */
export const entryFile = (entry: string): string | undefined => {
  if (entry.startsWith("file://")) {
    try {
      return decodeURIComponent(new URL(entry).pathname)
    } catch {
      return undefined
    }
  }
  return entry.startsWith("/") ? entry : undefined
}

/** Whether a `plugin` entry names this plugin, in any spelling (bare, versioned, path, `file://` URL, `[name, options]`). */
export const isOurEntry = (entry: unknown): boolean => {
  const name = entryName(entry)
  return name !== undefined && NAME.test(name)
}

export type ConfigEdit =
  | { readonly _tag: "Changed"; readonly text: string }
  | { readonly _tag: "Unchanged"; readonly reason: string }
  /** The file is not JSONC we can edit: where (1-based) and why. */
  | { readonly _tag: "Invalid"; readonly line: number; readonly column: number; readonly reason: string }

/** 1-based line and column of `offset` in `text`. */
export const lineColumn = (text: string, offset: number): { readonly line: number; readonly column: number } => {
  const before = text.slice(0, Math.max(0, offset))
  const lines = before.split("\n")
  return { line: lines.length, column: lines[lines.length - 1]!.length + 1 }
}

/** The indentation and line ending the file already uses (two spaces and `\n` when it says nothing). */
const formattingOf = (text: string): FormattingOptions => {
  const indented = /^([ \t]+)\S/m.exec(text)
  const unit = indented?.[1] ?? "  "
  const eol = text.includes("\r\n") ? "\r\n" : "\n"
  return unit.startsWith("\t") ? { insertSpaces: false, tabSize: 1, eol } : { insertSpaces: true, tabSize: unit.length, eol }
}

const PARSE_OPTIONS = { allowTrailingComma: true, disallowComments: false, allowEmptyContent: true }

/** The parsed top level, or where the text is not an editable JSONC object. */
const topLevel = (text: string): { readonly _tag: "Ok"; readonly root: Node | undefined } | Extract<ConfigEdit, { _tag: "Invalid" }> => {
  const errors: Array<ParseError> = []
  const root = parseTree(text, errors, PARSE_OPTIONS)
  if (errors.length > 0) {
    const first = errors[0]!
    return { _tag: "Invalid", ...lineColumn(text, first.offset), reason: printParseErrorCode(first.error) }
  }
  if (root !== undefined && root.type !== "object") return { _tag: "Invalid", ...lineColumn(text, root.offset), reason: "the top level is not an object" }
  return { _tag: "Ok", root }
}

/** A new config file holding only the plugin entry. */
export const newConfigText = (entry: string): string => `${JSON.stringify({ $schema: "https://opencode.ai/config.json", plugin: [entry] }, null, 2)}\n`

/**
 * `text` with `entry` appended to the top-level `plugin` array (created when absent), comments,
 * trailing commas, indentation and key order kept; unchanged when an entry of any spelling is there.
 */
export const addPluginEntry = (text: string, entry: string): ConfigEdit => {
  const top = topLevel(text)
  if (top._tag === "Invalid") return top
  if (top.root === undefined) return { _tag: "Changed", text: newConfigText(entry) }
  const plugins = findNodeAtLocation(top.root, ["plugin"])
  const formattingOptions = formattingOf(text)
  if (plugins === undefined) return { _tag: "Changed", text: applyEdits(text, modify(text, ["plugin"], [entry], { formattingOptions })) }
  if (plugins.type !== "array") return { _tag: "Invalid", ...lineColumn(text, plugins.offset), reason: '"plugin" is not an array' }
  if ((plugins.children ?? []).some((c) => isOurEntry(getNodeValue(c)))) return { _tag: "Unchanged", reason: "already listed" }
  return { _tag: "Changed", text: applyEdits(text, modify(text, ["plugin", -1], entry, { formattingOptions, isArrayInsertion: true })) }
}

/** `text` without any entry of this plugin in the top-level `plugin` array; unchanged when there is none. */
export const removePluginEntry = (text: string): ConfigEdit => {
  const top = topLevel(text)
  if (top._tag === "Invalid") return top
  const plugins = top.root === undefined ? undefined : findNodeAtLocation(top.root, ["plugin"])
  if (plugins === undefined || plugins.type !== "array") return { _tag: "Unchanged", reason: "not listed" }
  const ours = (plugins.children ?? []).flatMap((c, i) => (isOurEntry(getNodeValue(c)) ? [i] : []))
  if (ours.length === 0) return { _tag: "Unchanged", reason: "not listed" }
  const formattingOptions = formattingOf(text)
  // a list that held only this plugin goes whole, as `init` created it
  if (ours.length === (plugins.children ?? []).length) return { _tag: "Changed", text: applyEdits(text, modify(text, ["plugin"], undefined, { formattingOptions })) }
  let out = text
  // from the last, so the earlier indexes stay right
  for (const i of ours.reverse()) out = applyEdits(out, modify(out, ["plugin", i], undefined, { formattingOptions }))
  return { _tag: "Changed", text: out }
}
