/**
 * `ocpool init --mcp claude-code|codex|cursor|print [--remove] [--dry-run] [--force]` (issue 21): adds
 * the MCP server `ocpool` (`ocpool mcp`) to that harness's user config, or takes it out, without
 * touching anything else: JSON configs (`~/.claude.json`, `~/.cursor/mcp.json`, key
 * `mcpServers.ocpool`) are spliced with the JSONC editor (core/jsoncEdit.ts), the TOML config
 * (`~/.codex/config.toml`, table `[mcp_servers.ocpool]`) by appending or removing exactly that table's
 * lines, checked with a TOML parser before and after. `print` prints the three snippets. The entry runs
 * `ocpool mcp` when PATH finds this installation's `ocpool`, else this installation's bin by its
 * absolute path (core/invocation.ts); an entry of ours that runs another installation (or `ocpool` from
 * PATH, when PATH has none of this one) is replaced in place, its other keys kept.
 */
import { createTwoFilesPatch } from "diff"
import { Effect } from "effect"
import { parse as parseJsonc } from "jsonc-parser"
import { isAbsolute, join } from "node:path"
import { parse as parseToml, TomlError } from "smol-toml"
import { byteTextOf, utf8Of, type ByteText } from "../core/byteText.js"
import { notOnPathNote, PATH_SERVER, sameServer, serverLine, type ServerCommand } from "../core/invocation.js"
import { appendItem, applySplices, eolNear, indentUnit, lineColumnOf, parseTopLevel, removeItems, type List, type Property } from "../core/jsoncEdit.js"
import { printable } from "../core/printable.js"
import { readBytesFile } from "../layers/fs/safeRead.js"
import { isOurBundleFile } from "../layers/install/pluginEntry.js"
import { BadInput, PathUnusable } from "./errors.js"
import { jsonValue, NAME, serverHere, TOML_HEADER, tomlArray, tomlString } from "./mcpEntry.js"
import { writeBack } from "./shared/writeBack.js"

export { mcpSnippets } from "./mcpEntry.js"

export const MCP_TARGETS = ["claude-code", "codex", "cursor", "print"] as const
export type McpTarget = (typeof MCP_TARGETS)[number]
export type McpHarness = Exclude<McpTarget, "print">


/** A user config may be large (the claude-code one keeps per-project history): refused past this. */
const CONFIG_MAX_BYTES = 64 << 20

/** Where each harness keeps its user config, under `home`. */
export const mcpConfigPath = (harness: McpHarness, home: string): string =>
  harness === "claude-code" ? join(home, ".claude.json") : harness === "cursor" ? join(home, ".cursor", "mcp.json") : join(home, ".codex", "config.toml")

/** What an edit of a config text came to. */
export type McpEdit =
  /**
   * `replaced`: an `ocpool` entry that ran something else was replaced (`--force`), or one of ours that
   * ran another installation; `previous`: what that one ran, when it was ours.
   */
  | { readonly _tag: "Changed"; readonly text: string; readonly replaced: boolean; readonly previous?: ServerCommand | undefined }
  /** `present`: the same entry is there already; `absent`: there is none to remove. */
  | { readonly _tag: "Unchanged"; readonly why: "present" | "absent" }
  /** An `ocpool` entry that runs something else (replaced only with `--force`). */
  | { readonly _tag: "Different" }
  /** The text cannot be read (`syntax`) or edited safely; `line`/`column` 1-based when known. */
  | { readonly _tag: "Invalid"; readonly reason: string; readonly syntax: boolean; readonly line?: number | undefined; readonly column?: number | undefined }

export interface McpEditOptions {
  readonly remove: boolean
  readonly force: boolean
  /** The entry to write (default `ocpool mcp`). */
  readonly server?: ServerCommand | undefined
  /** Whether an entry's command runs some installation's `ocpool mcp` (default: only `ocpool mcp` itself). */
  readonly isOurs?: ((entry: ServerCommand) => boolean) | undefined
}

/** An entry's program and arguments, when it has a string command and string arguments. */
const asServer = (entry: unknown): ServerCommand | undefined => {
  if (typeof entry !== "object" || entry === null) return undefined
  const e = entry as { command?: unknown; args?: unknown }
  if (typeof e.command !== "string" || !Array.isArray(e.args) || !e.args.every((a) => typeof a === "string")) return undefined
  return { command: e.command, args: e.args as ReadonlyArray<string> }
}

/**
 * Whether an entry runs an installation's `ocpool mcp` (the part of the test that reads the file
 * system): `ocpool mcp` from PATH, a program (Node) given a file of an opencode-pool installation and
 * `mcp`, or such a file given `mcp`.
 */
export const runsOcpoolMcp = (s: ServerCommand): boolean =>
  sameServer(s, PATH_SERVER) ||
  (s.args.length === 2 && s.args[1] === "mcp" && isAbsolute(s.args[0]!) && isOurBundleFile(s.args[0]!)) ||
  (s.args.length === 1 && s.args[0] === "mcp" && isAbsolute(s.command) && isOurBundleFile(s.command))

/** What an edit writes, and which entries are ours, with the defaults filled in. */
const resolved = (o: McpEditOptions): { readonly server: ServerCommand; readonly ours: (s: ServerCommand) => boolean } => ({
  server: o.server ?? PATH_SERVER,
  ours: o.isOurs ?? ((s) => sameServer(s, PATH_SERVER))
})

/** Whether an entry runs exactly `server` (other keys, such as a transport type or env, are the user's). */
const runs = (entry: unknown, server: ServerCommand): boolean => {
  const s = asServer(entry)
  return s !== undefined && sameServer(s, server)
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

/** `mcpServers.ocpool` of a JSON text (its strings read as UTF-8), or undefined. */
const jsonEntry = (text: ByteText): unknown => {
  const doc = parseJsonc(utf8Of(text), [], { allowTrailingComma: true }) as { mcpServers?: Record<string, unknown> } | undefined
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
  const { server, ours: isOurs } = resolved(o)
  const serverJson = byteTextOf(jsonValue(server))
  const checked = (before: ByteText, after: ByteText, remove: boolean): McpEdit => checkedJson(before, after, remove, server)
  const parsed = parseTopLevel(text, "")
  if (parsed._tag === "Invalid") return invalidAt(text, parsed.offset, parsed.reason, parsed.syntax)
  const root = parsed.top.root
  const eol = eolNear(text, 0)
  const unit = indentUnit(text)
  if (root === undefined) {
    if (o.remove) return { _tag: "Unchanged", why: "absent" }
    const body = `{${eol}${unit}"mcpServers": {${eol}${unit}${unit}"${NAME}": ${serverJson}${eol}${unit}}${eol}}${eol}`
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
    const item = oneLine ? `"mcpServers": { "${NAME}": ${serverJson} }` : `"mcpServers": {${eol}${base}${unit}"${NAME}": ${serverJson}${eol}${base}}`
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
      const open = `{${eol}${base}${unit}"${NAME}": ${serverJson}${eol}${base}}`
      return checked(text, applySplices(text, [{ start: value.offset, end: value.offset + value.length, insert: open }]), o.remove)
    }
    return checked(text, applySplices(text, appendItem(text, inner.list, `"${NAME}": ${serverJson}`)), o.remove)
  }
  const entry = inner.properties[index]!
  if (o.remove) return checked(text, applySplices(text, removeItems(text, inner.list, new Set([index]))), o.remove)
  const current = asServer(parseJsonc(utf8Of(text.slice(entry.value.offset, entry.value.offset + entry.value.length))))
  if (current !== undefined && sameServer(current, server)) return { _tag: "Unchanged", why: "present" }
  if (current !== undefined && isOurs(current) && entry.value.kind === "object") {
    // ours, running another installation: its command and args replaced, its other keys kept
    const fields = objectAt(text, entry.value)
    const last = (key: string) => fields?.properties.filter((p) => p.key === key).pop()
    const command = last("command")
    const args = last("args")
    if (command !== undefined && args !== undefined) {
      const splices = [
        { start: command.value.offset, end: command.value.offset + command.value.length, insert: byteTextOf(JSON.stringify(server.command)) },
        { start: args.value.offset, end: args.value.offset + args.value.length, insert: byteTextOf(`[${server.args.map((a) => JSON.stringify(a)).join(", ")}]`) }
      ]
      const edited = checked(text, applySplices(text, splices), false)
      return edited._tag === "Changed" ? { ...edited, replaced: true, previous: current } : edited
    }
  }
  if (!o.force) return { _tag: "Different" }
  const replaced = checked(text, applySplices(text, [{ start: entry.value.offset, end: entry.value.offset + entry.value.length, insert: serverJson }]), o.remove)
  return replaced._tag === "Changed" ? { ...replaced, replaced: true } : replaced
}

/** The edited JSON text, when it still parses and has (or, removing, lacks) our entry running `server`. */
const checkedJson = (before: ByteText, after: ByteText, remove: boolean, server: ServerCommand): McpEdit => {
  const parsed = parseTopLevel(after, "")
  if (parsed._tag === "Invalid") return unsafe("cannot be edited safely")
  const entry = jsonEntry(after)
  if (!(remove ? entry === undefined : runs(entry, server))) return unsafe("cannot be edited safely")
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

/** A `key = value` line of a table (a comment after the value and the line's end kept apart). */
const keyLine = (key: string): RegExp => new RegExp(`^([ \\t]*(?:${key}|"${key}"|'${key}')[ \\t]*=[ \\t]*)(.*?)([ \\t]*(?:#.*)?\\r?\\n?)$`)

/**
 * The texts with the `command` and `args` values of one `[mcp_servers.ocpool]` table replaced by
 * `server`'s, one for each line that looks like its header, the last first; the table's other lines kept.
 */
const valueEdits = (text: string, server: ServerCommand): ReadonlyArray<string> => {
  const lines = text.split(/(?<=\n)/)
  const out: Array<string> = []
  const values: Record<string, string> = { command: tomlString(server.command), args: tomlArray(server.args) }
  for (let start = lines.length - 1; start >= 0; start--) {
    if (!HEADER.test(lines[start]!)) continue
    const copy = [...lines]
    for (let i = start + 1; i < copy.length && !ANY_HEADER.test(copy[i]!); i++) {
      for (const key of ["command", "args"]) {
        const m = keyLine(key).exec(copy[i]!)
        if (m !== null) copy[i] = `${m[1]}${values[key]}${m[3]}`
      }
    }
    out.push(copy.join(""))
  }
  return out
}

/**
 * The text with our table appended, set apart by a blank line: always one, even after a blank line of
 * the user's, so that `--remove` takes exactly that one away and gives the file back as it was.
 */
const appendTable = (text: string, server: ServerCommand): string => {
  const eol = text.includes("\r\n") ? "\r\n" : "\n"
  const table = `${TOML_HEADER}${eol}command = ${tomlString(server.command)}${eol}args = ${tomlArray(server.args)}${eol}`
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
  const { server, ours: isOurs } = resolved(o)
  const before = tomlOf(text)
  if ("error" in before) return before.error
  const servers = before.doc.mcp_servers
  if (servers !== undefined && (typeof servers !== "object" || servers === null || Array.isArray(servers))) return unsafe("mcp_servers is not a table")
  const entry = (servers as TomlDoc | undefined)?.[NAME]
  if (entry === undefined && o.remove) return { _tag: "Unchanged", why: "absent" }
  if (entry !== undefined && !o.remove && runs(entry, server)) return { _tag: "Unchanged", why: "present" }
  const current = asServer(entry)
  const elsewhere = entry !== undefined && !o.remove && current !== undefined && isOurs(current)
  if (elsewhere) {
    // ours, running another installation: its command and args replaced, its other keys kept
    const rest = (doc: unknown): string => JSON.stringify({ ...(doc as TomlDoc), command: null, args: null })
    for (const after of valueEdits(text, server)) {
      const parsedAfter = tomlOf(after)
      if ("error" in parsedAfter) continue
      const ours = (parsedAfter.doc.mcp_servers as TomlDoc | undefined)?.[NAME]
      if (withoutOurs(parsedAfter.doc) === withoutOurs(before.doc) && runs(ours, server) && rest(ours) === rest(entry)) return { _tag: "Changed", text: after, replaced: true, previous: current }
    }
    // written some other way: the whole table is written anew, when it holds nothing else
    if (Object.keys(entry as TomlDoc).some((k) => k !== "command" && k !== "args")) return unsafe(`mcp_servers.${NAME} runs another installation, and its command cannot be replaced in place; edit it by hand`)
  } else if (entry !== undefined && !o.remove && !o.force) return { _tag: "Different" }
  const candidates = entry === undefined ? [text] : removals(text)
  if (candidates.length === 0) return unsafe(`mcp_servers.${NAME} is not written as a table of its own (${TOML_HEADER}); edit it by hand`)
  for (const without of candidates) {
    const after = o.remove ? without : appendTable(without, server)
    const parsedAfter = tomlOf(after)
    if ("error" in parsedAfter) continue
    const ours = (parsedAfter.doc.mcp_servers as TomlDoc | undefined)?.[NAME]
    if (withoutOurs(parsedAfter.doc) === withoutOurs(before.doc) && (o.remove ? ours === undefined : runs(ours, server))) {
      return { _tag: "Changed", text: after, replaced: entry !== undefined && !o.remove, previous: elsewhere ? current : undefined }
    }
  }
  return unsafe("cannot be edited safely (the edit would change other settings)")
}

export interface McpInitOutcome {
  readonly harness: McpHarness
  readonly path: string
  /** `added`/`removed`/`replaced`: written (or, with --dry-run, would be); `present`/`absent`: nothing to do. */
  readonly action: "added" | "replaced" | "removed" | "present" | "absent"
  /** The entry this installation writes (`ocpool mcp`, or its absolute command when PATH does not find it). */
  readonly command: ServerCommand
  /** What the replaced entry ran, when it was ours (another installation, or `ocpool` from PATH). */
  readonly previous: ServerCommand | null
  /** Why `command` is the absolute one (added or replaced only), else `null`. */
  readonly note: string | null
  readonly diff: string
}

/**
 * Edits `harness`'s user config under `home` (or, with `dryRun`, only says how). The file is written
 * atomically with its own mode (0600 for a new one); a symlink is edited at its target.
 */
export const initMcp = (
  harness: McpHarness,
  o: Pick<McpEditOptions, "remove" | "force"> & { readonly dryRun: boolean },
  home: string | undefined,
  env: NodeJS.ProcessEnv = process.env
): Effect.Effect<McpInitOutcome, BadInput | PathUnusable> =>
  Effect.gen(function* () {
    const { server, facts } = serverHere(env)
    const edit0 = { ...o, server, isOurs: runsOcpoolMcp }
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
    const edit = toml ? editTomlConfig(utf8Of(body), edit0) : editJsonConfig(before, edit0)
    if (edit._tag === "Invalid") {
      const at = edit.line === undefined ? "" : `:${edit.line}:${edit.column ?? 1}`
      const what = edit.syntax ? `not valid ${toml ? "TOML" : "JSON"}, ` : ""
      return yield* new BadInput({ message: `${printable(path)}${at}: ${printable(edit.reason)}; ${what}nothing changed` })
    }
    if (edit._tag === "Different") return yield* new PathUnusable({ path, reason: `has an MCP server "${NAME}" that runs something else; use --force to replace it` })
    if (edit._tag === "Unchanged") return { harness, path, action: edit.why, command: server, previous: null, note: null, diff: "" }
    const after = toml ? Buffer.from(`${bom ? "\ufeff" : ""}${edit.text}`, "utf8") : Buffer.from(edit.text, "latin1")
    const diff = createTwoFilesPatch(read._tag === "Missing" ? "/dev/null" : path, path, utf8Of(toml ? body : before), toml ? edit.text : utf8Of(edit.text), "", "", { context: 3 })
    const action = o.remove ? "removed" : edit.replaced ? "replaced" : "added"
    if (!o.dryRun) {
      yield* writeBack(path, read._tag === "Bytes" ? read.stat : undefined, after, { dirMode: 0o700, newFileMode: 0o600, targetDir: true })
    }
    const note = o.remove || facts === undefined ? undefined : notOnPathNote(facts)
    return { harness, path, action, command: server, previous: edit.previous ?? null, note: note ?? null, diff }
  })

/** The human report of `init --mcp`. */
export const mcpReport = (outcome: McpInitOutcome, dryRun: boolean): string => {
  const o = { ...outcome, path: printable(outcome.path) }
  const would = dryRun ? "would " : ""
  const lines: Array<string> = []
  switch (o.action) {
    case "added":
      lines.push(`${would}add the MCP server "${NAME}" (${printable(serverLine(o.command))}) to ${o.path}`)
      break
    case "replaced":
      lines.push(
        o.previous === null
          ? `${would}replace the MCP server "${NAME}" in ${o.path} with ${printable(serverLine(o.command))}`
          : `${would}replace the MCP server "${NAME}" in ${o.path}: ${printable(serverLine(o.previous))} → ${printable(serverLine(o.command))}`
      )
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
  if (o.note !== null && (o.action === "added" || o.action === "replaced")) lines.push(printable(o.note))
  if (dryRun && o.diff !== "") lines.push(o.diff.trimEnd())
  if (dryRun) lines.push("dry run: nothing was written")
  else if (o.action === "added" || o.action === "replaced") lines.push(`restart ${o.harness} to load it; it serves the same heavy-work permits as opencode-pool's plugin`)
  return lines.join("\n")
}
