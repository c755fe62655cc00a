/**
 * `ocpool init --mcp claude-code|codex|cursor|print [--remove] [--dry-run] [--force]` (issue 21): adds
 * the MCP server `ocpool` (`ocpool mcp`) to that harness's user config, or takes it out, without
 * touching anything else: JSON configs (`~/.claude.json`, `~/.cursor/mcp.json`, key
 * `mcpServers.ocpool`) are spliced with the JSONC editor (core/jsoncEdit.ts), the TOML config
 * (`~/.codex/config.toml`, table `[mcp_servers.ocpool]`) by appending or removing exactly that table's
 * lines, checked with a TOML parser before and after. `print` prints the three snippets.
 */
import { createTwoFilesPatch } from "diff"
import { Effect } from "effect"
import { parse as parseJsonc } from "jsonc-parser"
import { isAbsolute, dirname, join } from "node:path"
import { parse as parseToml, TomlError } from "smol-toml"
import { utf8Of, type ByteText } from "../core/byteText.js"
import { appendItem, applySplices, eolNear, indentUnit, lineColumnOf, parseTopLevel, removeItems, type List, type Property } from "../core/jsoncEdit.js"
import { printable } from "../core/printable.js"
import { isReadOnly, writeFileWithMode, writeTarget } from "../layers/fs/atomicWrite.js"
import { dirReason, makeDir } from "../layers/fs/dirs.js"
import { readBytesFile } from "../layers/fs/safeRead.js"
import { BadInput, PathUnusable } from "./errors.js"

export const MCP_TARGETS = ["claude-code", "codex", "cursor", "print"] as const
export type McpTarget = (typeof MCP_TARGETS)[number]
export type McpHarness = Exclude<McpTarget, "print">

/** The server entry every harness gets. */
export const SERVER = { command: "ocpool", args: ["mcp"] } as const
const NAME = "ocpool"
/** The entry as one JSON value. */
const JSON_VALUE = `{ "command": "${SERVER.command}", "args": ["${SERVER.args[0]}"] }`
const TOML_HEADER = "[mcp_servers.ocpool]"

/** A user config may be large (the claude-code one keeps per-project history): refused past this. */
const CONFIG_MAX_BYTES = 64 << 20

/** Where each harness keeps its user config, under `home`. */
export const mcpConfigPath = (harness: McpHarness, home: string): string =>
  harness === "claude-code" ? join(home, ".claude.json") : harness === "cursor" ? join(home, ".cursor", "mcp.json") : join(home, ".codex", "config.toml")

/** What an edit of a config text came to. */
export type McpEdit =
  /** `replaced`: an `ocpool` entry that ran something else was replaced (`--force`). */
  | { readonly _tag: "Changed"; readonly text: string; readonly replaced: boolean }
  /** `present`: the same entry is there already; `absent`: there is none to remove. */
  | { readonly _tag: "Unchanged"; readonly why: "present" | "absent" }
  /** An `ocpool` entry that runs something else (replaced only with `--force`). */
  | { readonly _tag: "Different" }
  /** The text cannot be read (`syntax`) or edited safely; `line`/`column` 1-based when known. */
  | { readonly _tag: "Invalid"; readonly reason: string; readonly syntax: boolean; readonly line?: number | undefined; readonly column?: number | undefined }

export interface McpEditOptions {
  readonly remove: boolean
  readonly force: boolean
}

/** Whether an entry runs `ocpool mcp` (other keys, such as a transport type or env, are the user's). */
const isOurs = (entry: unknown): boolean => {
  if (typeof entry !== "object" || entry === null) return false
  const e = entry as { command?: unknown; args?: unknown }
  return e.command === SERVER.command && Array.isArray(e.args) && e.args.length === 1 && e.args[0] === SERVER.args[0]
}

/** The spaces and tabs opening the line that holds `at`, when only they stand before it. */
const lineIndent = (text: string, at: number): string | undefined => {
  const m = /(?:^|\n)([ \t]*)$/.exec(text.slice(Math.max(0, text.lastIndexOf("\n", at - 1)), at))
  return m?.[1]
}

/** An object value's properties (offsets into `text`), read by parsing the value on its own. */
const objectAt = (text: ByteText, value: Property["value"]): { readonly list: List; readonly properties: ReadonlyArray<Property> } | undefined => {
  const parsed = parseTopLevel(text.slice(value.offset, value.offset + value.length), "")
  if (parsed._tag !== "Ok" || parsed.top.root === undefined) return undefined
  const shift = value.offset
  const properties = parsed.top.root.properties.map((p) => ({ ...p, offset: p.offset + shift, keyEnd: p.keyEnd + shift, value: { ...p.value, offset: p.value.offset + shift } }))
  return { list: { offset: shift, length: value.length, items: properties, top: false }, properties }
}

const invalidAt = (text: ByteText, offset: number, reason: string, syntax = false): McpEdit => ({ _tag: "Invalid", reason, syntax, ...lineColumnOf(text, offset) })
/** An edit that cannot be made safely (no position: the whole file is the problem). */
const unsafe = (reason: string): McpEdit => ({ _tag: "Invalid", reason, syntax: false })

/** `mcpServers.ocpool` of a JSON text, or undefined. */
const jsonEntry = (text: ByteText): unknown => {
  const doc = parseJsonc(text, [], { allowTrailingComma: true }) as { mcpServers?: Record<string, unknown> } | undefined
  return typeof doc?.mcpServers === "object" && doc.mcpServers !== null ? doc.mcpServers[NAME] : undefined
}

/** The document without `mcpServers.ocpool` (and without `mcpServers` when that leaves it empty), as JSON. */
const jsonWithoutOurs = (text: ByteText): string => {
  const doc = (parseJsonc(text, [], { allowTrailingComma: true }) ?? {}) as { mcpServers?: Record<string, unknown> }
  if (typeof doc.mcpServers === "object" && doc.mcpServers !== null) {
    delete doc.mcpServers[NAME]
    if (Object.keys(doc.mcpServers).length === 0) delete doc.mcpServers
  }
  return JSON.stringify(doc)
}

/**
 * Adds (or removes) `mcpServers.ocpool` in a JSON(C) text (a byte string), every other byte kept.
 * Pure: the caller reads and writes the file.
 */
export const editJsonConfig = (text: ByteText, o: McpEditOptions): McpEdit => {
  const parsed = parseTopLevel(text, "")
  if (parsed._tag === "Invalid") return invalidAt(text, parsed.offset, parsed.reason, parsed.syntax)
  const root = parsed.top.root
  const eol = eolNear(text, 0)
  const unit = indentUnit(text)
  if (root === undefined) {
    if (o.remove) return { _tag: "Unchanged", why: "absent" }
    const body = `{${eol}${unit}"mcpServers": {${eol}${unit}${unit}"${NAME}": ${JSON_VALUE}${eol}${unit}}${eol}}${eol}`
    return checked(text, text.trim() === "" ? body : `${text}${/\n$/.test(text) ? "" : eol}${body}`, o.remove)
  }
  const servers = root.properties.filter((p) => p.key === "mcpServers")
  if (servers.length > 1) return invalidAt(text, servers[1]!.offset, 'two "mcpServers" keys')
  const property = servers[0]
  if (property === undefined) {
    if (o.remove) return { _tag: "Unchanged", why: "absent" }
    const last = root.items[root.items.length - 1]
    const oneLine = last !== undefined && !text.slice(root.offset, root.offset + root.length).includes("\n")
    const base = last === undefined ? unit : (lineIndent(text, last.offset) ?? unit)
    const item = oneLine ? `"mcpServers": { "${NAME}": ${JSON_VALUE} }` : `"mcpServers": {${eol}${base}${unit}"${NAME}": ${JSON_VALUE}${eol}${base}}`
    return checked(text, applySplices(text, appendItem(text, root, item)), o.remove)
  }
  if (property.value.kind !== "object") return invalidAt(text, property.value.offset, '"mcpServers" is not an object')
  const inner = objectAt(text, property.value)
  if (inner === undefined) return invalidAt(text, property.value.offset, '"mcpServers" cannot be read')
  const ours = inner.properties.flatMap((p, i) => (p.key === NAME ? [i] : []))
  if (ours.length > 1) return invalidAt(text, inner.properties[ours[1]!]!.offset, `two "${NAME}" servers in "mcpServers"`)
  const index = ours[0]
  if (index === undefined) {
    if (o.remove) return { _tag: "Unchanged", why: "absent" }
    const base = lineIndent(text, property.offset)
    const value = property.value
    // an empty `{}` on a line of its own opens onto lines, as a new "mcpServers" would
    if (inner.properties.length === 0 && base !== undefined && /^\{[ \t]*\}$/.test(text.slice(value.offset, value.offset + value.length))) {
      const open = `{${eol}${base}${unit}"${NAME}": ${JSON_VALUE}${eol}${base}}`
      return checked(text, applySplices(text, [{ start: value.offset, end: value.offset + value.length, insert: open }]), o.remove)
    }
    return checked(text, applySplices(text, appendItem(text, inner.list, `"${NAME}": ${JSON_VALUE}`)), o.remove)
  }
  const entry = inner.properties[index]!
  if (o.remove) return checked(text, applySplices(text, removeItems(text, inner.list, new Set([index]))), o.remove)
  if (isOurs(parseJsonc(text.slice(entry.value.offset, entry.value.offset + entry.value.length)))) return { _tag: "Unchanged", why: "present" }
  if (!o.force) return { _tag: "Different" }
  const replaced = checked(text, applySplices(text, [{ start: entry.value.offset, end: entry.value.offset + entry.value.length, insert: JSON_VALUE }]), o.remove)
  return replaced._tag === "Changed" ? { ...replaced, replaced: true } : replaced
}

/** The edited JSON text, when it still parses and has (or, removing, lacks) our entry. */
const checked = (before: ByteText, after: ByteText, remove: boolean): McpEdit => {
  const parsed = parseTopLevel(after, "")
  if (parsed._tag === "Invalid") return unsafe("cannot be edited safely")
  const entry = jsonEntry(after)
  if (!(remove ? entry === undefined : isOurs(entry))) return unsafe("cannot be edited safely")
  return jsonWithoutOurs(after) === jsonWithoutOurs(before) ? { _tag: "Changed", text: after, replaced: false } : unsafe("cannot be edited safely (the edit would change other settings)")
}

type TomlDoc = Record<string, unknown>

const tomlOf = (text: string): { readonly doc: TomlDoc } | { readonly error: McpEdit } => {
  try {
    return { doc: parseToml(text) }
  } catch (e) {
    const message = (e instanceof Error ? e.message : String(e)).split("\n")[0]!.replace(/^Invalid TOML document: /, "")
    return { error: { _tag: "Invalid", reason: message, syntax: true, ...(e instanceof TomlError ? { line: e.line, column: e.column } : {}) } }
  }
}

/** The document without `mcp_servers.ocpool` (and without `mcp_servers` when that leaves it empty), as JSON. */
const withoutOurs = (doc: TomlDoc): string => {
  const copy = JSON.parse(JSON.stringify(doc)) as { mcp_servers?: Record<string, unknown> }
  if (typeof copy.mcp_servers === "object" && copy.mcp_servers !== null) {
    delete copy.mcp_servers[NAME]
    if (Object.keys(copy.mcp_servers).length === 0) delete copy.mcp_servers
  }
  return JSON.stringify(copy)
}

const HEADER = /^[ \t]*\[[ \t]*mcp_servers[ \t]*\.[ \t]*(?:ocpool|"ocpool"|'ocpool')[ \t]*(\]|\.)/
const ANY_HEADER = /^[ \t]*\[/
const BLANK_OR_COMMENT = /^[ \t]*(#.*)?\r?$/
const BLANK = /^[ \t]*\r?$/

/**
 * The texts without the lines of one `[mcp_servers.ocpool]` table (and its sub-tables), one for each
 * line that looks like its header, the last first (ours is appended; a line inside a multi-line string
 * can look like a header too: the caller keeps the first removal that leaves a document equal but for
 * that entry). Empty when there is no such line.
 */
const removals = (text: string): ReadonlyArray<string> => {
  const lines = text.split(/(?<=\n)/)
  const out: Array<string> = []
  for (let start = lines.length - 1; start >= 0; start--) {
    if (!HEADER.test(lines[start]!)) continue
    let end = start + 1
    while (end < lines.length && !(ANY_HEADER.test(lines[end]!) && !HEADER.test(lines[end]!))) end++
    // comments and blank lines before the next table belong to it
    while (end > start + 1 && BLANK_OR_COMMENT.test(lines[end - 1]!.replace(/\n$/, ""))) end--
    // the blank line that set the table apart goes with it (appendTable always writes one)
    const from = start > 0 && BLANK.test(lines[start - 1]!.replace(/\n$/, "")) && (end === lines.length || BLANK.test(lines[end]!.replace(/\n$/, ""))) ? start - 1 : start
    out.push([...lines.slice(0, from), ...lines.slice(end)].join(""))
  }
  return out
}

/**
 * The text with our table appended, set apart by a blank line: always one, even after a blank line of
 * the user's, so that `--remove` takes exactly that one away and gives the file back as it was.
 */
const appendTable = (text: string): string => {
  const eol = text.includes("\r\n") ? "\r\n" : "\n"
  const table = `${TOML_HEADER}${eol}command = "${SERVER.command}"${eol}args = ["${SERVER.args[0]}"]${eol}`
  if (text === "") return table
  const ended = text.endsWith("\n") ? text : `${text}${eol}`
  return `${ended}${eol}${table}`
}

/**
 * Adds (or removes) `[mcp_servers.ocpool]` in a TOML text: appended as a table of its own, or its
 * lines removed; every other byte kept. Refused when the text is not TOML, or when the result would
 * change anything but that entry (an `mcp_servers` written inline, say).
 */
export const editTomlConfig = (text: string, o: McpEditOptions): McpEdit => {
  const before = tomlOf(text)
  if ("error" in before) return before.error
  const servers = before.doc.mcp_servers
  if (servers !== undefined && (typeof servers !== "object" || servers === null || Array.isArray(servers))) return unsafe("mcp_servers is not a table")
  const entry = (servers as TomlDoc | undefined)?.[NAME]
  if (entry === undefined && o.remove) return { _tag: "Unchanged", why: "absent" }
  if (entry !== undefined && !o.remove && isOurs(entry)) return { _tag: "Unchanged", why: "present" }
  if (entry !== undefined && !o.remove && !o.force) return { _tag: "Different" }
  const candidates = entry === undefined ? [text] : removals(text)
  if (candidates.length === 0) return unsafe(`mcp_servers.${NAME} is not written as a table of its own (${TOML_HEADER}); edit it by hand`)
  for (const without of candidates) {
    const after = o.remove ? without : appendTable(without)
    const parsedAfter = tomlOf(after)
    if ("error" in parsedAfter) continue
    const ours = (parsedAfter.doc.mcp_servers as TomlDoc | undefined)?.[NAME]
    if (withoutOurs(parsedAfter.doc) === withoutOurs(before.doc) && (o.remove ? ours === undefined : isOurs(ours))) return { _tag: "Changed", text: after, replaced: entry !== undefined && !o.remove }
  }
  return unsafe("cannot be edited safely (the edit would change other settings)")
}

/** The three snippets `--mcp print` shows. */
export const mcpSnippets = (): string =>
  [
    "claude-code: in ~/.claude.json",
    `  "mcpServers": { "${NAME}": ${JSON_VALUE} }`,
    "cursor: in ~/.cursor/mcp.json",
    `  "mcpServers": { "${NAME}": ${JSON_VALUE} }`,
    "codex: in ~/.codex/config.toml",
    `  ${TOML_HEADER}`,
    `  command = "${SERVER.command}"`,
    `  args = ["${SERVER.args[0]}"]`,
    "or let ocpool add it: ocpool init --mcp claude-code|codex|cursor"
  ].join("\n")

export interface McpInitOutcome {
  readonly harness: McpHarness
  readonly path: string
  /** `added`/`removed`/`replaced`: written (or, with --dry-run, would be); `present`/`absent`: nothing to do. */
  readonly action: "added" | "replaced" | "removed" | "present" | "absent"
  readonly diff: string
}

/**
 * Edits `harness`'s user config under `home` (or, with `dryRun`, only says how). The file is written
 * atomically with its own mode (0600 for a new one); a symlink is edited at its target.
 */
export const initMcp = (
  harness: McpHarness,
  o: McpEditOptions & { readonly dryRun: boolean },
  home: string | undefined
): Effect.Effect<McpInitOutcome, BadInput | PathUnusable> =>
  Effect.gen(function* () {
    if (home === undefined || home === "" || !isAbsolute(home)) return yield* new PathUnusable({ path: "$HOME", reason: "not set to an absolute path; cannot find the config" })
    const path = mcpConfigPath(harness, home)
    const read = readBytesFile(path, CONFIG_MAX_BYTES)
    if (read._tag === "Refused") return yield* new PathUnusable({ path, reason: `${read.reason}; not changed` })
    const before = read._tag === "Bytes" ? read.bytes.toString("latin1") : ""
    const toml = harness === "codex"
    if (toml && read._tag === "Bytes" && Buffer.from(read.bytes.toString("utf8"), "utf8").compare(read.bytes) !== 0) return yield* new BadInput({ message: `${printable(path)}: bytes that are not UTF-8; not valid TOML, nothing changed` })
    // TOML is edited as text (it is UTF-8 throughout), JSON as bytes; a byte-order mark is kept as it was
    const bom = toml && before.startsWith("\xef\xbb\xbf")
    const body = bom ? before.slice(3) : before
    const edit = toml ? editTomlConfig(utf8Of(body), o) : editJsonConfig(before, o)
    if (edit._tag === "Invalid") {
      const at = edit.line === undefined ? "" : `:${edit.line}:${edit.column ?? 1}`
      const what = edit.syntax ? `not valid ${toml ? "TOML" : "JSON"}, ` : ""
      return yield* new BadInput({ message: `${printable(path)}${at}: ${printable(edit.reason)}; ${what}nothing changed` })
    }
    if (edit._tag === "Different") return yield* new PathUnusable({ path, reason: `has an MCP server "${NAME}" that runs something else; use --force to replace it` })
    if (edit._tag === "Unchanged") return { harness, path, action: edit.why, diff: "" }
    const after = toml ? Buffer.from(`${bom ? "\ufeff" : ""}${edit.text}`, "utf8") : Buffer.from(edit.text, "latin1")
    const diff = createTwoFilesPatch(read._tag === "Missing" ? "/dev/null" : path, path, utf8Of(toml ? body : before), toml ? edit.text : utf8Of(edit.text), "", "", { context: 3 })
    const action = o.remove ? "removed" : edit.replaced ? "replaced" : "added"
    if (!o.dryRun) {
      const file = writeTarget(path)
      if (read._tag === "Bytes" && isReadOnly(file, read.stat)) return yield* new PathUnusable({ path, reason: `read-only (mode ${(read.stat.mode & 0o777).toString(8).padStart(3, "0")}); not changed` })
      const problem = makeDir(dirname(file), 0o700)
      if (problem !== undefined) return yield* new PathUnusable({ path: problem.path, reason: dirReason(problem.code) })
      const mode = read._tag === "Bytes" ? read.stat.mode & 0o777 : 0o600
      yield* Effect.try({
        try: () => writeFileWithMode(file, after, mode),
        catch: (e) => new PathUnusable({ path: file, reason: dirReason((e as NodeJS.ErrnoException).code ?? String(e)) })
      })
    }
    return { harness, path, action, diff }
  })

/** The human report of `init --mcp`. */
export const mcpReport = (outcome: McpInitOutcome, dryRun: boolean): string => {
  const o = { ...outcome, path: printable(outcome.path) }
  const would = dryRun ? "would " : ""
  const lines: Array<string> = []
  switch (o.action) {
    case "added":
      lines.push(`${would}add the MCP server "${NAME}" (ocpool mcp) to ${o.path}`)
      break
    case "replaced":
      lines.push(`${would}replace the MCP server "${NAME}" in ${o.path} with ocpool mcp`)
      break
    case "removed":
      lines.push(`${would}remove the MCP server "${NAME}" from ${o.path}`)
      break
    case "present":
      lines.push(`${o.path} already has the MCP server "${NAME}"; unchanged`)
      break
    case "absent":
      lines.push(`${o.path} has no MCP server "${NAME}"; nothing to remove`)
      break
  }
  if (dryRun && o.diff !== "") lines.push(o.diff.trimEnd())
  if (dryRun) lines.push("dry run: nothing was written")
  else if (o.action === "added" || o.action === "replaced") lines.push(`restart ${o.harness} to load it; it serves the same heavy-work permits as opencode-pool's plugin`)
  return lines.join("\n")
}
