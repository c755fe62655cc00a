/**
 * Usage errors as one line naming the problem (issue 33): an unknown command or flag with the nearest
 * known one ("did you mean"), a flag given without its value as missing (not as an unknown argument),
 * a word no command takes. Pure over the command docs: app.ts prints the line and that command's usage.
 */
import { editDistance } from "../../core/editDistance.js"
import type { CommandDoc, DocTree } from "./commandDocs.js"

/** Where in the tree the words lead: the deepest command named, and the index of the first word after it. */
export interface Located {
  readonly doc: CommandDoc
  readonly tree: DocTree
  readonly next: number
  /** A word where a subcommand was expected that names none. */
  readonly unknownCommand?: string | undefined
}

/** Follows the leading words of `args` down the tree (reading only the docs on the way). */
export const locate = (root: DocTree, args: ReadonlyArray<string>): Located => {
  let tree = root
  let i = 0
  while (i < args.length && tree.doc().subcommands.length > 0) {
    const word = args[i]!
    if (word.startsWith("-")) break
    const child = tree.child(word)
    if (child === undefined) return tree.doc().args.length > 0 ? { doc: tree.doc(), tree, next: i } : { doc: tree.doc(), tree, next: i, unknownCommand: word }
    tree = child
    i++
  }
  return { doc: tree.doc(), tree, next: i }
}

/** The known word nearest to `word`, when it is near enough to be a typo (or `word` starts it). */
export const nearest = (word: string, known: ReadonlyArray<string>): string | undefined => {
  const bare = word.replace(/^-+/, "")
  // `-j` is a letter, not a typo of one
  if (bare.length <= 1) return undefined
  const limit = bare.length <= 4 ? 1 : 2
  let best: { readonly w: string; readonly d: number } | undefined
  for (const k of known) {
    if (k === word) continue
    const d = editDistance(word, k, limit)
    if (d <= limit && (best === undefined || d < best.d)) best = { w: k, d }
  }
  return best?.w ?? known.find((k) => word.length >= 3 && k.startsWith(word) && k !== word)
}

const didYouMean = (word: string, known: ReadonlyArray<string>): string => {
  const n = nearest(word, known)
  return n === undefined ? "" : ` (did you mean '${n}'?)`
}

const flagNames = (doc: CommandDoc): ReadonlyArray<string> => [...doc.flags.flatMap((f) => f.names), "--help", "-h"]

const valueFlag = (doc: CommandDoc, word: string) => doc.flags.find((f) => f.value !== undefined && f.names.includes(word))

const where = (doc: CommandDoc): string => (doc.path.length === 0 ? "" : `${doc.path.join(" ")}: `)

/** The unknown command of `located`, said in one line. */
export const unknownCommand = (located: Located & { readonly unknownCommand: string }): string =>
  `${where(located.doc)}unknown command '${located.unknownCommand}'${didYouMean(located.unknownCommand, located.doc.subcommands)}`

/** @effect/cli's own flags, taken by every command: the ones that take a value, and the rest. */
const BUILT_IN_VALUES = new Set(["--log-level", "--completions"])
const BUILT_IN_SWITCHES = new Set(["--help", "-h", "--version", "--wizard"])

/** What the flags of a command line say before @effect/cli parses it (`scan`). */
export interface Scanned {
  /** The first problem, in one line: an unknown flag (did you mean), a flag without its value. */
  readonly problem?: string | undefined
  /** `--help` or `-h` as a flag (not as a flag's value: `run --reason -h` is a reason). */
  readonly help: boolean
  /** The words with each flag's value that starts with `-` joined to it (`--reason=-h`), so the parser reads it as the value. */
  readonly args: ReadonlyArray<string>
}

/**
 * Reads the flags of `args` after the command's words, up to `--`: every `-word` must be a flag of the
 * command (or a built-in), a flag that takes a value must have one (`status --pool --json` would take
 * `--json` as the file; `--pool=` is empty). The first problem found is returned.
 */
export const scan = (located: Located, args: ReadonlyArray<string>): Scanned => {
  const doc = located.doc
  const names = new Set([...flagNames(doc), ...BUILT_IN_VALUES, ...BUILT_IN_SWITCHES])
  const out = args.slice(0, located.next)
  let help = false
  const problem = (text: string): Scanned => ({ problem: text, help, args })
  for (let i = located.next; i < args.length; i++) {
    const word = args[i]!
    if (word === "--") {
      out.push(...args.slice(i))
      break
    }
    out.push(word)
    if (!word.startsWith("-") || word === "-") continue
    const eq = word.indexOf("=")
    const name = eq < 0 ? word : word.slice(0, eq)
    if (BUILT_IN_SWITCHES.has(name)) {
      help ||= name === "--help" || name === "-h"
      continue
    }
    const flag = valueFlag(doc, name)
    if (flag === undefined && !BUILT_IN_VALUES.has(name)) {
      if (names.has(name)) continue
      return problem(`${where(doc)}unknown flag '${name}'${didYouMean(name, [...flagNames(doc), ...(doc.path.length === 0 ? ["--version"] : [])])}`)
    }
    const needs = `${where(doc)}${name} needs a value${flag === undefined ? "" : ` (${name} ${flag.value})`}`
    if (eq >= 0) {
      if (word.length === eq + 1) return problem(needs)
      continue
    }
    const value = args[i + 1]
    if (value === undefined || value === "--" || (names.has(value.split("=")[0]!) && !BUILT_IN_SWITCHES.has(value))) return problem(needs)
    // a value that looks like a flag (`--reason -h`) is joined to its flag, so the parser takes it as the value
    if (value.startsWith("-") && value !== "-") out[out.length - 1] = `${word}=${value}`
    else out.push(value)
    i++
  }
  return { help, args: out }
}

/** The first word the parser left over, said in one line. */
export const leftover = (located: Located, word: string, args: ReadonlyArray<string> = []): string => {
  const name = word.split("=")[0]!
  const end = args.indexOf("--")
  if (end >= 0 && args.indexOf(word, end + 1) > end) return `${where(located.doc)}unexpected argument '${word}' (after --, every word is an argument)`
  if (word.startsWith("-") && word !== "-") {
    const known = flagNames(located.doc).includes(name)
    if (known && args.filter((a) => a.split("=")[0] === name).length > 1) return `${where(located.doc)}${name} given more than once`
    return `${where(located.doc)}unknown flag '${name}'${didYouMean(name, flagNames(located.doc))}`
  }
  if (located.doc.subcommands.length > 0) return `${where(located.doc)}unknown command '${word}'${didYouMean(word, located.doc.subcommands)}`
  return `${where(located.doc)}unexpected argument '${word}'`
}

/** A problem @effect/cli reported (its text), as one line about the command. */
export const reported = (located: Located, text: string, args: ReadonlyArray<string>): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  const cases = /^Expected one of the following cases: (.+)$/.exec(flat)
  if (cases !== null) {
    const allowed = cases[1]!.split(", ")
    for (let i = located.next; i < args.length; i++) {
      const [name, inline] = args[i]!.split(/=(.*)/s) as [string, string | undefined]
      const flag = valueFlag(located.doc, name)
      const value = inline ?? args[i + 1]
      if (flag !== undefined && value !== undefined && !allowed.includes(value)) return `${where(located.doc)}${name} takes ${allowed.join(", ")}, not '${value}'`
    }
  }
  const option = /^Expected to find option: '(.+)'$/.exec(flat)
  if (option !== null) return `${where(located.doc)}missing flag ${option[1]}`
  const argument = /^Missing argument (.+)$/.exec(flat)
  if (argument !== null) return `${where(located.doc)}missing argument ${argument[1]}`
  return `${where(located.doc)}${flat.charAt(0).toLowerCase()}${flat.slice(1)}`
}
