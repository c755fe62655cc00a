/**
 * `ocpool init [--format txt|json] [--force] [--json]` (SPEC §12.2): writes the user's pool file from the
 * bundled preset; with `--global`/`--project` [`--dry-run`] [`--remove`] it also installs the plugin into
 * opencode's config (install.ts).
 */
import { Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import { join } from "node:path"
import { BUILT_IN_SLOTS } from "../core/preset.js"
import { writeFileAtomic } from "../layers/fs/atomicWrite.js"
import { dirReason, makeDir } from "../layers/fs/dirs.js"
import { occupied } from "../layers/fs/safeRead.js"
import { configDir } from "../layers/pool/PoolConfigFile.js"
import { noHomeReason } from "../layers/fs/xdg.js"
import { printableJson } from "../core/printable.js"
import { printable } from "../core/printable.js"
import { ocpoolLine } from "../layers/install/installation.js"
import { InitRefused, PathUnusable, UsageProblem } from "./errors.js"
import { install, installationRoot, pluginEntryFor, type InstallOutcome, type InstallTarget } from "./install.js"
import { initMcp, MCP_TARGETS, mcpReport, mcpSnippets } from "./initMcp.js"
import { CurrentIo } from "./output.js"

/** The line to add by hand: the entry `init --global` would write for this installation. */
const pluginLine = (): string => {
  const root = installationRoot()
  return `"plugin": [${JSON.stringify(root === undefined ? "opencode-pool" : pluginEntryFor(root))}]`
}

/** The flat form with comments (SPEC §3.2). */
export const poolText = (slots: ReadonlyArray<{ readonly model: unknown; readonly weight?: unknown }>): string =>
  [
    "# opencode-pool: the models that run pooled subagents (explore, implement, context).",
    "# One slot per line: provider/model [weight]. Slots fill in this order: each takes up to its",
    "# weight first, then up to twice its weight; then the least-loaded slot takes the overflow.",
    "# At most 4 slots (plugin option maxSlots, 1-8). Text after # is a comment.",
    "",
    ...slots.map((s) => `${String(s.model)} ${String(s.weight ?? 1)}`),
    ""
  ].join("\n")

const poolFileName = (format: "txt" | "json"): string => (format === "txt" ? "pool.txt" : "pool.json")

/**
 * Writes the pool file. Every directory or file problem is one typed failure naming the path and the
 * reason (exit 1): no home directory, a path component that is a file, no permission, a read-only disk.
 */
export const writePoolFile = (format: "txt" | "json", force: boolean, env: NodeJS.ProcessEnv = process.env) =>
  Effect.gen(function* () {
    const dir = configDir(env)
    if (dir === undefined) return yield* new PathUnusable({ path: "$XDG_CONFIG_HOME/opencode-pool", reason: noHomeReason("XDG_CONFIG_HOME") })
    const path = join(dir, poolFileName(format))
    if (occupied(path) && !force) return yield* new InitRefused({ path })
    const problem = makeDir(dir, 0o777)
    if (problem !== undefined) return yield* new PathUnusable({ path: problem.path, reason: dirReason(problem.code) })
    const body = format === "txt" ? poolText(BUILT_IN_SLOTS) : `${JSON.stringify({ $comment: "opencode-pool slots, filled in this order; weight = fair share", slots: BUILT_IN_SLOTS }, null, 2)}\n`
    yield* Effect.try({
      // replaces whatever is at the name (a link, a FIFO) instead of writing through it
      try: () => writeFileAtomic(path, body, 0o644),
      catch: (e) => {
        const code = (e as NodeJS.ErrnoException).code
        return new PathUnusable({ path, reason: code === "EISDIR" ? "is a directory" : dirReason(code ?? String(e)) })
      }
    })
    return path
  })

/** Where `init` writes the pool file of `format`. */
const poolFileFor = (format: "txt" | "json") => (env: NodeJS.ProcessEnv): string | undefined => {
  const dir = configDir(env)
  return dir === undefined ? undefined : join(dir, poolFileName(format))
}

/** The human report of `init --global|--project`; `ocpool` is how to run ocpool from here (`ocpool`, `npx ocpool`, an absolute path). */
const installReport = (o: InstallOutcome, target: InstallTarget, dryRun: boolean, remove: boolean, ocpool: (args: string) => string): string => {
  const lines: Array<string> = []
  const would = dryRun ? "would " : ""
  const c = o.config
  if (remove) lines.push(c.changed ? `${would}remove opencode-pool from ${c.path}` : `${c.path} does not list opencode-pool; nothing to remove`)
  else if (c.replaced !== null || c.dropped.length > 0) {
    if (c.replaced !== null) lines.push(`${would}replace opencode-pool entry ${printable(c.replaced)} → ${c.entry} in ${c.path}`)
    for (const d of c.dropped) lines.push(`${would}remove opencode-pool entry ${printable(d)} (another installation) from ${c.path}`)
  } else if (c.changed) lines.push(`${would}${c.created ? "create" : "edit"} ${c.path}: plugin entry ${c.entry}`)
  else lines.push(`${c.path} already lists opencode-pool; unchanged`)
  if (dryRun && o.config.diff !== "") lines.push(o.config.diff.trimEnd())
  if (!remove) lines.push(o.pool.written ? `${would}write ${o.pool.path ?? "the pool file"} from the bundled preset` : `pool file ${o.pool.path} kept`)
  if (dryRun) lines.push("dry run: nothing was written")
  else if (!remove && o.config.changed) lines.push(`opencode started ${target === "global" ? "anywhere" : "in this directory"} now loads opencode-pool; check with: ${ocpool("doctor")}`)
  else if (remove && o.config.changed) lines.push("your pool file and the state directory are kept; delete them by hand if you want them gone")
  return lines.join("\n")
}

export const initCommand = Command.make(
  "init",
  {
    format: Options.choice("format", ["txt", "json"]).pipe(Options.withDefault("txt" as const), Options.withDescription("pool.txt (flat, default) or pool.json")),
    force: Options.boolean("force").pipe(Options.withDescription("Overwrite an existing pool file (without --global/--project)")),
    global: Options.boolean("global").pipe(Options.withDescription("Add the plugin to your opencode config (~/.config/opencode/opencode.json[c]) and create the pool file if there is none")),
    project: Options.boolean("project").pipe(Options.withDescription("Add the plugin to this directory's opencode.json[c] and create the pool file if there is none")),
    dryRun: Options.boolean("dry-run").pipe(Options.withDescription("With --global/--project: print the unified diff of the config and write nothing")),
    remove: Options.boolean("remove").pipe(Options.withDescription("With --global/--project: take the plugin entry out of that config (uninstall); the pool file is kept")),
    json: Options.boolean("json").pipe(Options.withDescription('{"path","format","written"} on stdout; with --global/--project also "config":{"path","entry","changed","created","diff"}')),
    mcp: Options.choice("mcp", MCP_TARGETS).pipe(
      Options.optional,
      Options.withDescription("Add the heavy-work permits' MCP server (ocpool mcp) to that harness's user config (~/.claude.json, ~/.codex/config.toml, ~/.cursor/mcp.json), or print the snippets; with --remove take it out, --dry-run print the diff, --force replace a different 'ocpool' entry")
    )
  },
  (args) =>
    Effect.gen(function* () {
      if (args.global && args.project) return yield* new UsageProblem({ message: "init takes --global or --project, not both" })
      const io = yield* CurrentIo
      const ocpool = (line: string) => ocpoolLine(line, io.env)
      if (Option.isSome(args.mcp)) {
        if (args.global || args.project) return yield* new UsageProblem({ message: "--mcp goes without --global or --project", option: "--mcp" })
        if (args.mcp.value === "print") return yield* Console.log(mcpSnippets(io.env))
        const o = yield* initMcp(args.mcp.value, { remove: args.remove, force: args.force, dryRun: args.dryRun }, io.env.HOME, io.env)
        if (args.json) return yield* Console.log(printableJson(JSON.stringify(o)))
        return yield* Console.log(mcpReport(o, args.dryRun))
      }
      const target: InstallTarget | undefined = args.global ? "global" : args.project ? "project" : undefined
      if (target === undefined) {
        if (args.dryRun || args.remove) return yield* new UsageProblem({ message: "--dry-run and --remove go with --global or --project" })
        const path = yield* writePoolFile(args.format, args.force)
        if (args.json) yield* Console.log(JSON.stringify({ path, format: args.format, written: true }))
        else yield* Console.log(`wrote ${path}\nadd opencode-pool to your opencode config with: ${ocpool("init --global")} (or by hand: ${pluginLine()})`)
        return
      }
      const o = yield* install(target, { dryRun: args.dryRun, remove: args.remove }, () => writePoolFile(args.format, false), poolFileFor(args.format))
      if (args.json) yield* Console.log(printableJson(JSON.stringify({ path: o.pool.path ?? null, format: args.format, written: o.pool.written && !args.dryRun, config: o.config })))
      else yield* Console.log(installReport(o, target, args.dryRun, args.remove, ocpool))
    })
).pipe(
  Command.withDescription(
    "Without --global/--project: write the user pool file from the bundled preset (exit 1 if it exists and --force is absent). With --global or --project: add this installation's plugin entry to that opencode config (spliced into its bytes: comments, layout, line endings and every other byte kept; a symlink edited at its target; created when absent; never twice), create the pool file if there is none, and say what changed; a second run changes nothing. Ours are the package name opencode-pool[@version] and file:// URLs into an opencode-pool installation; such a URL into another installation (a checkout moved on from) is replaced by this one's, saying so. --dry-run prints the diff and writes nothing; --remove takes only those entries out. Exit 0; 1 when a file or directory cannot be written (one line naming it: read-only, over 1 MiB); 2 when the config is not valid JSONC or cannot be edited safely (two 'plugin' keys, nesting deeper than 256 levels; file:line:column), or the flags do not go together. With --mcp claude-code|codex|cursor: add the heavy-work permits' MCP server (ocpool mcp) to that harness's user config (~/.claude.json, ~/.codex/config.toml, ~/.cursor/mcp.json), edited in place: 'ocpool' when PATH finds this installation, else this installation's absolute command (saying so); an entry of ours that runs another installation is replaced; --remove takes only that entry out; print shows the snippets."
  )
)
