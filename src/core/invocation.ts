/**
 * How `ocpool` runs from where the user is (issue 33): the hints the CLI prints ("check with: …") and
 * the MCP server entry `init --mcp` writes name an invocation that works, not a bare `ocpool` that the
 * shell cannot find. `ocpool` when the one on PATH is this installation; `npx ocpool` inside this
 * installation's checkout; else this installation's `bin/ocpool.js` by its absolute path. An MCP
 * harness starts its server from a directory and with a PATH of its own, so its entry is `ocpool` only
 * when PATH finds this installation, else the Node binary with the absolute bin as its first argument.
 * Pure: the shell probes the facts (layers/install/installation.ts).
 */
import { relative, isAbsolute } from "node:path"

export interface InvocationFacts {
  /** The real path of the `ocpool` PATH finds first, or `undefined` when PATH has none. */
  readonly onPath: string | undefined
  /** The real path of this installation's root (the directory of its package.json). */
  readonly root: string
  /** The real path of this installation's `bin/ocpool.js`. */
  readonly bin: string
  /** The working directory (real path). */
  readonly cwd: string
  /**
   * The nearest directory at or above `cwd` with a package.json (real path), where `npx` looks for
   * the command first; `undefined` when there is none. Only when it is this installation's root does
   * `npx ocpool` run this installation (`bin/` and `.e2e-cache/…` have package.json files of their own).
   */
  readonly project?: string | undefined
  /** Whether `bin` runs by its own path: executable here, and a `node` on PATH for its `#!/usr/bin/env node`. */
  readonly binRunnable: boolean
  /** Whether PATH has a `node`. */
  readonly nodeOnPath: boolean
  /** The Node binary running now (`process.execPath`). */
  readonly node: string
}

export type Invocation =
  /** `ocpool`: PATH finds this installation. */
  | { readonly _tag: "OnPath" }
  /** `npx ocpool`: inside this installation's checkout, where npx finds its bin. */
  | { readonly _tag: "Npx" }
  /** The words that run this installation's bin: the bin itself, or a Node binary and the bin. */
  | { readonly _tag: "Absolute"; readonly argv: ReadonlyArray<string> }

/** Whether `path` is `dir` or below it (both absolute, real paths). */
export const isInside = (path: string, dir: string): boolean => {
  const rel = relative(dir, path)
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel))
}

/** The absolute words that run this installation's bin. */
const absoluteArgv = (f: InvocationFacts): ReadonlyArray<string> => (f.binRunnable ? [f.bin] : [f.nodeOnPath ? "node" : f.node, f.bin])

/** How a person runs `ocpool` from `f.cwd`. */
export const invocationOf = (f: InvocationFacts): Invocation => {
  if (f.onPath !== undefined && f.onPath === f.bin) return { _tag: "OnPath" }
  if (isInside(f.cwd, f.root) && (f.project === undefined || f.project === f.root)) return { _tag: "Npx" }
  return { _tag: "Absolute", argv: absoluteArgv(f) }
}

/** What every hint said before the check: the bare name (no facts, or the facts could not be read). */
export const BARE: Invocation = { _tag: "OnPath" }

/** A word as a POSIX shell reads it back: as it is when it holds only safe characters, else in single quotes. */
export const shellWord = (word: string): string => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`)

/** The command line of `ocpool <args>` for `inv` (`args` as the hint writes them: `doctor`, `init --global`). */
export const commandLine = (inv: Invocation, args: string): string => {
  const head = inv._tag === "OnPath" ? "ocpool" : inv._tag === "Npx" ? "npx ocpool" : inv.argv.map(shellWord).join(" ")
  return args === "" ? head : `${head} ${args}`
}

/** An MCP server entry: the program and its arguments, as the harnesses' configs write them. */
export interface ServerCommand {
  readonly command: string
  readonly args: ReadonlyArray<string>
}

/** The entry that finds `ocpool` on PATH (what `init --mcp` wrote before issue 33). */
export const PATH_SERVER: ServerCommand = { command: "ocpool", args: ["mcp"] }

/**
 * The MCP server entry for this installation: `ocpool mcp` when PATH finds this installation, else the
 * Node binary running now with the absolute bin (a harness's PATH may have no `node`, and the bin's
 * execute bit is not needed).
 */
export const mcpServerOf = (f: InvocationFacts): ServerCommand =>
  f.onPath !== undefined && f.onPath === f.bin ? PATH_SERVER : { command: f.node, args: [f.bin, "mcp"] }

/** A server entry as one command line (for the report). */
export const serverLine = (s: ServerCommand): string => [s.command, ...s.args].map(shellWord).join(" ")

/** Whether two server entries run the same program with the same arguments. */
export const sameServer = (a: ServerCommand, b: ServerCommand): boolean => a.command === b.command && a.args.length === b.args.length && a.args.every((x, i) => x === b.args[i])

/**
 * Why the entry is the absolute command instead of `ocpool` (one line, for `init --mcp`), or
 * `undefined` when PATH finds this installation.
 */
export const notOnPathNote = (f: InvocationFacts): string | undefined => {
  if (f.onPath !== undefined && f.onPath === f.bin) return undefined
  const why = f.onPath === undefined ? "ocpool is not on PATH" : `the ocpool on PATH (${f.onPath}) is another installation`
  return `${why}, so the entry runs this installation by its absolute path; to put its ocpool on PATH: cd ${shellWord(f.root)} && npm link (then run this again for the short entry)`
}
