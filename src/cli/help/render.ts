/**
 * The help pages (issue 33): `ocpool --help` is the command list grouped by feature, one line each;
 * `ocpool <command> --help` is that command's usage, what it does and one line per flag. Rendered
 * unwrapped, with the hanging column of each line marked by a TAB: wrap.ts wraps them to the
 * terminal when they are printed (the start-up fast path prints them pre-rendered).
 */
import { CATALOG, summaryOf } from "./catalog.js"
import type { CommandDoc } from "./commandDocs.js"

const BOLD = "\u001b[1m"
const PLAIN = "\u001b[0m"
const bold = (s: string): string => `${BOLD}${s}${PLAIN}`

/** How a command is run: `ocpool sweep events`. */
export const invocation = (path: ReadonlyArray<string>): string => ["ocpool", ...path].join(" ")

/** The usage line: `ocpool sweep events [--db PATH] …`, hanging after the command's words. */
export const usageLine = (doc: CommandDoc): string => {
  // the doc's usage starts with the command's own name: the words before it are its parents'
  const own = doc.usage.slice(doc.usage.indexOf(" ") < 0 ? doc.usage.length : doc.usage.indexOf(" ") + 1)
  const words = doc.path.length === 0 ? "ocpool " : `${invocation(doc.path)} `
  const rest = doc.path.length === 0 ? "<command> [flags]" : doc.subcommands.length > 0 && (doc.flags.length > 0 || doc.args.length > 0) ? own.replace(/<command>$/, "[<command>]") : own
  return `${bold("usage:")} ${words}\t${rest}`
}

const labelWidth = (labels: ReadonlyArray<string>): number => Math.min(26, Math.max(0, ...labels.map((l) => l.length)))

/** One line per entry: the label, then its text from a shared column (a longer label has its text on the next line). */
const table = (rows: ReadonlyArray<readonly [string, string]>): ReadonlyArray<string> => {
  const width = labelWidth(rows.map(([l]) => l))
  const column = 2 + width + 2
  return rows.flatMap(([label, text]) =>
    text === ""
      ? [`  ${label}`]
      : label.length > width
        ? [`  ${label}`, `${" ".repeat(column)}\t${text}`]
        : [`  ${label.padEnd(width)}  \t${text}`]
  )
}

/** `ocpool --help`: the commands grouped, one line each. */
export const renderTop = (root: CommandDoc): string => {
  const width = Math.max(...CATALOG.flatMap((g) => g.entries.map((e) => e.path.join(" ").length)))
  const lines = [usageLine(root), "", ...root.description, ""]
  for (const group of CATALOG) {
    lines.push(bold(group.title))
    for (const e of group.entries) lines.push(`  ${e.path.join(" ").padEnd(width)}  \t${e.summary}`)
  }
  lines.push("", "'ocpool <command> --help' shows a command's flags.")
  return `${lines.join("\n")}\n`
}

const flagLabel = (f: CommandDoc["flags"][number]): string => `${f.names.join(", ")}${f.value === undefined ? "" : ` ${f.value}`}`

/** `ocpool <command> --help`. `children` are the docs of the command's subcommands. */
export const renderCommand = (doc: CommandDoc, children: ReadonlyArray<CommandDoc>): string => {
  const lines = [usageLine(doc), ""]
  for (const p of doc.description) lines.push(p, "")
  if (doc.args.length > 0) lines.push(bold("arguments:"), ...table(doc.args.map((a) => [a.name, a.text] as const)), "")
  const flags = [...doc.flags.map((f) => [flagLabel(f), f.text] as const), ["-h, --help", "this help"] as const]
  lines.push(bold("flags:"), ...table(flags), "")
  if (children.length > 0) {
    lines.push(bold("commands:"), ...table(children.map((c) => [c.path[c.path.length - 1]!, summaryOf(c.path) ?? firstSentence(c.description[0] ?? "")] as const)), "")
    lines.push(`'${invocation(doc.path)} <command> --help' shows a command's flags.`)
  }
  while (lines[lines.length - 1] === "") lines.pop()
  return `${lines.join("\n")}\n`
}

/** The first sentence of a description: up to the first ". " or ": " (a subcommand's line in its parent's help). */
export const firstSentence = (text: string): string => {
  const m = /^(.*?[.:])(\s|$)/.exec(text)
  return (m?.[1] ?? text).replace(/[.:]$/, "")
}
