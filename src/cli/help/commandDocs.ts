/**
 * What each command of the tree says about itself, read once from its @effect/cli definition: its
 * usage, description, flags (with the value each takes) and subcommands. The help pages and the usage
 * errors are rendered from this (issue 33), so a flag is described in one place: where it is defined.
 * @effect/cli's own help adds a type sentence and "This setting is optional." to every flag; those are
 * left out here.
 */
import { CliConfig, HelpDoc, Usage } from "@effect/cli"
import type * as Descriptor from "@effect/cli/CommandDescriptor"
import * as CommandDescriptor from "@effect/cli/CommandDescriptor"
import type { Span } from "@effect/cli/HelpDoc/Span"

export interface FlagDoc {
  /** `["--pool"]`, `["-h", "--help"]`. */
  readonly names: ReadonlyArray<string>
  /** What the flag takes (`FILE`, `done | question`), or undefined for a switch. */
  readonly value: string | undefined
  readonly text: string
}

export interface ArgDoc {
  readonly name: string
  readonly text: string
}

export interface CommandDoc {
  readonly path: ReadonlyArray<string>
  /** `status [--pool FILE] [--json] …`, without `ocpool`. */
  readonly usage: string
  readonly description: ReadonlyArray<string>
  readonly flags: ReadonlyArray<FlagDoc>
  readonly args: ReadonlyArray<ArgDoc>
  readonly subcommands: ReadonlyArray<string>
}

const CONFIG = CliConfig.make({ showBuiltIns: false })

/** The type sentences and notes @effect/cli adds to every flag and argument. */
const BOILERPLATE = [
  /^This setting is optional\.$/,
  /^This argument may be repeated/,
  /^This argument is optional/,
  /^A user-defined piece of text\.$/,
  /^A true or false value\.$/,
  /^An integer\.$/,
  /^A floating point number\.$/,
  /^One of the following: /,
  /^A date without a time-zone/,
  /^A (file|directory|path)/
]

const spanText = (span: Span): string => {
  switch (span._tag) {
    case "Text":
      return span.value
    case "Highlight":
    case "Weak":
    case "Strong":
      return spanText(span.value)
    case "URI":
      return span.value
    case "Sequence":
      return spanText(span.left) + spanText(span.right)
  }
}

/** The paragraphs of a flag's or an argument's description, without the boilerplate. */
const paragraphs = (doc: HelpDoc.HelpDoc): ReadonlyArray<string> => {
  switch (doc._tag) {
    case "Sequence":
      return [...paragraphs(doc.left), ...paragraphs(doc.right)]
    case "Paragraph":
      return [spanText(doc.value).trim()].filter((t) => t !== "" && !BOILERPLATE.some((r) => r.test(t)))
    case "Header":
    case "DescriptionList":
    case "Enumeration":
    case "Empty":
      return []
  }
}

interface Sections {
  readonly description: Array<string>
  readonly flags: Array<FlagDoc>
  readonly args: Array<ArgDoc>
}

/** `--pool FILE` → names and value; `(-h, --help)` → both names. */
const flagOf = (label: string, text: string): FlagDoc => {
  const trimmed = label.trim().replace(/^\((.*)\)$/, "$1")
  const names: Array<string> = []
  let rest = trimmed
  for (;;) {
    const m = /^(-{1,2}[A-Za-z0-9][\w-]*)(?:, )?/.exec(rest)
    if (m === null) break
    names.push(m[1]!)
    rest = rest.slice(m[0].length).trimStart()
  }
  return { names, value: rest === "" ? undefined : rest, text }
}

const walk = (doc: HelpDoc.HelpDoc, section: string, into: Sections): string => {
  switch (doc._tag) {
    case "Sequence":
      return walk(doc.right, walk(doc.left, section, into), into)
    case "Header":
      return spanText(doc.value).trim()
    case "Paragraph":
      if (section === "DESCRIPTION") into.description.push(spanText(doc.value).trim())
      return section
    case "DescriptionList":
      for (const [span, body] of doc.definitions) {
        const label = spanText(span)
        const text = paragraphs(body).join(" ")
        if (section === "OPTIONS") into.flags.push(flagOf(label, text))
        else if (section === "ARGUMENTS") into.args.push({ name: label.trim(), text })
      }
      return section
    case "Enumeration":
    case "Empty":
      return section
  }
}

const usageText = (descriptor: Descriptor.Command<unknown>): string =>
  HelpDoc.toAnsiText(Usage.getHelp(CommandDescriptor.getUsage(descriptor)))
    // eslint-disable-next-line no-control-regex
    .replace(/\u001b\[[0-9;]*m/g, "")
    .replace(/\s+/g, " ")
    .trim()

/**
 * The descriptor's shape, as @effect/cli builds it (its `getSubcommands` goes one level deep only):
 * a command, a mapped command, or a parent with its children.
 */
type Node =
  | { readonly _tag: "Standard" | "GetUserInput"; readonly name: string }
  | { readonly _tag: "Map"; readonly command: Node }
  | { readonly _tag: "Subcommands"; readonly parent: Node; readonly children: ReadonlyArray<Node> }

const nameOf = (node: Node): string => (node._tag === "Map" ? nameOf(node.command) : node._tag === "Subcommands" ? nameOf(node.parent) : node.name)

/** One command's own doc (not its subcommands'). */
const docOf = (node: Node, path: ReadonlyArray<string>): CommandDoc => {
  if (node._tag === "Map") return docOf(node.command, path)
  const own = node._tag === "Subcommands" ? node.parent : node
  const children = node._tag === "Subcommands" ? node.children : []
  const descriptor = own as unknown as Descriptor.Command<unknown>
  const sections: Sections = { description: [], flags: [], args: [] }
  walk(CommandDescriptor.getHelp(descriptor, CONFIG), "", sections)
  return {
    path,
    usage: usageText(descriptor) + (children.length > 0 ? " <command>" : ""),
    description: sections.description,
    flags: sections.flags,
    args: sections.args,
    subcommands: children.map(nameOf)
  }
}

const childrenOf = (node: Node): ReadonlyArray<Node> => (node._tag === "Map" ? childrenOf(node.command) : node._tag === "Subcommands" ? node.children : [])

/** A command with its doc read when first asked for (a run reads only the docs of the words it was given). */
export interface DocTree {
  readonly path: ReadonlyArray<string>
  readonly doc: () => CommandDoc
  readonly child: (name: string) => DocTree | undefined
  readonly children: () => ReadonlyArray<DocTree>
}

const treeOf = (node: Node, path: ReadonlyArray<string>): DocTree => {
  let memo: CommandDoc | undefined
  const kids = () => childrenOf(node).map((c) => treeOf(c, [...path, nameOf(c)]))
  return {
    path,
    doc: () => (memo ??= docOf(node, path)),
    child: (name) => {
      const found = childrenOf(node).find((c) => nameOf(c) === name)
      return found === undefined ? undefined : treeOf(found, [...path, name])
    },
    children: kids
  }
}

/** The tree under `root` (whose own path is empty). */
export const docTree = (root: Descriptor.Command<unknown>): DocTree => treeOf(root as unknown as Node, [])

/** Every command's doc, the root's first, each before the commands below it. */
export const allDocs = (tree: DocTree): ReadonlyArray<CommandDoc> => [tree.doc(), ...tree.children().flatMap(allDocs)]
