/** `ocpool init [--format txt|json] [--force] [--json]` (SPEC §12.2): writes the user's pool file from the bundled preset. */
import { Command, Options } from "@effect/cli"
import { Console, Effect } from "effect"
import { existsSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { BUILT_IN_SLOTS } from "../core/preset.js"
import { configDir } from "../layers/PoolConfigFile.js"
import { InitRefused } from "./errors.js"

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

export const initCommand = Command.make(
  "init",
  {
    format: Options.choice("format", ["txt", "json"]).pipe(Options.withDefault("txt" as const), Options.withDescription("pool.txt (flat, default) or pool.json")),
    force: Options.boolean("force").pipe(Options.withDescription("Overwrite an existing pool file")),
    json: Options.boolean("json").pipe(Options.withDescription('{"path","format","written"} on stdout'))
  },
  (args) =>
    Effect.gen(function* () {
      const dir = configDir()
      const path = join(dir, args.format === "txt" ? "pool.txt" : "pool.json")
      if (existsSync(path) && !args.force) return yield* new InitRefused({ path })
      mkdirSync(dir, { recursive: true })
      const body = args.format === "txt" ? poolText(BUILT_IN_SLOTS) : `${JSON.stringify({ $comment: "opencode-pool slots, filled in this order; weight = fair share", slots: BUILT_IN_SLOTS }, null, 2)}\n`
      writeFileSync(path, body)
      if (args.json) yield* Console.log(JSON.stringify({ path, format: args.format, written: true }))
      else yield* Console.log(`wrote ${path}\nadd to your opencode config (~/.config/opencode/opencode.json): ${PLUGIN_LINE}`)
    })
).pipe(Command.withDescription("Write the user pool file from the bundled preset and print the plugin line for opencode. Exit 0; 1 if the file exists and --force is absent."))
