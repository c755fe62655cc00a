/**
 * The start-up fast path (docs/PERFORMANCE.md, "Cold start"): which invocations can be answered without
 * loading the whole command tree. Only exact, well-formed forms qualify; anything else (a typo, an
 * unknown flag, a repeated flag, a value that looks like a flag) goes to the full CLI, which parses it
 * with @effect/cli and reports the problem. No dependency but node:util, so deciding costs nothing.
 */
import { parseArgs } from "node:util"
import type { StatusFlags } from "./statusRun.js"

/** The commands whose `--help` is rendered at build time (dist/help.json). */
export const HELP_COMMANDS: ReadonlyArray<ReadonlyArray<string>> = [
  [],
  ["status"],
  ["top"],
  ["doctor"],
  ["init"],
  ["replay"],
  ["sweep"],
  ["sweep", "sessions"],
  ["sweep", "events"],
  ["cost"],
  ["quota"],
  ["quota", "forget"],
  ["cool"],
  ["cool", "set"],
  ["cool", "clear"],
  ["notify"],
  ["receive"],
  ["tunnel"],
  ["tunnel", "setup"],
  ["run"],
  ["permits"],
  ["permits", "release"],
  ["mcp"],
  ["fleet"],
  ["fleet", "init"],
  ["context"],
  ["context", "status"],
  ["context", "refresh"],
  ["metrics"]
]

/** Every argv (after `ocpool`) whose output is pre-rendered: each command's `--help` and `-h`, and `--version`. */
export const helpKeys = (): ReadonlyArray<ReadonlyArray<string>> => [["--version"], ...HELP_COMMANDS.flatMap((c) => [[...c, "--help"], [...c, "-h"]])]

/** The key of a pre-rendered output in dist/help.json. */
export const helpKey = (args: ReadonlyArray<string>): string => args.join(" ")

export type FastRoute = { readonly _tag: "Help"; readonly key: string } | { readonly _tag: "Status"; readonly flags: StatusFlags } | { readonly _tag: "Receive" }

/**
 * `receive` is the hop's forced command (SPEC §10.6): it takes whatever arguments it is given without
 * parsing them, so it never fails with a usage error. Only `receive --help` (or `-h`) alone shows help.
 */
export const forcedReceive = (args: ReadonlyArray<string>): boolean => args[0] === "receive" && !(args.length === 2 && (args[1] === "--help" || args[1] === "-h"))

const KNOWN_HELP = new Set(helpKeys().map(helpKey))

/** A value the full parser might read otherwise: empty, or starting like a flag. */
const plainValue = (v: string | undefined): v is string => v !== undefined && v !== "" && !v.startsWith("-")

/** `status [--pool FILE] [--json] [--state-dir DIR]`, each flag at most once, or undefined. */
const statusFlags = (rest: ReadonlyArray<string>): StatusFlags | undefined => {
  try {
    const { values, tokens } = parseArgs({
      args: [...rest],
      options: { pool: { type: "string" }, json: { type: "boolean" }, "state-dir": { type: "string" } },
      strict: true,
      allowPositionals: false,
      tokens: true
    })
    const names = tokens.flatMap((t) => (t.kind === "option" ? [t] : []))
    if (names.length !== new Set(names.map((t) => t.name)).size) return undefined
    if (tokens.some((t) => t.kind !== "option" || t.rawName !== `--${t.name}`)) return undefined
    if (values.pool !== undefined && !plainValue(values.pool)) return undefined
    if (values["state-dir"] !== undefined && !plainValue(values["state-dir"])) return undefined
    return { pool: values.pool, json: values.json === true, stateDir: values["state-dir"] }
  } catch {
    return undefined
  }
}

/** What the entry can do without the command tree, or undefined: load the full CLI. */
export const fastRoute = (args: ReadonlyArray<string>): FastRoute | undefined => {
  if (KNOWN_HELP.has(helpKey(args))) return { _tag: "Help", key: helpKey(args) }
  if (forcedReceive(args)) return { _tag: "Receive" }
  if (args[0] === "status") {
    const flags = statusFlags(args.slice(1))
    if (flags !== undefined) return { _tag: "Status", flags }
  }
  return undefined
}
