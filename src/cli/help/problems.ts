/**
 * Usage errors as one line naming the problem (issue 33): an unknown command or flag with the nearest
 * known one ("did you mean"), a flag given without its value as missing (not as an unknown argument),
 * a word no command takes. Pure over the command docs: app.ts prints the line and that command's usage.
 */
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

/** Edit distance (insert, delete, substitute, swap two neighbours). */
export const distance = (a: string, b: string): number => {
  const d: Array<Array<number>> = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)))
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1)
    }
  return d[a.length]![b.length]!
}

/** The known word nearest to `word`, when it is near enough to be a typo (or `word` starts it). */
export const nearest = (word: string, known: ReadonlyArray<string>): string | undefined => {
  const limit = word.replace(/^-+/, "").length <= 4 ? 1 : 2
  let best: { readonly w: string; readonly d: number } | undefined
  for (const k of known) {
    const d = distance(word, k)
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

/**
 * A flag that takes a value but is followed by nothing or by another of the command's flags
 * (`status --pool --json` would take `--json` as the file): one line, or undefined.
 */
export const missingValue = (located: Located, args: ReadonlyArray<string>): string | undefined => {
  const names = new Set(flagNames(located.doc))
  for (let i = located.next; i < args.length; i++) {
    const word = args[i]!
    if (word === "--") return undefined
    const flag = valueFlag(located.doc, word)
    if (flag === undefined) continue
    const value = args[i + 1]
    if (value === undefined || names.has(value.split("=")[0]!)) return `${where(located.doc)}${word} needs a value (${word} ${flag.value})`
    i++
  }
  return undefined
}

/** The first word the parser left over, said in one line. */
export const leftover = (located: Located, word: string, args: ReadonlyArray<string> = []): string => {
  const name = word.split("=")[0]!
  if (word.startsWith("-") && word !== "-") {
    const known = flagNames(located.doc).includes(name)
    if (known && args.filter((a) => a.split("=")[0] === name).length > 1) return `${where(located.doc)}${name} given more than once`
    const flag = valueFlag(located.doc, name)
    if (flag !== undefined && !word.includes("=")) return `${where(located.doc)}${name} needs a value (${name} ${flag.value})`
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
