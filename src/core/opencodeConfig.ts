/**
 * opencode's config and this plugin's entry in it: whether a config lists the plugin (`ocpool doctor`),
 * and `ocpool init`'s edits (add or remove the entry) as splices that keep every other byte. The file
 * is JSONC (comments, trailing commas); only the top-level `plugin` array counts. An entry is this
 * plugin's exactly when it is the package name `opencode-pool` (optionally `@<version>`), or a
 * `file://` URL whose target belongs to an opencode-pool installation; the second needs the file
 * system, so the shell passes that test in (`isOurs`). A mention in a comment or another key does not
 * count. An entry of ours that loads another installation (`isOther`, also the shell's test) is
 * replaced by this installation's entry when `init` adds it. Pure.
 */
import { parse, printParseErrorCode, type ParseError } from "jsonc-parser"
import { BOM, byteTextOf, utf8Of, type ByteText } from "./byteText.js"
import { appendItem, applySplices, colonOf, eolNear, lineColumnOf, parseTopLevel, removeItems, tooDeepAt, type Element, type List, type Property, type Splice } from "./jsoncEdit.js"

export type PluginListing =
  /** `entries`: the names of this plugin's entries, as written (the first element of a `[name, options]` pair). */
  | { readonly _tag: "Listed"; readonly entries: ReadonlyArray<string> }
  | { readonly _tag: "NotListed" }
  | { readonly _tag: "Invalid"; readonly reason: string }

/** The package name, bare or with a version or tag (`opencode-pool@1.2.3`, `opencode-pool@latest`). */
const PACKAGE = /^opencode-pool(?:@[^\s/\\@]+)?$/

/** Whether `name` is this plugin's package name (the part of the test that needs no file system). */
export const isOurName = (name: string): boolean => PACKAGE.test(name.trim())

const entryName = (entry: unknown): string | undefined =>
  typeof entry === "string" ? entry : Array.isArray(entry) && typeof entry[0] === "string" ? entry[0] : undefined

/**
 * The entries of the top-level `plugin` array that `isOurs` accepts. opencode reads the last of
 * duplicate keys, and so does this.
 */
export const pluginListing = (text: string, isOurs: (name: string) => boolean = isOurName): PluginListing => {
  const errors: Array<ParseError> = []
  const deep = tooDeepAt(text)
  if (deep !== undefined) return { _tag: "Invalid", reason: `nested too deep at offset ${deep}` }
  const config: unknown = parse(text, errors, { allowTrailingComma: true, disallowComments: false, allowEmptyContent: true })
  if (errors.length > 0) return { _tag: "Invalid", reason: `${printParseErrorCode(errors[0]!.error)} at offset ${errors[0]!.offset}` }
  if (config === null || typeof config !== "object" || Array.isArray(config)) return { _tag: "NotListed" }
  const plugins = (config as Record<string, unknown>).plugin
  if (!Array.isArray(plugins)) return { _tag: "NotListed" }
  const entries = plugins.flatMap((p) => {
    const name = entryName(p)
    return name !== undefined && isOurs(name) ? [name] : []
  })
  return entries.length > 0 ? { _tag: "Listed", entries } : { _tag: "NotListed" }
}

/**
 * The file a plugin entry loads when it names one: a `file://` URL or an absolute path. `undefined`
 * for a package name (opencode installs and resolves those itself).
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

/**
 * Whether an entry's file looks like an opencode-pool file by its path alone (a segment named
 * `opencode-pool`): only for `doctor`, to name a stale entry whose file is gone; never for editing.
 */
export const looksLikeOurPath = (file: string): boolean => /(?:^|\/)opencode-pool(?:\/|$)/.test(file)

export type ConfigEdit =
  /**
   * `text`: the whole new file, as a byte string (core/jsoncEdit.ts). Adding: `replaced`, the entry of
   * another installation whose name now names this one (options of a `[name, {…}]` pair kept);
   * `dropped`, further entries of other installations taken out (opencode would load each).
   */
  | { readonly _tag: "Changed"; readonly text: ByteText; readonly replaced?: string | undefined; readonly dropped?: ReadonlyArray<string> | undefined }
  | { readonly _tag: "Unchanged"; readonly reason: string }
  /** The file is not JSONC we can edit: where (1-based, in characters) and why. */
  /** `syntax`: not JSONC at all (else JSONC this edit refuses: too deep, a second `plugin` key, the wrong types). */
  | { readonly _tag: "Invalid"; readonly line: number; readonly column: number; readonly reason: string; readonly syntax: boolean }

/** A new config file holding only the plugin entry. */
export const newConfigText = (entry: string): string => `${JSON.stringify({ $schema: "https://opencode.ai/config.json", plugin: [entry] }, null, 2)}\n`

type Top =
  | { readonly _tag: "Empty" }
  | { readonly _tag: "Object"; readonly root: List & { readonly properties: ReadonlyArray<Property> }; readonly property: Property | undefined; readonly plugins: { readonly list: List; readonly elements: ReadonlyArray<Element> } | undefined }
  | Extract<ConfigEdit, { _tag: "Invalid" }>

const invalid = (text: ByteText, offset: number, reason: string, syntax = false): Extract<ConfigEdit, { _tag: "Invalid" }> => ({
  _tag: "Invalid",
  ...lineColumnOf(text, offset),
  reason,
  syntax
})

/**
 * The top level of a config (after a leading BOM): nothing, or an object and its one `plugin` key.
 * A `plugin` key written twice is refused: opencode reads the last, an edit of the first would not count.
 */
const topLevel = (text: ByteText, from: number): Top => {
  const parsed = parseTopLevel(text.slice(from), "plugin")
  if (parsed._tag === "Invalid") return invalid(text, from + parsed.offset, parsed.reason, parsed.syntax)
  const root = parsed.top.root
  if (root === undefined) return { _tag: "Empty" }
  const found = root.properties.filter((p) => p.key === "plugin")
  if (found.length > 1) {
    const first = lineColumnOf(text, from + found[0]!.offset)
    return invalid(text, from + found[1]!.offset, `a second "plugin" key (the first is at line ${first.line}); opencode reads only the last one: merge them by hand`)
  }
  const property = found[0]
  if (property !== undefined && property.value.kind !== "array") return invalid(text, from + property.value.offset, '"plugin" is not an array')
  const array = parsed.top.arrays.find((a) => a.property.offset === property?.offset)
  return { _tag: "Object", root, property, plugins: array === undefined ? undefined : { list: array.list, elements: array.elements } }
}

/** Whether a `plugin` element names this plugin, decided by `isOurs` on its name. */
const isOursElement = (element: Element, isOurs: (name: string) => boolean): boolean => element.name !== undefined && isOurs(utf8Of(element.name))

/** The config's bytes after a leading BOM, which is kept as it is. */
const bodyStart = (text: ByteText): number => (text.startsWith(BOM) ? BOM.length : 0)

/** Splices offsets in the body (after the BOM) back into the whole text. */
const spliced = (text: ByteText, from: number, splices: ReadonlyArray<Splice>): ByteText =>
  applySplices(text, splices.map((s) => ({ start: s.start + from, end: s.end + from, insert: s.insert })))

/**
 * `text` (a byte string) with `entry` appended to the top-level `plugin` array (created when absent);
 * every other byte kept. Unchanged when an entry `isOurs` that is not `isOther` (this installation's)
 * is there. Entries of ours that are `isOther` (another installation's): the first one's name becomes
 * `entry` when none is this installation's, the others are taken out.
 */
export const addPluginEntry = (text: ByteText, entry: string, isOurs: (name: string) => boolean = isOurName, isOther: (name: string) => boolean = () => false): ConfigEdit => {
  const from = bodyStart(text)
  const top = topLevel(text, from)
  if (top._tag === "Invalid") return top
  const body = text.slice(from)
  const value = byteTextOf(JSON.stringify(entry))
  if (top._tag === "Empty") {
    // only white space and comments: they stay, the new config follows them
    const lead = body.trim() === "" ? "" : body.endsWith("\n") ? body : `${body}${eolNear(body, body.length)}`
    return { _tag: "Changed", text: `${text.slice(0, from)}${lead}${byteTextOf(newConfigText(entry))}` }
  }
  if (top.plugins === undefined) {
    const last = top.root.properties[top.root.properties.length - 1]
    return { _tag: "Changed", text: spliced(text, from, appendItem(body, top.root, `"plugin"${colonOf(body, last)}[${value}]`)) }
  }
  const elements = top.plugins.elements
  const ours = elements.flatMap((e, i) => (isOursElement(e, isOurs) ? [i] : []))
  const others = ours.filter((i) => isOther(utf8Of(elements[i]!.name!)))
  const here = ours.length > others.length
  if (others.length === 0 && here) return { _tag: "Unchanged", reason: "already listed" }
  if (others.length === 0) return { _tag: "Changed", text: spliced(text, from, appendItem(body, top.plugins.list, value)) }
  const first = elements[others[0]!]!
  const keep = here ? undefined : (first.nameSpan ?? first)
  const drop = keep === undefined ? others : others.slice(1)
  const splices = [
    ...(keep === undefined ? [] : [{ start: keep.offset, end: keep.offset + keep.length, insert: value }]),
    ...removeItems(body, top.plugins.list, new Set(drop))
  ]
  return {
    _tag: "Changed",
    text: spliced(text, from, splices),
    replaced: keep === undefined ? undefined : utf8Of(first.name!),
    dropped: drop.map((i) => utf8Of(elements[i]!.name!))
  }
}

/** `text` (a byte string) without the entries `isOurs` in the top-level `plugin` array; unchanged when there is none. */
export const removePluginEntry = (text: ByteText, isOurs: (name: string) => boolean = isOurName): ConfigEdit => {
  const from = bodyStart(text)
  const top = topLevel(text, from)
  if (top._tag === "Invalid") return top
  if (top._tag === "Empty" || top.plugins === undefined) return { _tag: "Unchanged", reason: "not listed" }
  const elements = top.plugins.elements
  const ours = new Set(elements.flatMap((e, i) => (isOursElement(e, isOurs) ? [i] : [])))
  if (ours.size === 0) return { _tag: "Unchanged", reason: "not listed" }
  const body = text.slice(from)
  // a list that held only this plugin goes whole, as `init` created it
  if (ours.size === elements.length) return { _tag: "Changed", text: spliced(text, from, removeItems(body, top.root, new Set([top.root.properties.indexOf(top.property!)]))) }
  return { _tag: "Changed", text: spliced(text, from, removeItems(body, top.plugins.list, ours)) }
}
