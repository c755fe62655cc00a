/** `ocpool init [--format txt|json] [--force] [--json]` (SPEC §12.2): writes the user's pool file from the bundled preset. */
import { Command, Options } from "@effect/cli"
import { Console, Effect } from "effect"
import { join } from "node:path"
import { BUILT_IN_SLOTS } from "../core/preset.js"
import { writeFileAtomic } from "../layers/atomicWrite.js"
import { dirReason, makeDir } from "../layers/dirs.js"
import { occupied } from "../layers/safeRead.js"
import { configDir } from "../layers/PoolConfigFile.js"
import { noHomeReason } from "../layers/xdg.js"
import { InitRefused, PathUnusable } from "./errors.js"

const PLUGIN_LINE = `"plugin": ["opencode-pool"]`

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

/**
 * Writes the pool file. Every directory or file problem is one typed failure naming the path and the
 * reason (exit 1): no home directory, a path component that is a file, no permission, a read-only disk.
 */
export const writePoolFile = (format: "txt" | "json", force: boolean, env: NodeJS.ProcessEnv = process.env) =>
  Effect.gen(function* () {
    const dir = configDir(env)
    if (dir === undefined) return yield* new PathUnusable({ path: "$XDG_CONFIG_HOME/opencode-pool", reason: noHomeReason("XDG_CONFIG_HOME") })
    const path = join(dir, format === "txt" ? "pool.txt" : "pool.json")
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

export const initCommand = Command.make(
  "init",
  {
    format: Options.choice("format", ["txt", "json"]).pipe(Options.withDefault("txt" as const), Options.withDescription("pool.txt (flat, default) or pool.json")),
    force: Options.boolean("force").pipe(Options.withDescription("Overwrite an existing pool file")),
    json: Options.boolean("json").pipe(Options.withDescription('{"path","format","written"} on stdout'))
  },
  (args) =>
    Effect.gen(function* () {
      const path = yield* writePoolFile(args.format, args.force)
      if (args.json) yield* Console.log(JSON.stringify({ path, format: args.format, written: true }))
      else yield* Console.log(`wrote ${path}\nadd to your opencode config (~/.config/opencode/opencode.json): ${PLUGIN_LINE}`)
    })
).pipe(
  Command.withDescription(
    "Write the user pool file from the bundled preset and print the plugin line for opencode. Exit 0; 1 if the file exists and --force is absent, or the config directory or file cannot be created (one line naming the path and the reason)."
  )
)
